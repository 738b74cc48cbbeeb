package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.http.HttpMethod;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: a batch of first payments goes through the gate as one statement without {@code BEGIN} and
 * {@code COMMIT} ({@code Sql.CLAIM_AND_PAY_ALL}). It commits only if every callback won; when one loses, the
 * statement undoes itself whole (V21's {@code gate_all_won}) and the batch goes again in a transaction, which
 * answers and writes exactly what it always did. Each test reads, besides the answers, the rows a statement that
 * had committed in spite of its loser would have left: a receipt APPLIED for a cancelled order, a delivery
 * counted twice.
 */
class GateWholeStatementTest extends AppTest {

  private SimpleMeterRegistry registry;
  private PaymentGate gate;

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 100);
    registry = new SimpleMeterRegistry();
    gate = TestApp.paymentGate(app.verticle.pool(), registry, GateHook.NONE);
  }

  @Test
  void aBatchOfFirstPaymentsThatAllWinIsOneStatement() {
    for (String o : List.of("O1", "O2", "O3")) {
      app.createOrder(order(o, "u1", null, "A", 1, 500));
    }
    List<CallbackResult> results = gate.apply(List.of(pay("T1", "O1"), pay("T2", "O2"), pay("T3", "O3"))).await();

    assertTrue(results.stream().allMatch(r -> r.outcome() == CallbackOutcome.APPLIED && !r.duplicate()), results::toString);
    assertEquals(Map.of("statement", 1.0), batches());
    assertEquals(3, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    assertEquals(3, app.count("SELECT count(*) FROM payment_receipts WHERE outcome = 'APPLIED' AND order_status = 'PAID'"));
    assertEquals(3, app.count("SELECT count(*) FROM payment_notifications WHERE deliveries = 1"));
    assertEquals(6, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_PAID', 'NOTIFY_SMS')"));
    assertEquals(3, app.count("SELECT count(*) FROM order_transitions WHERE to_status = 'PAID' AND source = 'PAYMENT_CALLBACK'"));
  }

  @Test
  void aLoserUndoesTheStatementAndTheBatchGoesAgainInATransaction() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));
    app.createOrder(order("O3", "u1", null, "A", 1, 500));
    expect(app.call(HttpMethod.POST, "/api/orders/O2/cancel", null, false), 200);

    List<CallbackResult> results = gate.apply(List.of(pay("T1", "O1"), pay("T2", "O2"), pay("T3", "O3"))).await();

    assertEquals(List.of(CallbackOutcome.APPLIED, CallbackOutcome.LATE_AFTER_CANCEL, CallbackOutcome.APPLIED),
        results.stream().map(CallbackResult::outcome).toList());
    assertEquals(Map.of("again", 1.0), batches());
    assertEquals("CANCELLED", app.getOrder("O2").getString("status"));
    assertEquals("LATE_AFTER_CANCEL", app.rows("SELECT outcome FROM payment_receipts WHERE txn_id = 'T2'").get(0).getString(0));
    assertEquals(2, app.count("SELECT count(*) FROM payment_receipts WHERE outcome = 'APPLIED'"));
    // Written once: the undone statement's rows are gone, not added to.
    assertEquals(3, app.count("SELECT count(*) FROM payment_notifications WHERE deliveries = 1"));
    assertEquals(3, app.count("SELECT count(*) FROM payment_notifications"));
    assertEquals(4, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_PAID', 'NOTIFY_SMS') "
        + "AND order_no IN ('O1', 'O3')"));
    assertEquals(0, app.count("SELECT count(*) FROM outbox_events WHERE type = 'ORDER_PAID' AND order_no = 'O2'"));
    assertEquals(2, app.count("SELECT count(*) FROM order_transitions WHERE to_status = 'PAID'"));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE order_no = 'O2'"));
  }

  @Test
  void aKeyReceivedBeforeUndoesTheStatementAndIsAnsweredItsFirstAnswer() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));
    assertEquals(CallbackOutcome.APPLIED, gate.apply(List.of(pay("T1", "O1"))).await().get(0).outcome());

    List<CallbackResult> results = gate.apply(List.of(pay("T1", "O1"), pay("T2", "O2"))).await();

    assertEquals(CallbackOutcome.APPLIED, results.get(0).outcome());
    assertTrue(results.get(0).duplicate(), results::toString);
    assertEquals(CallbackOutcome.APPLIED, results.get(1).outcome());
    assertFalse(results.get(1).duplicate(), results::toString);
    assertEquals(Map.of("statement", 1.0, "again", 1.0), batches());
    assertEquals(2, app.rows("SELECT deliveries FROM payment_notifications WHERE txn_id = 'T1'").get(0).getInteger(0));
    assertEquals(1, app.rows("SELECT deliveries FROM payment_notifications WHERE txn_id = 'T2'").get(0).getInteger(0));
    assertEquals(4, app.count("SELECT count(*) FROM outbox_events WHERE type IN ('ORDER_PAID', 'NOTIFY_SMS')"));
    assertEquals(0, app.count("SELECT count(*) FROM exception_orders"));
  }

  @Test
  void anAmountThatDiffersUndoesTheStatementAndOpensAnException() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));

    List<CallbackResult> results = gate.apply(List.of(pay("T1", "O1"),
        new PaymentCallback(TestApp.CHANNEL, "T2", "O2", 499, PaymentCallback.SUCCESS))).await();

    assertEquals(List.of(CallbackOutcome.APPLIED, CallbackOutcome.AMOUNT_MISMATCH),
        results.stream().map(CallbackResult::outcome).toList());
    assertEquals(Map.of("again", 1.0), batches());
    assertEquals("PENDING_PAYMENT", app.getOrder("O2").getString("status"));
    assertEquals(1, app.count("SELECT count(*) FROM exception_orders WHERE order_no = 'O2'"));
    assertEquals(2, app.count("SELECT count(*) FROM payment_notifications WHERE deliveries = 1"));
  }

  @Test
  void afterAnUndoneStatementTheNextBatchesGoToATransactionAtOnce() {
    int after = PaymentGate.TRANSACTIONS_AFTER_UNDONE;
    for (int i = 0; i <= after + 2; i++) {
      app.createOrder(order("O" + i, "u1", null, "A", 1, 500));
    }
    expect(app.call(HttpMethod.POST, "/api/orders/O0/cancel", null, false), 200);

    assertEquals(CallbackOutcome.LATE_AFTER_CANCEL, gate.apply(List.of(pay("T0", "O0"))).await().get(0).outcome());
    for (int i = 1; i <= after + 2; i++) {
      assertEquals(CallbackOutcome.APPLIED, gate.apply(List.of(pay("T" + i, "O" + i))).await().get(0).outcome());
    }

    assertEquals(Map.of("again", 1.0, "transaction", (double) after, "statement", 2.0), batches());
  }

  @Test
  void otherBatchesGoToATransactionAtOnce() {
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.createOrder(order("O2", "u1", null, "A", 1, 500));

    // The same key twice, and two keys of one order: not first payments of their own key and order.
    List<CallbackResult> results = gate.apply(List.of(pay("T1", "O1"), pay("T1", "O1"), pay("T2", "O2"),
        pay("T3", "O2"))).await();

    assertEquals(List.of(CallbackOutcome.APPLIED, CallbackOutcome.APPLIED, CallbackOutcome.APPLIED,
        CallbackOutcome.DOUBLE_PAYMENT), results.stream().map(CallbackResult::outcome).toList());
    assertTrue(results.get(1).duplicate());
    assertEquals(Map.of("transaction", 1.0), batches());
  }

  @Test
  void firstPaymentsAreSuccessesOfTheirOwnKeyAndOrder() {
    assertTrue(PaymentGate.allFirstPayments(List.of(pay("T1", "O1"), pay("T2", "O2"))));
    assertFalse(PaymentGate.allFirstPayments(List.of(pay("T1", "O1"), pay("T1", "O1"))));
    assertFalse(PaymentGate.allFirstPayments(List.of(pay("T1", "O1"), pay("T2", "O1"))));
    assertFalse(PaymentGate.allFirstPayments(List.of(pay("T1", "O1"),
        new PaymentCallback(TestApp.CHANNEL, "T2", "O2", 500, "PROCESSING"))));
    // Another channel's key with the same txn id is another key.
    assertTrue(PaymentGate.allFirstPayments(List.of(pay("T1", "O1"),
        new PaymentCallback("other", "T1", "O2", 500, PaymentCallback.SUCCESS))));
  }

  private static PaymentCallback pay(String txnId, String orderNo) {
    return new PaymentCallback(TestApp.CHANNEL, txnId, orderNo, 500, PaymentCallback.SUCCESS);
  }

  /** {@code ordergate_gate_batches_total} by path, the paths counted so far only. */
  private Map<String, Double> batches() {
    return registry.find("ordergate.gate.batches").counters().stream()
        .filter(c -> c.count() > 0)
        .collect(Collectors.toMap(c -> c.getId().getTag("path"), Counter::count));
  }
}
