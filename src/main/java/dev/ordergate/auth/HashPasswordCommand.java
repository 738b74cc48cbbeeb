package dev.ordergate.auth;

import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * {@code ordergate hash-password}: reads a password (twice, without echo, on a terminal; else the
 * first line of standard input) and prints its hash for {@code admin.operators.<name>.passwordHash}.
 * Exit 0 on success, 2 on a usage error.
 */
public final class HashPasswordCommand {

  static final int MIN_LENGTH = 12;

  private HashPasswordCommand() {
  }

  public static int run(String[] args, PrintStream out, PrintStream err) throws IOException {
    int iterations = PasswordHash.DEFAULT_ITERATIONS;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--help" -> {
          out.println("usage: ordergate hash-password [--iterations N]   (password on a terminal or stdin)");
          out.println("prints a PBKDF2WithHmacSHA256 hash for admin.operators.<name>.passwordHash in conf/config.json");
          return 0;
        }
        case "--iterations" -> {
          if (i + 1 >= args.length || !args[i + 1].matches("\\d{6,9}")
              || Integer.parseInt(args[i + 1]) < PasswordHash.MIN_ITERATIONS) {
            err.println("hash-password: --iterations needs a number of at least " + PasswordHash.MIN_ITERATIONS);
            return 2;
          }
          iterations = Integer.parseInt(args[++i]);
        }
        default -> {
          err.println("hash-password: unknown option " + args[i] + " (see --help)");
          return 2;
        }
      }
    }
    char[] password = readPassword(err);
    try {
      if (password == null || password.length < MIN_LENGTH) {
        err.println("hash-password: the password must have at least " + MIN_LENGTH + " characters");
        return 2;
      }
      out.println(PasswordHash.create(password, iterations));
      return 0;
    } finally {
      if (password != null) {
        Arrays.fill(password, '\0');
      }
    }
  }

  private static char[] readPassword(PrintStream err) throws IOException {
    Console console = System.console();
    if (console != null) {
      char[] first = console.readPassword("password: ");
      char[] second = console.readPassword("again: ");
      if (first == null || !Arrays.equals(first, second)) {
        err.println("hash-password: the two entries differ");
        return null;
      }
      Arrays.fill(second, '\0');
      return first;
    }
    String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    return line == null ? null : line.toCharArray();
  }
}
