package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static dev.ordergate.sweep.SweepFixtures.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13 (V15): a callback inserts its receipt (the claim of its transaction id) and updates it with the
 * outcome in the same transaction. Under load the group commit's batches are large, so the inserts filled
 * each page before its rows were updated and most updates moved to another page, with new entries in all
 * three indexes. Half of each page is kept free for that update. {@link AppTest} gives the class a new
 * database, so the table's counters hold this test's updates only.
 */
class ReceiptHotUpdateTest extends AppTest {

  /**
   * Two batches of 400 callbacks through the gate, the size the coalescer takes under a closed loop: every
   * receipt is updated once, and at least 80 % of those updates are HOT (698 of 800 here). At the default
   * fillfactor (V15 removed) 200 of 800 were, and this test fails.
   */
  @Test
  void aBatchsReceiptOutcomesAreHotUpdates() {
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
    assertTrue(eventually(Duration.ofSeconds(20), () -> app.tableUpdates("payment_receipts")[0] >= 2L * perBatch),
        () -> "the receipts' updates reached pg_stat: " + Arrays.toString(app.tableUpdates("payment_receipts")));
    long[] counted = app.tableUpdates("payment_receipts");
    System.out.printf("receipts of %d callbacks: %d updates, %d HOT%n", 2 * perBatch, counted[0], counted[1]);
    assertEquals(2L * perBatch, counted[0], "one outcome update per receipt");
    assertTrue(counted[1] >= 0.8 * counted[0], counted[1] + " of " + counted[0] + " updates were HOT");
  }
}
