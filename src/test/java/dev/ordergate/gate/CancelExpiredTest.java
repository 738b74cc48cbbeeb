package dev.ordergate.gate;

import dev.ordergate.domain.ExpiryCancel;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.support.AppTest;
import dev.ordergate.sweep.SweepFixtures;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The timeout triggers' exit: conditional on status and expiry in one UPDATE, one answer per order. */
class CancelExpiredTest extends AppTest {

  private CancelGate gate;

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 100);
    gate = new CancelGate(app.pool, new CancellationEffects(new OutboxWriter(new OutboxSignal())), new Metrics(app.registry));
  }

  @Test
  void cancelsOnlyExpiredPendingOrdersAndSaysWhyNotTheOthers() {
    app.createOrder(order("EXP", "u1", null, "A", 3, 100).put("paymentTimeoutSeconds", 1));
    long paidAmount = app.createOrder(order("PAID", "u2", null, "A", 1, 100).put("paymentTimeoutSeconds", 1))
        .getLong("amountCents");
    app.callback(payment("T-PAID", "PAID", paidAmount));
    app.createOrder(order("LATER", "u3", null, "A", 1, 100).put("paymentTimeoutSeconds", 3600));
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10),
        () -> app.count("SELECT count(*) FROM orders WHERE order_no = 'EXP' AND expires_at <= now()") == 1));

    Map<String, ExpiryCancel> r = gate.cancelExpired(List.of("EXP", "PAID", "LATER", "NOPE", "EXP"),
        TransitionSource.TIMEOUT_MESSAGE, "test", "ref").await();

    assertEquals(4, r.size(), "one answer per distinct order: " + r);
    assertEquals(ExpiryCancel.Kind.CANCELLED, r.get("EXP").kind());
    assertTrue(r.get("EXP").latenessSeconds() >= 0);
    assertEquals(ExpiryCancel.Kind.CLOSED, r.get("PAID").kind());
    assertEquals(ExpiryCancel.Kind.NOT_DUE, r.get("LATER").kind());
    assertTrue(r.get("LATER").dueInMs() > 3_500_000, "time left until expiry: " + r.get("LATER").dueInMs());
    assertEquals(ExpiryCancel.Kind.NOT_FOUND, r.get("NOPE").kind());
    assertEquals("TIMEOUT_MESSAGE", app.getOrder("EXP").getString("closedBy"));
    assertEquals("PENDING_PAYMENT", app.getOrder("LATER").getString("status"));
    assertEquals(100 - 1 - 1, app.stock("A"), "EXP's 3 back; PAID and LATER keep theirs");

    // Again: the trigger's repeat changes nothing.
    Map<String, ExpiryCancel> again = gate.cancelExpired(List.of("EXP"), TransitionSource.TIMEOUT_MESSAGE, "test", "ref").await();
    assertEquals(ExpiryCancel.Kind.CLOSED, again.get("EXP").kind());
    assertEquals(1, app.count("SELECT count(*) FROM order_transitions WHERE order_no = 'EXP' AND source = 'TIMEOUT_MESSAGE'"));
    assertEquals(1, app.count("SELECT count(*) FROM outbox_events_shown WHERE order_no = 'EXP' AND type = 'ORDER_CANCELLED'"));
  }

  @Test
  void aDueOrderHeldByAnotherTransactionIsSkippedNotWaitedFor() {
    app.createOrder(order("HELD", "u1", null, "A", 1, 100).put("paymentTimeoutSeconds", 1));
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(10),
        () -> app.count("SELECT count(*) FROM orders WHERE order_no = 'HELD' AND expires_at <= now()") == 1));
    // A transaction holding the row, as a payment in flight does.
    var holder = app.pool.getConnection().await();
    try {
      var tx = holder.begin().await();
      holder.query("SELECT 1 FROM orders WHERE order_no = 'HELD' FOR UPDATE").execute().await();
      Map<String, ExpiryCancel> busy = gate.cancelExpired(List.of("HELD"), TransitionSource.TIMEOUT_MESSAGE, "t", "r").await();
      assertEquals(ExpiryCancel.Kind.BUSY, busy.get("HELD").kind());
      tx.rollback().await();
    } finally {
      holder.close().await();
    }
    Map<String, ExpiryCancel> after = gate.cancelExpired(List.of("HELD"), TransitionSource.TIMEOUT_MESSAGE, "t", "r").await();
    assertEquals(ExpiryCancel.Kind.CANCELLED, after.get("HELD").kind());
  }
}
