package dev.ordergate.config;

import dev.ordergate.auth.PasswordHash;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConsoleConfigTest {

  private static JsonObject shipped() throws Exception {
    return new JsonObject(Files.readString(Path.of("conf/config.json")));
  }

  @Test
  void theShippedDevelopmentAccountSignsInWithItsDocumentedPasswordInDevModeOnly() throws Exception {
    AppConfig dev = AppConfig.from(shipped());
    var account = dev.console().operators().get("dev");
    assertTrue(account.devOnly());
    assertTrue(account.hash().matches("ordergate-dev-console".toCharArray()));
    assertFalse(account.hash().matches("ordergate-dev-consolE".toCharArray()));

    // The shipped file with a real database and the other development-only entries replaced.
    JsonObject production = shipped();
    production.getJsonObject("db").put("url", "postgresql://og@db.internal:5432/og");
    production.getJsonObject("payments").put("channels", new JsonObject());
    production.put("api", new JsonObject().put("keys", new io.vertx.core.json.JsonArray().add("prod-key-0123456789abcdef")));
    production.getJsonObject("admin").put("token", "prod-admin-token-0123456789");
    ConfigException e = assertThrows(ConfigException.class, () -> AppConfig.from(production));
    assertTrue(e.getMessage().contains("admin.operators.dev"), e.getMessage());

    // Without the flag, the published password itself is refused.
    production.getJsonObject("admin").getJsonObject("operators").getJsonObject("dev").remove("devOnly");
    e = assertThrows(ConfigException.class, () -> AppConfig.from(production));
    assertTrue(e.getMessage().contains("admin.operators.dev.passwordHash") && e.getMessage().contains("published"),
        e.getMessage());

    production.put("mode", "dev");
    assertEquals(1, AppConfig.from(production).console().operators().size());
  }

  @Test
  void aHashThatIsNotOursOrTooCheapStopsStartupNamingTheKey() {
    JsonObject bad = new JsonObject().put("admin", new JsonObject().put("operators", new JsonObject()
        .put("ops", new JsonObject().put("passwordHash", "plaintext-password"))));
    ConfigException e = assertThrows(ConfigException.class, () -> AppConfig.from(bad));
    assertTrue(e.getMessage().contains("admin.operators.ops.passwordHash"), e.getMessage());

    String cheap = PasswordHash.create("a long enough password".toCharArray(), 1000);
    bad.getJsonObject("admin").getJsonObject("operators").getJsonObject("ops").put("passwordHash", cheap);
    e = assertThrows(ConfigException.class, () -> AppConfig.from(bad));
    assertTrue(e.getMessage().contains("iterations"), e.getMessage());
  }

  @Test
  void hashesAreSaltedSoTheSamePasswordHashesDifferently() {
    String a = PasswordHash.create("same password here".toCharArray(), PasswordHash.MIN_ITERATIONS);
    String b = PasswordHash.create("same password here".toCharArray(), PasswordHash.MIN_ITERATIONS);
    assertFalse(a.equals(b));
    assertTrue(PasswordHash.parse(a).matches("same password here".toCharArray()));
    assertTrue(PasswordHash.parse(b).matches("same password here".toCharArray()));
  }
}
