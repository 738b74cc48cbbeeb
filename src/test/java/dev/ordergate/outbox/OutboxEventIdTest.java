package dev.ordergate.outbox;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13 (V17): the events a paid order writes carry time-ordered ids (RFC 9562 version 7), so that the
 * primary key takes them at its right end instead of at a random leaf.
 */
class OutboxEventIdTest extends AppTest {

  /**
   * Three batches of first payments, a few milliseconds apart: every event's id is a version 7 UUID of the
   * IETF variant, its time is the wall clock's at the insert, ids are unique, and along seq (one writer) the
   * time never goes back and the counter in rand_b always goes up. Fails with the random ids of before V17
   * (version 4).
   */
  @Test
  void aPaidOrdersEventsHaveTimeOrderedIds() throws InterruptedException {
    app.rows("""
        INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
        SELECT 'V7-' || g, 'u', 'PENDING_PAYMENT', 100, 'h', now() + interval '1 day' FROM generate_series(0, 29) g""");
    long before = System.currentTimeMillis();
    for (int b = 0; b < 3; b++) {
      List<PaymentCallback> batch = new ArrayList<>();
      for (int i = b * 10; i < (b + 1) * 10; i++) {
        batch.add(new PaymentCallback(TestApp.CHANNEL, "TV7-" + i, "V7-" + i, 100, "SUCCESS"));
      }
      assertTrue(app.verticle.paymentGate().apply(batch).await().stream()
          .allMatch(r -> r.outcome() == CallbackOutcome.APPLIED));
      Thread.sleep(5);
    }
    long after = System.currentTimeMillis();

    List<Row> events = app.rows("SELECT id, seq FROM outbox_events_shown WHERE order_no LIKE 'V7-%' ORDER BY seq");
    assertEquals(60, events.size(), "ORDER_PAID and NOTIFY_SMS for each of 30 orders");
    Set<UUID> seen = new HashSet<>();
    long lastMs = 0;
    long lastCounter = -1;
    for (Row row : events) {
      UUID id = row.getUUID("id");
      assertEquals(7, id.version(), id + " is a version 7 UUID");
      assertEquals(2, id.variant(), id + " is of the IETF variant");
      long ms = id.getMostSignificantBits() >>> 16;
      assertTrue(ms >= before - 1000 && ms <= after + 1000, id + ": its time " + ms + " is the insert's");
      assertTrue(ms >= lastMs, id + ": time goes on along seq");
      long counter = id.getLeastSignificantBits() & 0x3FFF_FFFF_FFFF_FFFFL;
      assertTrue(counter > lastCounter, id + ": the counter goes up along seq");
      assertTrue(seen.add(id), id + " is unique");
      lastMs = ms;
      lastCounter = counter;
    }
  }
}
