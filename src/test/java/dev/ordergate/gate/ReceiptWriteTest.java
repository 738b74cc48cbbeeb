package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.ordergate.sweep.SweepFixtures.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: a batch of first payments claims its receipts and goes through the gate in one statement
 * ({@code Sql.CLAIM_AND_PAY}), and each receipt is inserted with the answer APPLIED: the common path writes
 * a receipt once. Only a callback that does not win has its receipt's answer corrected, in the same
 * transaction. {@link AppTest} gives the class a new database, so the table's counters hold this test's
 * writes only.
 */
class ReceiptWriteTest extends AppTest {

  /**
   * Two batches of 400 first payments, the size the coalescer takes under a closed loop: 800 receipts
   * inserted and none updated. Before the claim and the gate were one statement, every receipt was
   * inserted and then updated with its outcome (800 updates), and this test fails. Then a batch of 40 that
   * all lose (20 for unknown orders, 20 second payments of paid orders): each of their receipts is corrected
   * once, to the answer the callback got.
   */
  @Test
  void anAppliedCallbacksReceiptIsWrittenOnceALosersIsCorrected() {
    int perBatch = 400;
    app.rows("""
        INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
        SELECT 'H' || g, 'u', 'PENDING_PAYMENT', 100, 'h', now() + interval '1 day' FROM generate_series(0, $1) g""",
        2 * perBatch - 1);
    for (int b = 0; b < 2; b++) {
      List<PaymentCallback> batch = new ArrayList<>();
      for (int i = b * perBatch; i < (b + 1) * perBatch; i++) {
        batch.add(new PaymentCallback(TestApp.CHANNEL, "TH" + i, "H" + i, 100, "SUCCESS"));
      }
      List<CallbackResult> results = app.verticle.paymentGate().apply(batch).await();
      assertEquals(perBatch, results.stream().filter(r -> r.outcome() == CallbackOutcome.APPLIED).count());
    }
    assertTrue(eventually(Duration.ofSeconds(20), () -> app.tableUpdates("payment_receipts")[2] >= 2L * perBatch),
        () -> "the receipts' inserts reached pg_stat: " + Arrays.toString(app.tableUpdates("payment_receipts")));
    long[] counted = app.tableUpdates("payment_receipts");
    System.out.printf("receipts of %d applied callbacks: %d inserts, %d updates%n", 2 * perBatch, counted[2],
        counted[0]);
    assertEquals(2L * perBatch, counted[2], "one receipt per callback");
    assertEquals(0, counted[0], "applied callbacks' receipts updated");

    List<PaymentCallback> losers = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      losers.add(new PaymentCallback(TestApp.CHANNEL, "TU" + i, "NOSUCH" + i, 100, "SUCCESS"));
      losers.add(new PaymentCallback(TestApp.CHANNEL, "TD" + i, "H" + i, 100, "SUCCESS"));
    }
    List<CallbackResult> results = app.verticle.paymentGate().apply(losers).await();
    for (int i = 0; i < losers.size(); i++) {
      assertEquals(i % 2 == 0 ? CallbackOutcome.UNKNOWN_ORDER : CallbackOutcome.DOUBLE_PAYMENT,
          results.get(i).outcome(), losers.get(i).txnId());
    }
    List<Row> stored = app.rows("""
        SELECT txn_id, outcome, order_status FROM payment_receipts
        WHERE txn_id LIKE 'TU%' OR txn_id LIKE 'TD%' ORDER BY txn_id""");
    assertEquals(40, stored.size());
    for (Row r : stored) {
      boolean unknown = r.getString("txn_id").startsWith("TU");
      assertEquals(unknown ? "UNKNOWN_ORDER" : "DOUBLE_PAYMENT", r.getString("outcome"), r.getString("txn_id"));
      assertEquals(unknown ? null : "PAID", r.getString("order_status"), r.getString("txn_id"));
    }
    assertTrue(eventually(Duration.ofSeconds(20), () -> app.tableUpdates("payment_receipts")[0] >= 40),
        () -> "the losers' corrections reached pg_stat: " + Arrays.toString(app.tableUpdates("payment_receipts")));
    assertEquals(40, app.tableUpdates("payment_receipts")[0], "one correction per losing receipt");
  }
}
