package dev.ordergate.http;

import dev.ordergate.OrdergateVerticle;
import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import io.vertx.core.http.HttpClient;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seeded fuzz run ({@link Fuzzer}) against every route: no 5xx, no 2xx, the database
 * byte-identical. Its twin runs the same fuzzer against the service with its input guard removed
 * and must catch it: proof that the fuzzer can fail.
 */
class FuzzTest {

  static final long SEED = 15;

  private static Fuzzer.Result fuzz(TestApp app, int requests) {
    HttpClient client = Hostile.client(app);
    try {
      Hostile.Fixture fixture = Hostile.setUp(app);
      return new Fuzzer(app, client, Hostile.routes(fixture), SEED).run(requests, 16);
    } finally {
      client.close().await();
    }
  }

  private static JsonObject config() {
    // No relay: its retries would change outbox rows while the fuzzer compares the database.
    return TestApp.baseConfig().put("outbox", new JsonObject().put("enabled", false));
  }

  @Test
  void hostileRequestsGetNo5xxNo2xxAndChangeNoRow() {
    try (TestApp app = TestApp.start(config())) {
      Fuzzer.Result result = fuzz(app, 3000);
      System.out.println("fuzz (guarded): " + result);
      assertTrue(result.clean(), result.toString());
    }
  }

  @Test
  void theFuzzerCatchesTheServiceWithoutItsInputGuard() {
    try (TestApp app = TestApp.start(config(), TestDatabase.freshDatabase(), null,
        OrdergateVerticle::withoutInputGuard)) {
      Fuzzer.Result result = fuzz(app, 600);
      System.out.println("fuzz (unguarded twin): " + result);
      assertFalse(result.clean(), "the fuzzer did not notice the missing validation: " + result);
      assertTrue(result.serverErrors() > 0 || !result.databaseUnchanged(), result.toString());
    }
  }
}
