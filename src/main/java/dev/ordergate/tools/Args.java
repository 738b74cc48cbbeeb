package dev.ordergate.tools;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Plain {@code --name value} / {@code --flag} parsing; anything unknown is a usage error naming it. */
final class Args {

  /** A command line we cannot use; the message says why, and the command prints its help. */
  static final class UsageException extends RuntimeException {
    UsageException(String message) {
      super(message, null, false, false);
    }
  }

  private final Map<String, String> values = new HashMap<>();
  private final List<String> positional = new ArrayList<>();

  private Args() {
  }

  /** {@code valued} take a value; {@code flags} do not. {@code --help} is always a flag. */
  static Args parse(String[] argv, Set<String> valued, Set<String> flags) {
    Args a = new Args();
    for (int i = 0; i < argv.length; i++) {
      String arg = argv[i];
      if (!arg.startsWith("--")) {
        a.positional.add(arg);
        continue;
      }
      String name = arg.substring(2);
      String inline = null;
      int eq = name.indexOf('=');
      if (eq > 0) {
        inline = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (name.equals("help") || flags.contains(name)) {
        a.values.put(name, "true");
      } else if (valued.contains(name)) {
        if (inline == null && i + 1 >= argv.length) {
          throw new UsageException("--" + name + " needs a value");
        }
        a.values.put(name, inline != null ? inline : argv[++i]);
      } else {
        throw new UsageException("unknown option --" + name);
      }
    }
    return a;
  }

  boolean has(String name) {
    return values.containsKey(name);
  }

  boolean help() {
    return has("help");
  }

  String string(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  List<String> positional() {
    return positional;
  }

  long integer(String name, long fallback, long min, long max) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    long n;
    try {
      n = Long.parseLong(v.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a whole number, got " + v);
    }
    if (n < min || n > max) {
      throw new UsageException("--" + name + " must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }

  int intValue(String name, int fallback, int min, int max) {
    return (int) integer(name, fallback, min, max);
  }

  double decimal(String name, double fallback, double min, double max) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    double d;
    try {
      d = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a number, got " + v);
    }
    if (d < min || d > max) {
      throw new UsageException("--" + name + " must be between " + min + " and " + max + ", got " + v);
    }
    return d;
  }
}
