package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static dev.ordergate.gate.LockStallTest.lock;
import static dev.ordergate.gate.LockStallTest.sleep;
import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Spare slots (issue 13): while one callback transaction runs, a second starts only for enough waiting
 * callbacks or once the oldest has waited long enough. The running transaction here is held on a row
 * lock ({@link LockStallTest#lock}: another connection has the order FOR UPDATE, as psql would), so what
 * the others do is visible.
 */
class SpareSlotTest extends AppTest {

  private SimpleMeterRegistry registry;

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10_000);
    registry = new SimpleMeterRegistry();
    app.createOrder(order("BLOCK", "u", null, "A", 1, 100));
    for (int i = 0; i < 10; i++) {
      app.createOrder(order("O" + i, "u", null, "A", 1, 100));
    }
  }

  private CallbackCoalescer coalescer(int spareMinBatch, long spareAfterMs) {
    return new CallbackCoalescer(app.verticle.paymentGate(), 256, 2, 10_000, 10_000, spareMinBatch, spareAfterMs,
        CallbackCoalescer.Scheduler.of(app.vertx), registry);
  }

  private static PaymentCallback pay(String orderNo) {
    return new PaymentCallback(TestApp.CHANNEL, "T-" + orderNo, orderNo, 100, "SUCCESS");
  }

  /**
   * Runs {@code body} while BLOCK's callback holds the coalescer's first slot on a row lock, then releases
   * the lock and checks that BLOCK's callback applies too.
   */
  private static void whileBlockHoldsASlot(CallbackCoalescer coalescer, Consumer<Future<CallbackResult>> body) {
    SqlConnection conn = app.pool.getConnection().await();
    try {
      Transaction tx = lock(conn, "BLOCK");
      Future<CallbackResult> blocked = coalescer.submit(pay("BLOCK"));
      body.accept(blocked);
      assertFalse(blocked.isComplete(), "the first transaction is still held");
      tx.rollback().await();
      assertEquals(CallbackOutcome.APPLIED, blocked.timeout(5, TimeUnit.SECONDS).await().outcome());
    } finally {
      conn.close().await();
    }
  }

  @Test
  void aSecondTransactionWaitsUntilEnoughCallbacksWait() {
    CallbackCoalescer coalescer = coalescer(8, 60_000);
    whileBlockHoldsASlot(coalescer, blocked -> {
      List<Future<CallbackResult>> others = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        others.add(coalescer.submit(pay("O" + i)));
      }
      sleep(400);
      assertEquals(7, coalescer.queued(), "seven waiting callbacks do not open the second slot");
      assertTrue(others.stream().noneMatch(Future::isComplete), "none of the seven ran beside the held transaction");
      others.add(coalescer.submit(pay("O7")));
      Future.all(others).timeout(2, TimeUnit.SECONDS).await();
      assertFalse(blocked.isComplete(), "the eighth opened the second slot while the first was still held");
      others.forEach(f -> assertEquals(CallbackOutcome.APPLIED, f.result().outcome()));
      assertEquals(8.0, registry.get("ordergate.callback.batch.size").summary().max(), "the eight went as one batch");
    });
  }

  @Test
  void aHeldSlotDelaysTheOthersByTheSpareWaitAndNoMore() {
    CallbackCoalescer coalescer = coalescer(16, 300);
    whileBlockHoldsASlot(coalescer, blocked -> {
      long t0 = System.nanoTime();
      // Nothing else arrives: the timer alone must open the spare slot.
      CallbackResult one = coalescer.submit(pay("O1")).timeout(2, TimeUnit.SECONDS).await();
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertEquals(CallbackOutcome.APPLIED, one.outcome());
      assertTrue(waitedMs >= 300, "answered after " + waitedMs + " ms: the spare slot opened before its wait");
    });
  }

  @Test
  void withSpareSlotsOffEveryCallbackStartsAtOnce() {
    CallbackCoalescer coalescer = coalescer(1, 60_000);
    whileBlockHoldsASlot(coalescer, blocked ->
        assertEquals(CallbackOutcome.APPLIED, coalescer.submit(pay("O1")).timeout(2, TimeUnit.SECONDS).await().outcome()));
  }
}
