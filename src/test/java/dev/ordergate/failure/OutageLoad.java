package dev.ordergate.failure;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Callback and read load against the service while {@code disruption} takes its database away,
 * then the checks every outage test makes: only 200 and 503 {@code DATABASE_UNAVAILABLE} (or the
 * lock-timeout and queue answers, also 503), recovery without a restart (every order's payment
 * goes through once a gateway retries), every payment answered {@code PAID} in the database.
 */
final class OutageLoad {

  /** The disruption: runs on its own thread until {@code running} turns false. */
  interface Disruption {
    void run(AtomicBoolean running) throws Exception;
  }

  private OutageLoad() {
  }

  /** Answers the status counts, for the test to print. */
  static Map<Integer, Integer> run(TestApp app, int orders, long loadMs, Disruption disruption) throws Exception {
    app.setStock("A", orders);
    for (int i = 0; i < orders; i++) {
      app.createOrder(TestApp.order("OUT" + i, "u1", null, "A", 1, 100));
    }
    Map<Integer, Integer> statuses = new TreeMap<>();
    List<String> unexpected = new ArrayList<>();
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    AtomicBoolean running = new AtomicBoolean(true);
    List<Throwable> disruptionFailed = new ArrayList<>();
    Thread chaos = new Thread(() -> {
      try {
        disruption.run(running);
      } catch (Exception e) {
        disruptionFailed.add(e);
      }
    }, "disruption");
    chaos.start();
    long until = System.currentTimeMillis() + loadMs;
    int round = 0;
    try {
      while (System.currentTimeMillis() < until) {
        List<Future<Void>> batch = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
          int n = (round * 24 + i) % orders;
          String orderNo = "OUT" + n;
          batch.add(app.callbackAsync(TestApp.payment("TX" + n, orderNo, 100)).map(resp -> {
            record(statuses, unexpected, "callback " + orderNo, resp.statusCode(), resp.bodyAsString());
            if (resp.statusCode() == 200 && "PAID".equals(resp.bodyAsJsonObject().getString("orderStatus"))) {
              acknowledged.add(orderNo);
            }
            return null;
          }));
          batch.add(app.callAsync(HttpMethod.GET, "/api/orders/" + orderNo, null, false).map(resp -> {
            record(statuses, unexpected, "read " + orderNo, resp.statusCode(), resp.bodyAsString());
            return null;
          }));
        }
        Future.join(batch).await();
        round++;
      }
    } finally {
      running.set(false);
      chaos.join();
    }
    assertTrue(disruptionFailed.isEmpty(), "the disruption failed: " + disruptionFailed);
    assertTrue(unexpected.isEmpty(), "answers other than 200/503: " + unexpected);
    assertTrue(statuses.getOrDefault(503, 0) > 0, "the outage never reached a request: " + statuses);
    assertTrue(statuses.getOrDefault(200, 0) > 0, "nothing succeeded around the outage: " + statuses);

    // Recovery without a restart: every order's payment now goes through (gateways retry until 200).
    long deadline = System.currentTimeMillis() + 30_000;
    for (int n = 0; n < orders; n++) {
      while (true) {
        var resp = app.callbackAsync(TestApp.payment("TX" + n, "OUT" + n, 100)).await();
        if (resp.statusCode() == 200) {
          break;
        }
        assertEquals(503, resp.statusCode(), resp.bodyAsString());
        assertTrue(System.currentTimeMillis() < deadline, "no recovery within 30 s");
        Thread.sleep(100);
      }
    }
    for (String orderNo : acknowledged) {
      assertEquals("PAID", app.getOrder(orderNo).getString("status"), orderNo + " was acknowledged");
    }
    assertEquals(orders, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    assertEquals(orders, app.count("SELECT count(*) FROM payment_receipts"));
    statuses.put(-1, acknowledged.size());
    return statuses;
  }

  private static synchronized void record(Map<Integer, Integer> statuses, List<String> unexpected, String what,
                                          int status, String body) {
    statuses.merge(status, 1, Integer::sum);
    if (status != 200 && status != 503) {
      unexpected.add(what + " -> " + status + " " + body);
    } else if (status == 503 && !body.contains("DATABASE_UNAVAILABLE") && !body.contains("DATABASE_BUSY")
        && !body.contains("CALLBACK")) {
      unexpected.add(what + " -> 503 without a database or queue code: " + body);
    }
  }
}
