package dev.ordergate.gate;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14, defect 4: with the only slot blocked, the queue is bounded (the excess is refused 503 at
 * once, with Retry-After), and callbacks whose clients gave up, or that waited past
 * callbacks.queueTimeoutMs, are dropped unrun: nothing stale runs after the stall ends.
 */
class CallbackQueueTest {

  private static final int MAX_QUEUED = 40;
  private static TestApp app;

  @BeforeAll
  static void start() {
    JsonObject config = TestApp.baseConfig();
    config.put("db", new JsonObject().put("poolSize", 4).put("lockTimeoutMs", 6_000))
        .put("callbacks", new JsonObject().put("maxInFlight", 1).put("maxQueued", MAX_QUEUED)
            .put("queueTimeoutMs", 4_000))
        .put("outbox", new JsonObject().put("enabled", false));
    app = TestApp.start(config);
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @Test
  void aStallQueuesAtMostMaxQueuedAndRunsNothingStaleAfterwards() throws Exception {
    app.setStock("A", 10_000);
    app.createOrder(order("X", "u", null, "A", 1, 100));
    for (int i = 0; i < 200; i++) {
      app.createOrder(order("U" + i, "u", null, "A", 1, 100));
    }
    // Clients that give up after 1 s, as a gateway does.
    WebClient impatient = WebClient.create(app.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(app.verticle.port()), new io.vertx.core.http.PoolOptions().setHttp1MaxSize(250));
    SqlConnection conn = app.pool.getConnection().await();
    Future<HttpResponse<Buffer>> blocker;
    try {
      Transaction tx = conn.begin().await();
      conn.preparedQuery("SELECT order_no FROM orders WHERE order_no = 'X' FOR UPDATE").execute().await();
      blocker = app.callbackAsync(payment("TX", "X", 100));
      Thread.sleep(200);
      AtomicInteger refusals = new AtomicInteger();
      AtomicInteger maxSeenQueued = new AtomicInteger();
      List<Future<Integer>> sent = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        byte[] raw = payment("TU" + i, "U" + i, 100).encode().getBytes(StandardCharsets.UTF_8);
        sent.add(impatient.post("/api/callbacks/" + TestApp.CHANNEL).timeout(1_000)
            .putHeader(OrdergateSignature.HEADER, OrdergateSignature.header(TestApp.SECRET,
                System.currentTimeMillis() / 1000, TestApp.CHANNEL, raw))
            .sendBuffer(Buffer.buffer(raw))
            .map(resp -> {
              if (resp.statusCode() == 503 && "1".equals(resp.getHeader("Retry-After"))
                  && "CALLBACKS_OVERLOADED".equals(resp.bodyAsJsonObject().getString("error"))) {
                refusals.incrementAndGet();
              }
              return resp.statusCode();
            })
            .otherwise(-1));
        maxSeenQueued.accumulateAndGet(app.verticle.coalescer().queued(), Math::max);
      }
      Future.join(sent).otherwiseEmpty().timeout(20, TimeUnit.SECONDS).await();
      assertTrue(maxSeenQueued.get() <= MAX_QUEUED, "queued " + maxSeenQueued.get());
      // The excess was refused at once (server side: counted; client side: seen, unless the loaded
      // machine made the client give up first).
      double full = app.metric("ordergate.callback.dropped", "reason", "queue_full");
      assertTrue(full >= 200 - MAX_QUEUED, full + " of 200 refused as queue_full");
      assertTrue(refusals.get() > 0, "a refusal reached its client: 503 CALLBACKS_OVERLOADED with Retry-After");
      // The queued ones' clients gave up after 1 s: their entries are dropped unrun, long before the lock goes.
      Thread.sleep(2_500);
      assertEquals(0, app.verticle.coalescer().queued());
      double dropped = full + app.metric("ordergate.callback.dropped", "reason", "client_gone")
          + app.metric("ordergate.callback.dropped", "reason", "queue_timeout");
      assertEquals(200.0, dropped, "every one of the 200 was refused or dropped before its transaction");
      tx.rollback().await();
    } finally {
      conn.close().await();
      impatient.close();
    }
    assertEquals(200, blocker.timeout(20, TimeUnit.SECONDS).await().statusCode(), "the blocked one ran after the lock");
    Thread.sleep(500);
    assertEquals(0, app.count("SELECT count(*) FROM payment_receipts WHERE txn_id LIKE 'TU%'"),
        "nothing abandoned or expired ran after the stall");
    assertEquals(1, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
  }
}
