package dev.ordergate.outbox;

import dev.ordergate.db.Rows;
import dev.ordergate.support.AppTest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 13: a webhook envelope carries the event's payload as the database wrote it (the relay's statements
 * answer {@code payload::text}); it is neither decoded nor encoded again on the way. The envelope is written by
 * hand, so these check that it is the JSON it was: the same fields, the payload equal to the stored one, the
 * order number escaped, a batch an array of envelopes in order.
 */
class OutboxEnvelopeTest extends AppTest {

  private static final String PAYLOAD = """
      {"orderNo": "Q\\"1\\\\x", "note": "订单 ✓ \\u0001", "amount": 12.50, "big": 9007199254740993,
       "items": [{"sku": "A", "qty": 2}], "none": null, "ok": true}""";

  private List<OutboxEvent> events(String prefix, int n) {
    app.rows("""
        INSERT INTO outbox_events (type, order_no, payload)
        SELECT 'ORDER_PAID', $3 || '"1\\x-' || g, ($1::text)::jsonb FROM generate_series(1, $2::int) g""", PAYLOAD, n, prefix);
    List<OutboxEvent> out = new ArrayList<>();
    // The columns of the relay's claim, payload as text.
    for (Row r : app.rows("""
        SELECT id, seq, type, order_no, payload::text AS payload, attempts, created_at FROM outbox_events_shown
        WHERE starts_with(order_no, $1) ORDER BY seq""", prefix + '"')) {
      out.add(OutboxEvent.of(r));
    }
    return out;
  }

  private static void assertEnvelope(OutboxEvent e, JsonObject envelope) {
    JsonObject stored = (JsonObject) app.rows("SELECT payload FROM outbox_events_shown WHERE id = $1", e.id()).get(0)
        .getValue("payload");
    assertEquals(new JsonObject()
        .put("eventId", e.id().toString())
        .put("type", "ORDER_PAID")
        .put("orderNo", e.orderNo())
        .put("payload", stored)
        .put("createdAt", Rows.instant(e.createdAt())), envelope);
    assertEquals(9007199254740993L, envelope.getJsonObject("payload").getLong("big"), "no precision lost");
  }

  @Test
  void anEnvelopeIsTheJsonOfTheEventWithItsStoredPayload() {
    OutboxEvent e = events("Q", 1).get(0);
    assertEquals("Q\"1\\x-1", e.orderNo());
    assertEnvelope(e, new JsonObject(e.envelope()));
    assertEquals("Q\"1\\x", e.payload().getString("orderNo"), "payload() decodes it");
  }

  @Test
  void aBatchIsAnArrayOfEnvelopesInOrder() {
    List<OutboxEvent> events = events("B", 3);
    List<Buffer> bodies = new ArrayList<>();
    Context context = app.vertx.getOrCreateContext();
    SinkBatches batches = new SinkBatches(context, (url, key, body, deadline) -> {
      bodies.add(body);
      return Future.succeededFuture();
    });
    Promise<Void> all = Promise.promise();
    context.runOnContext(v -> Future.all(events.stream()
            .map(e -> batches.deliver("http://receiver/", 10, e, 5_000)).toList())
        .<Void>mapEmpty().onComplete(all));
    all.future().await();
    assertEquals(1, bodies.size(), "one POST for the three");
    JsonArray sent = new JsonObject(bodies.get(0)).getJsonArray("events");
    assertEquals(3, sent.size());
    for (int i = 0; i < 3; i++) {
      assertEnvelope(events.get(i), sent.getJsonObject(i));
    }
  }
}
