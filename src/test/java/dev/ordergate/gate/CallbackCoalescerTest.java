package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Group commit answers each caller exactly as one-by-one processing would. */
class CallbackCoalescerTest extends AppTest {

  private SimpleMeterRegistry registry;
  private CallbackCoalescer coalescer;

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10_000);
    registry = new SimpleMeterRegistry();
    // One transaction at a time: everything submitted while it runs goes into the next batch.
    coalescer = new CallbackCoalescer(app.verticle.paymentGate(), 256, 1, registry);
  }

  private static PaymentCallback pay(String txn, String orderNo, long amount) {
    return new PaymentCallback(TestApp.CHANNEL, txn, orderNo, amount, "SUCCESS");
  }

  private long maxBatch() {
    return (long) registry.get("ordergate.callback.batch.size").summary().max();
  }

  @Test
  void aBurstIsBatchedAndEveryCallerGetsItsOwnAnswer() {
    for (int i = 0; i < 40; i++) {
      app.createOrder(order("O" + i, "u", null, "A", 1, 100));
    }
    List<PaymentCallback> sent = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      sent.add(pay("T" + i, "O" + i, 100));          // applies
      sent.add(pay("T" + i, "O" + i, 100));          // duplicate inside the burst
      sent.add(pay("X" + i, "O" + i, 100));          // a second transaction: double payment
    }
    sent.add(pay("M1", "NOPE", 100));                // unknown order
    List<Future<CallbackResult>> answers = new ArrayList<>();
    sent.forEach(cb -> answers.add(coalescer.submit(cb)));
    Future.join(answers).await();

    assertTrue(maxBatch() > 1, "callbacks that queued behind a transaction went in one batch");
    for (int i = 0; i < 40; i++) {
      CallbackResult first = answers.get(3 * i).result();
      CallbackResult dup = answers.get(3 * i + 1).result();
      CallbackResult second = answers.get(3 * i + 2).result();
      assertEquals(CallbackOutcome.APPLIED, first.outcome());
      assertFalse(first.duplicate());
      assertEquals(CallbackOutcome.APPLIED, dup.outcome());
      assertTrue(dup.duplicate());
      assertEquals(CallbackOutcome.DOUBLE_PAYMENT, second.outcome());
    }
    assertEquals(CallbackOutcome.UNKNOWN_ORDER, answers.get(120).result().outcome());
    assertEquals(40, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    assertEquals(40, app.count("SELECT count(*) FROM order_transitions WHERE to_status = 'PAID'"));
    assertEquals(41, app.count("SELECT count(*) FROM exception_orders"));
    assertEquals(40, app.count("SELECT count(*) FROM outbox_events_shown WHERE type = 'ORDER_PAID'"));
    assertEquals(40, app.count("SELECT count(DISTINCT order_no) FROM outbox_events_shown WHERE type = 'ORDER_PAID'"));
  }

  @Test
  void aBatchAnswersLikeOneByOneForOneOrder() {
    app.createOrder(order("O1", "u", null, "A", 1, 100));
    app.createOrder(order("BLOCK", "u", null, "A", 1, 100));
    // The first callback runs alone; the next three queue and share one transaction, in arrival order.
    List<Future<CallbackResult>> answers = new ArrayList<>();
    answers.add(coalescer.submit(pay("B1", "BLOCK", 100)));
    // Transaction ids sort against arrival order, so the test also shows arrival order is kept.
    answers.add(coalescer.submit(pay("T9", "O1", 99)));   // wrong amount first
    answers.add(coalescer.submit(pay("T5", "O1", 100)));  // then the right one: applies
    answers.add(coalescer.submit(pay("T1", "O1", 100)));  // then another: double payment
    Future.join(answers).await();
    assertEquals(CallbackOutcome.AMOUNT_MISMATCH, answers.get(1).result().outcome());
    assertEquals(CallbackOutcome.APPLIED, answers.get(2).result().outcome());
    assertEquals(CallbackOutcome.DOUBLE_PAYMENT, answers.get(3).result().outcome());
    assertEquals("T5", app.getOrder("O1").getString("paidTxnId"));
  }

  /**
   * The claiming statement tries each order's first SUCCESS of the batch. When that one is a duplicate (its
   * receipt was claimed by an earlier batch), the order's next SUCCESS is the first to go through the gate,
   * and the one after it loses to it: as one by one.
   */
  @Test
  void anOrdersFirstSuccessThatIsADuplicateLeavesTheGateToTheNext() {
    app.createOrder(order("O2", "u", null, "A", 1, 100));
    PaymentGate gate = app.verticle.paymentGate();
    assertEquals(CallbackOutcome.AMOUNT_MISMATCH, gate.apply(List.of(pay("T7", "O2", 99))).await().get(0).outcome());
    List<CallbackResult> answers = gate.apply(List.of(pay("T7", "O2", 99), pay("T3", "O2", 100), pay("T4", "O2", 100)))
        .await();
    assertEquals(CallbackOutcome.AMOUNT_MISMATCH, answers.get(0).outcome());
    assertTrue(answers.get(0).duplicate());
    assertEquals(CallbackOutcome.APPLIED, answers.get(1).outcome());
    assertEquals(CallbackOutcome.DOUBLE_PAYMENT, answers.get(2).outcome());
    assertEquals("T3", app.getOrder("O2").getString("paidTxnId"));
    assertEquals("AMOUNT_MISMATCH,APPLIED,DOUBLE_PAYMENT", app.rows(
        "SELECT string_agg(outcome, ',' ORDER BY id) FROM payment_receipts WHERE order_no = 'O2'")
        .get(0).getString(0));
  }

  @Test
  void onePoisonedCallbackFailsAloneAndTheOthersAreAnswered() {
    app.pool.query("ALTER TABLE payment_receipts ADD CONSTRAINT test_poison CHECK (txn_id <> 'POISON')").execute().await();
    try {
      for (int i = 0; i < 10; i++) {
        app.createOrder(order("O" + i, "u", null, "A", 1, 100));
      }
      List<Future<CallbackResult>> answers = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        answers.add(coalescer.submit(pay(i == 5 ? "POISON" : "T" + i, "O" + i, 100)));
      }
      Future.join(answers).otherwiseEmpty().await();
      for (int i = 0; i < 10; i++) {
        if (i == 5) {
          assertTrue(answers.get(i).failed(), "the poisoned callback fails (the gateway will retry it)");
        } else {
          assertEquals(CallbackOutcome.APPLIED, answers.get(i).result().outcome(), "callback " + i);
        }
      }
      assertEquals("PENDING_PAYMENT", app.getOrder("O5").getString("status"));
      assertEquals(9, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    } finally {
      app.pool.query("ALTER TABLE payment_receipts DROP CONSTRAINT test_poison").execute().await();
    }
  }
}
