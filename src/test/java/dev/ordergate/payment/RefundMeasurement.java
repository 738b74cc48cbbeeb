package dev.ordergate.payment;

import dev.ordergate.sim.TradeBook;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import dev.ordergate.sweep.SweepFixtures;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;

/**
 * Numbers for the refunds note, not a test: run with {@code -Dordergate.measure=true -Dtest=RefundMeasurement}.
 * Per gateway, the time from the late payment's notification being answered to the exception REFUNDED
 * (outbox claim, signed refund call to the simulator on loopback, its verified answer, the move), one at a
 * time, and the outbound calls per refund.
 */
@EnabledIfSystemProperty(named = "ordergate.measure", matches = "true")
class RefundMeasurement {

  private static final int N = 40;

  @Test
  void measure() {
    try (GatewaySim sim = new GatewaySim()) {
      JsonObject config = sim.serviceConfig(new JsonObject().put("autoRefundMaxCents", 1_000));
      config.put("outbox", new JsonObject().put("pollMs", 1_000));
      TestApp app = TestApp.start(config);
      try {
        app.setStock("A", 100_000);
        for (String[] g : new String[][] {{"wechatpay-v3", Sandbox.WECHATPAY}, {"alipay", Sandbox.ALIPAY},
            {"stripe", Sandbox.STRIPE}}) {
          sim.apis.notifier().webhook(g[0], "http://127.0.0.1:1/none");
          sim.clearFaults();
          List<Long> ms = new ArrayList<>();
          for (int i = 0; i < N; i++) {
            String no = "M" + g[0].charAt(0) + i + "x" + System.nanoTime() % 100_000;
            app.createOrder(order(no, "u1", null, "A", 1, 500));
            expect(app.call(HttpMethod.POST, "/api/orders/" + no + "/cancel", null, false), 200);
            String ref = g[0].equals("stripe") ? "pi_simm" + no : no;
            sim.apis.trades().create(g[0], ref, no, 500, "CNY", null, null, "c", TradeBook.State.OPEN);
            sim.pay(app, g[0], ref, g[1], true);
            long t0 = System.nanoTime();
            SweepFixtures.eventually(Duration.ofSeconds(30), () -> "REFUNDED".equals(app.rows(
                "SELECT status FROM exception_orders WHERE order_no = $1", no).get(0).getString(0)));
            ms.add((System.nanoTime() - t0) / 1_000_000);
          }
          Collections.sort(ms);
          System.out.printf("%s: %d refunds, notification answered -> REFUNDED: p50 %d ms, p90 %d ms, max %d ms;"
                  + " gateway calls %d%n", g[0], N, ms.get(N / 2), ms.get(N * 9 / 10), ms.get(N - 1),
              sim.stats(g[0]).getInteger("calls"));
        }
      } finally {
        app.close();
      }
    }
  }
}
