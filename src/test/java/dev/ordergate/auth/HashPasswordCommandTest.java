package dev.ordergate.auth;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ordergate hash-password} (scripts/hash-password) with the password on standard input. */
class HashPasswordCommandTest {

  private record Run(int exit, String out, String err) {}

  private static Run run(String stdin, String... args) throws Exception {
    InputStream before = System.in;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
      int exit = HashPasswordCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
          new PrintStream(err, true, StandardCharsets.UTF_8));
      return new Run(exit, out.toString(StandardCharsets.UTF_8).trim(), err.toString(StandardCharsets.UTF_8));
    } finally {
      System.setIn(before);
    }
  }

  @Test
  void printsAHashThatTheConfigAcceptsAndThatMatchesThePassword() throws Exception {
    Run r = run("a long operator passphrase\n", "--iterations", "100000");
    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().startsWith("pbkdf2-sha256$100000$"), r.out());
    PasswordHash hash = PasswordHash.parse(r.out());
    assertTrue(hash.matches("a long operator passphrase".toCharArray()));
    assertTrue(!hash.matches("a long operator passphrasE".toCharArray()));
  }

  @Test
  void refusesShortPasswordsAndCheapIterationCounts() throws Exception {
    Run shortOne = run("short\n");
    assertEquals(2, shortOne.exit());
    assertTrue(shortOne.err().contains("at least 12"), shortOne.err());
    assertEquals("", shortOne.out());
    assertEquals(2, run("a long operator passphrase\n", "--iterations", "5000").exit());
    assertEquals(2, run("a long operator passphrase\n", "--bogus").exit());
  }
}
