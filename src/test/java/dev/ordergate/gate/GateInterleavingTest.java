package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.CancelOutcome;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.http.HttpMethod;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14, defect 6: the interleavings around the gate. A loser that reads a pending order (its
 * creation committed between the UPDATE and the read) goes through the gate once more instead of
 * failing with a 500; a failed batch is retried one by one within maxInFlight and in arrival order.
 */
class GateInterleavingTest extends AppTest {

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 100);
  }

  /** A hook that, the first time, creates order {@code orderNo} through the API and waits for its commit. */
  private static GateHook createOnce(String orderNo, AtomicBoolean fired) {
    return conn -> fired.getAndSet(true) ? Future.succeededFuture()
        : app.callAsync(HttpMethod.POST, "/api/orders", order(orderNo, "u1", null, "A", 1, 500), false)
            .map(resp -> {
              TestApp.expect(resp, 201);
              return (Void) null;
            });
  }

  private static PaymentGate gate(GateHook hook) {
    return TestApp.paymentGate(app.pool, new SimpleMeterRegistry(), hook);
  }

  @Test
  void aPaymentThatLostOnlyToTheOrdersCreationGoesThroughAgain() {
    AtomicBoolean fired = new AtomicBoolean();
    List<CallbackResult> r = gate(createOnce("LATE-BORN", fired))
        .apply(List.of(new PaymentCallback(TestApp.CHANNEL, "T1", "LATE-BORN", 500, "SUCCESS"))).await();
    assertTrue(fired.get());
    assertEquals(CallbackOutcome.APPLIED, r.get(0).outcome());
    assertEquals("PAID", app.getOrder("LATE-BORN").getString("status"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  void aCancelThatLostOnlyToTheOrdersCreationGoesThroughAgain() {
    AtomicBoolean fired = new AtomicBoolean();
    Metrics metrics = new Metrics(new SimpleMeterRegistry());
    CancelGate cancel = new CancelGate(app.pool,
        new CancellationEffects(new OutboxWriter(new OutboxSignal())), metrics, createOnce("LATE-BORN", fired));
    assertEquals(CancelOutcome.CANCELLED, cancel.cancel("LATE-BORN", TransitionSource.OPERATOR, "ops", "test")
        .await().outcome());
    assertEquals("CANCELLED", app.getOrder("LATE-BORN").getString("status"));
    assertEquals(100, app.stock("A"));
  }

  @Test
  void aFailedBatchIsRetriedOneByOneWithinMaxInFlightInArrivalOrder() {
    app.createOrder(order("BLOCK", "u", null, "A", 1, 100));
    app.createOrder(order("O1", "u", null, "A", 1, 100));
    app.createOrder(order("O2", "u", null, "A", 1, 100));
    AtomicInteger active = new AtomicInteger();
    AtomicInteger maxActive = new AtomicInteger();
    // Each transaction stays open 30 ms after its UPDATE, so overlapping ones would be seen.
    GateHook overlap = conn -> {
      maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
      Promise<Void> p = Promise.promise();
      app.vertx.setTimer(30, t -> {
        active.decrementAndGet();
        p.complete();
      });
      return p.future();
    };
    app.pool.query("ALTER TABLE payment_receipts ADD CONSTRAINT test_poison CHECK (txn_id <> 'POISON')").execute().await();
    try {
      CallbackCoalescer coalescer = new CallbackCoalescer(gate(overlap), 256, 1, new SimpleMeterRegistry());
      List<Future<CallbackResult>> answers = new ArrayList<>();
      answers.add(coalescer.submit(new PaymentCallback(TestApp.CHANNEL, "B1", "BLOCK", 100, "SUCCESS")));
      // These queue behind BLOCK and share one batch, which the poisoned one fails.
      answers.add(coalescer.submit(new PaymentCallback(TestApp.CHANNEL, "POISON", "O2", 100, "SUCCESS")));
      answers.add(coalescer.submit(new PaymentCallback(TestApp.CHANNEL, "T9", "O1", 99, "SUCCESS")));
      answers.add(coalescer.submit(new PaymentCallback(TestApp.CHANNEL, "T5", "O1", 100, "SUCCESS")));
      answers.add(coalescer.submit(new PaymentCallback(TestApp.CHANNEL, "T1", "O1", 100, "SUCCESS")));
      Future.join(answers).otherwiseEmpty().await();
      assertTrue(answers.get(1).failed(), "the poisoned callback fails alone");
      assertEquals(CallbackOutcome.AMOUNT_MISMATCH, answers.get(2).result().outcome());
      assertEquals(CallbackOutcome.APPLIED, answers.get(3).result().outcome());
      assertEquals(CallbackOutcome.DOUBLE_PAYMENT, answers.get(4).result().outcome());
      assertEquals("T5", app.getOrder("O1").getString("paidTxnId"));
      assertEquals(1, maxActive.get(), "one transaction at a time (maxInFlight 1), in isolation too");
    } finally {
      app.pool.query("ALTER TABLE payment_receipts DROP CONSTRAINT test_poison").execute().await();
    }
  }
}
