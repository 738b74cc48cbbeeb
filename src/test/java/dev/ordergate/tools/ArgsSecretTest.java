package dev.ordergate.tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The tools take their secrets from a file (or the environment), not only from the command line. */
class ArgsSecretTest {

  @TempDir
  Path dir;

  private static Args parse(String... argv) {
    return Args.parse(argv, Set.of("url", "admin-token", "secret", "db-url"), Set.of());
  }

  @Test
  void aSecretComesFromItsFileFirst() throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "  file-token-7f3a9c  \nsecond line ignored\n");
    Args args = parse("--admin-token-file", token.toString(), "--admin-token", "inline", "--url", "http://x");
    assertEquals("file-token-7f3a9c", args.secret("admin-token"));
    assertEquals("inline-secret", parse("--secret=inline-secret").secret("secret"));
  }

  @Test
  void aMissingOrEmptyFileIsAUsageErrorThatDoesNotShowItsContent() throws Exception {
    var missing = assertThrows(Args.UsageException.class,
        () -> parse("--secret-file", dir.resolve("nope").toString()).secret("secret"));
    assertTrue(missing.getMessage().contains("--secret-file"), missing.getMessage());
    Path empty = Files.writeString(dir.resolve("empty"), "\n");
    assertThrows(Args.UsageException.class, () -> parse("--db-url-file", empty.toString()).secret("db-url"));
  }

  @Test
  void withoutOptionTheEnvironmentIsAsked() {
    // ORDERGATE_CHANNEL_SECRET is not set in the test environment: absent means null, not a default.
    if (System.getenv("ORDERGATE_CHANNEL_SECRET") == null) {
      assertNull(parse().secret("secret"));
    } else {
      assertEquals(System.getenv("ORDERGATE_CHANNEL_SECRET").strip(), parse().secret("secret"));
    }
    assertFalse(Args.SECRETS_HELP.isBlank());
    // Only secret-carrying options get a -file twin.
    assertThrows(Args.UsageException.class, () -> parse("--url-file", "x"));
  }
}
