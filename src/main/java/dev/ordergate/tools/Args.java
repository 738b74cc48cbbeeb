package dev.ordergate.tools;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Plain {@code --name value} / {@code --flag} parsing; anything unknown is a usage error naming it.
 * Options that carry a secret ({@link #SECRET_ENV}) are also read from {@code --name-file FILE} or
 * the environment, because {@code ps} shows a command line to every user of the machine.
 */
final class Args {

  /** Secret-carrying options and the environment variable each falls back to. */
  static final Map<String, String> SECRET_ENV = Map.of("admin-token", "ORDERGATE_ADMIN_TOKEN",
      "api-key", "ORDERGATE_API_KEYS", "secret", "ORDERGATE_CHANNEL_SECRET", "db-url", "ORDERGATE_DB_URL");
  static final String SECRETS_HELP = """

      Secrets: give --admin-token, --api-key, --secret and --db-url as --admin-token-file FILE,
      --api-key-file FILE, --secret-file FILE, --db-url-file FILE (first line of the file), or in
      ORDERGATE_ADMIN_TOKEN, ORDERGATE_API_KEYS (its first key), ORDERGATE_CHANNEL_SECRET, ORDERGATE_DB_URL;
      on the command line they are visible to every user (ps).
      """;

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
  static Args parse(String[] argv, Set<String> valuedOptions, Set<String> flags) {
    Set<String> valued = new HashSet<>(valuedOptions);
    for (String name : valuedOptions) {
      if (SECRET_ENV.containsKey(name)) {
        valued.add(name + "-file");
      }
    }
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

  /**
   * A secret option: {@code --name-file FILE} (its first line), else {@code --name VALUE} (with a
   * warning on stderr), else its environment variable; null when none is given.
   */
  String secret(String name) {
    String file = values.get(name + "-file");
    if (file != null) {
      try {
        String first = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8).stream().findFirst().orElse("").strip();
        if (first.isEmpty()) {
          throw new UsageException("--" + name + "-file " + file + " is empty");
        }
        return first;
      } catch (IOException e) {
        throw new UsageException("--" + name + "-file " + file + " cannot be read (" + e.getClass().getSimpleName() + ")");
      }
    }
    String inline = values.get(name);
    if (inline != null) {
      System.err.println("warning: --" + name + " on the command line is visible to other users (ps); prefer --"
          + name + "-file or " + SECRET_ENV.get(name));
      return inline;
    }
    String env = System.getenv(SECRET_ENV.get(name));
    return env == null || env.isBlank() ? null : env.strip();
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
