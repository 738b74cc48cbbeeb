package dev.ordergate.outbox;

import dev.ordergate.config.OutboxConfig;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;

/**
 * Numbers for docs/outbox-NOTE.md, not a test: run with {@code -Dordergate.measure=true
 * -Dtest=OutboxMeasurement}. Prints relay throughput to a local webhook and the commit-to-
 * delivery latency with the after-commit nudge (poll period 1 s).
 */
@EnabledIfSystemProperty(named = "ordergate.measure", matches = "true")
class OutboxMeasurement {

  @Test
  void measure() {
    try (FakeEndpoint endpoint = new FakeEndpoint()) {
      Map<String, String> sinks = new HashMap<>();
      for (String type : OutboxConfig.SINK_TYPES) {
        sinks.put(type, endpoint.url("/sink/" + type));
      }
      JsonObject sinkJson = new JsonObject();
      sinks.forEach((k, v) -> sinkJson.put(k, new JsonObject().put("url", v)));
      JsonObject config = TestApp.baseConfig().put("outbox", new JsonObject().put("enabled", false));
      TestApp app = TestApp.start(config);
      try {
        app.setStock("A", 1_000_000);
        for (int relays : new int[] {1, 2}) {
          int events = 4_000;
          app.pool.query("TRUNCATE outbox_events").execute().await();
          endpoint.reset();
          app.pool.query("INSERT INTO outbox_events (type, order_no, payload) SELECT 'NOTIFY_SMS', 'M' || (g % 2000), "
              + "jsonb_build_object('template', 'x') FROM generate_series(1, " + events + ") g").execute().await();
          long t0 = System.nanoTime();
          List<String> ids = new ArrayList<>();
          for (int r = 0; r < relays; r++) {
            OutboxConfig oc = new OutboxConfig(true, 1_000, 100, 5, 20, 1_000, 60_000, 10_000, sinks);
            ids.add(app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), oc, Map.of(),
                app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "m" + r)).await());
          }
          eventually("all delivered", () -> app.count("SELECT count(*) FROM outbox_events_shown WHERE status = 'PENDING'") == 0);
          double secs = (System.nanoTime() - t0) / 1e9;
          System.out.printf("MEASURE relays=%d events=%d seconds=%.2f events/s=%.0f received=%d%n",
              relays, events, secs, events / secs, endpoint.received.size());
          ids.forEach(id -> app.vertx.undeploy(id).await());
        }

        // Latency: payment callback answered -> ORDER_PAID received by the webhook, with a 1 s poll period.
        app.pool.query("TRUNCATE outbox_events").execute().await();
        endpoint.reset();
        OutboxConfig oc = new OutboxConfig(true, 1_000, 100, 5, 20, 1_000, 60_000, 10_000, sinks);
        String relay = app.vertx.deployVerticle(new OutboxRelay(app.verticle.pool(), oc, Map.of(),
            app.verticle.outboxMetrics(), app.verticle.outboxSignal(), "lat")).await();
        List<Double> ms = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          app.createOrder(order("L" + i, "u1", null, "A", 1, 500));
          long t = System.nanoTime();
          app.callback(payment("LT" + i, "L" + i, 500));
          int expected = i + 1;
          eventually("received", () -> endpoint.at("/sink/ORDER_PAID").size() >= expected);
          ms.add((System.nanoTime() - t) / 1e6);
        }
        Collections.sort(ms);
        System.out.printf("MEASURE callback->webhook ms: p50=%.1f p95=%.1f max=%.1f (includes the callback's own round trip)%n",
            ms.get(49), ms.get(94), ms.get(99));
        app.vertx.undeploy(relay).await();

        // Cost in the gate: callbacks per second, one at a time, with the outbox writes in the transaction.
        long t1 = System.nanoTime();
        for (int i = 0; i < 300; i++) {
          app.createOrder(order("C" + i, "u1", null, "A", 1, 500));
        }
        long t2 = System.nanoTime();
        for (int i = 0; i < 300; i++) {
          app.callback(payment("CT" + i, "C" + i, 500));
        }
        long t3 = System.nanoTime();
        System.out.printf("MEASURE sequential: create %.2f ms/order, callback %.2f ms/callback%n",
            (t2 - t1) / 1e6 / 300, (t3 - t2) / 1e6 / 300);
      } finally {
        app.close();
      }
    }
  }
}
