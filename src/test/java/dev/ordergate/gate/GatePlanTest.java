package dev.ordergate.gate;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: the gate's claiming statement ({@code Sql.CLAIM_AND_PAY}, longer than the SQL client's default
 * limit of 2,048 characters for the statements a connection keeps prepared) is kept prepared on the
 * service's connections like the gate's other statements. Not kept, it was parsed and planned at every
 * execution: a quarter of its time at a moderate load. Runs on the service's own pool, as in production; the
 * hook reads, on the gate's connection inside its transaction, that connection's prepared statements.
 */
class GatePlanTest extends AppTest {

  @Test
  void theClaimingStatementIsKeptPreparedOnTheServicesConnections() {
    int[] sizes = {1, 2, 3, 5, 8, 13, 21, 1};
    int total = 0;
    for (int n : sizes) {
      total += n;
    }
    app.rows("""
        INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
        SELECT 'G' || g, 'u', 'PENDING_PAYMENT', 100, 'h', now() + interval '1 day' FROM generate_series(0, $1) g""",
        total - 1);
    List<Long> executions = new ArrayList<>();
    GateHook hook = conn -> conn.query("""
            SELECT coalesce(sum(generic_plans + custom_plans), 0)
            FROM pg_prepared_statements WHERE statement LIKE '%claimed AS (%'""").execute()
        .map(rows -> {
          executions.add(rows.iterator().next().getLong(0));
          return null;
        });
    PaymentGate gate = TestApp.paymentGate(app.verticle.pool(), new SimpleMeterRegistry(), hook);
    int next = 0;
    for (int n : sizes) {
      List<PaymentCallback> batch = new ArrayList<>();
      for (int i = 0; i < n; i++, next++) {
        batch.add(new PaymentCallback(TestApp.CHANNEL, "GT" + next, "G" + next, 100, "SUCCESS"));
      }
      List<CallbackResult> results = gate.apply(batch).await();
      assertTrue(results.stream().allMatch(r -> r.outcome() == CallbackOutcome.APPLIED), results::toString);
    }
    assertEquals(sizes.length, executions.size(), executions::toString);
    for (long e : executions) {
      assertTrue(e >= 1, "the gate's connection keeps the claiming statement prepared: executions so far " + executions);
    }
  }
}
