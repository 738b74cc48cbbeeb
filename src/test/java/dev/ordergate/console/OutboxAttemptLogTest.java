package dev.ordergate.console;

import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The V8_1 trigger against the relay's own statements (no relay runs here): a failed attempt and a
 * dead one are logged, a claim given back unattempted is not, nor a plain first-try delivery.
 */
class OutboxAttemptLogTest {

  private static TestApp app;

  @BeforeAll
  static void start() {
    app = TestApp.start(TestApp.baseConfig().put("outbox", new JsonObject().put("enabled", false)));
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static UUID event() {
    return app.rows("INSERT INTO outbox_events (type, order_no, payload) VALUES ('NOTIFY_SMS', 'O1', '{}') RETURNING id")
        .get(0).getUUID(0);
  }

  private static UUID claim(UUID id) {
    UUID token = UUID.randomUUID();
    app.pool.preparedQuery("UPDATE outbox_events SET claim_token = $2, claimed_by = 'relay-t', "
        + "claimed_until = now() + interval '1 minute' WHERE id = $1").execute(Params.of(id, token)).await();
    return token;
  }

  private static List<String> log(UUID id) {
    return app.rows("SELECT attempt || ' ' || outcome || ' ' || relay || ' ' || coalesce(error, '-') "
        + "FROM outbox_attempts WHERE event_id = $1 ORDER BY id", id).stream().map(r -> r.getString(0)).toList();
  }

  private static void fail(UUID id, UUID token, String error) {
    app.pool.preparedQuery(OutboxSql.MARK_FAILED)
        .execute(Params.of(id, token, error, 2, 10.0, 1000.0, "relay-t", 1)).await();
  }

  @Test
  void failedAndDeadAttemptsAreLoggedAReleasedClaimAndAFirstTryDeliveryAreNot() {
    UUID id = event();
    UUID token = claim(id);
    app.pool.preparedQuery(OutboxSql.RELEASE).execute(Params.of(new UUID[] {id}, token)).await();
    assertEquals(List.of(), log(id), "a claim given back unattempted is no attempt");

    fail(id, claim(id), "HTTP 502 from sink");
    fail(id, claim(id), "timeout");
    assertEquals(List.of("1 RETRY relay-t HTTP 502 from sink", "2 DEAD relay-t timeout"), log(id));

    UUID ok = event();
    UUID okToken = claim(ok);
    app.pool.query("UPDATE outbox_events SET attempts = 1, status = 'DELIVERED', delivered_at = now(), "
        + "claim_token = NULL, claimed_until = NULL WHERE id = '" + ok + "' AND claim_token = '" + okToken + "'")
        .execute().await();
    assertEquals(List.of(), log(ok), "a first-try delivery of a non-refund event logs nothing");
  }
}
