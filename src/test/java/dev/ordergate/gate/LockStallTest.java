package dev.ordergate.gate;

import dev.ordergate.support.TestApp;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14, defect 3: an order row locked by someone else (psql holding FOR UPDATE) must cost its own
 * callbacks a 503 after db.lockTimeoutMs, not every callback of the service; and a pipeline whose every
 * slot is stuck must be reported not ready.
 */
class LockStallTest {

  private static final long LOCK_TIMEOUT_MS = 3_000;
  private static TestApp app;

  @BeforeAll
  static void start() {
    JsonObject config = TestApp.baseConfig();
    config.put("db", new JsonObject().put("poolSize", 10).put("lockTimeoutMs", LOCK_TIMEOUT_MS))
        // Spare slots off: each stuck callback takes a slot of its own, so four of them fill all four (with
        // spare slots on, the three behind the first would share one, and the fifth would still be served).
        .put("callbacks", new JsonObject().put("maxInFlight", 4).put("readyMaxWaitMs", 300).put("spareSlotMinBatch", 1))
        .put("outbox", new JsonObject().put("enabled", false));
    app = TestApp.start(config);
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  @BeforeEach
  void fixtures() {
    app.truncate();
    app.setStock("A", 10_000);
  }

  /** Holds FOR UPDATE on these orders (as psql would) until the returned transaction ends. */
  static Transaction lock(SqlConnection conn, String... orderNos) {
    Transaction tx = conn.begin().await();
    conn.preparedQuery("SELECT order_no FROM orders WHERE order_no = ANY($1) FOR UPDATE")
        .execute(io.vertx.sqlclient.Tuple.of(orderNos)).await();
    return tx;
  }

  @Test
  void fourCallbacksOnALockedOrderDoNotStopTheOthers() {
    long amount = app.createOrder(order("X", "u", null, "A", 1, 100)).getLong("amountCents");
    for (int i = 0; i < 300; i++) {
      app.createOrder(order("U" + i, "u", null, "A", 1, 100));
    }
    SqlConnection conn = app.pool.getConnection().await();
    try {
      Transaction tx = lock(conn, "X");
      long lockedAt = System.nanoTime();
      List<Future<HttpResponse<Buffer>>> locked = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        locked.add(app.callbackAsync(payment("TX" + i, "X", amount)));
      }
      List<Future<Long>> others = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        long t0 = System.nanoTime();
        others.add(app.callbackAsync(payment("TU" + i, "U" + i, 100)).map(resp -> {
          assertEquals(200, resp.statusCode(), resp.bodyAsString());
          assertEquals("APPLIED", resp.bodyAsJsonObject().getString("outcome"));
          return (System.nanoTime() - t0) / 1_000_000;
        }));
      }
      Future.all(others).timeout(20, TimeUnit.SECONDS).await();
      long othersDoneMs = (System.nanoTime() - lockedAt) / 1_000_000;
      long worst = others.stream().mapToLong(Future::result).max().orElseThrow();
      // The lock is still held: the other orders were served beside it, not after it.
      assertTrue(worst < LOCK_TIMEOUT_MS, "slowest unrelated callback took " + worst + " ms");
      assertTrue(othersDoneMs < LOCK_TIMEOUT_MS * 2, "unrelated callbacks done after " + othersDoneMs + " ms");
      assertEquals("UP", app.http.get("/health/ready").send().await().bodyAsJsonObject().getString("status"),
          "one locked order holds one slot: the pipeline is not stalled");
      for (Future<HttpResponse<Buffer>> f : locked) {
        HttpResponse<Buffer> resp = f.timeout(20, TimeUnit.SECONDS).await();
        assertEquals(503, resp.statusCode(), resp.bodyAsString());
        assertEquals("DATABASE_BUSY", resp.bodyAsJsonObject().getString("error"));
        assertEquals("1", resp.getHeader("Retry-After"));
      }
      tx.rollback().await();
    } finally {
      conn.close().await();
    }
    assertEquals(300, app.count("SELECT count(*) FROM orders WHERE status = 'PAID'"));
    assertEquals("PENDING_PAYMENT", app.getOrder("X").getString("status"));
    // Once released, the gateway's retry goes through.
    assertEquals("APPLIED", app.callback(payment("TX0", "X", amount)).getString("outcome"));
  }

  @Test
  void everySlotStuckIsReportedNotReady() {
    for (int i = 0; i < 4; i++) {
      app.createOrder(order("Y" + i, "u", null, "A", 1, 100));
    }
    app.createOrder(order("Z", "u", null, "A", 1, 100));
    assertEquals(200, app.http.get("/health/ready").send().await().statusCode());
    SqlConnection conn = app.pool.getConnection().await();
    try {
      Transaction tx = lock(conn, "Y0", "Y1", "Y2", "Y3");
      List<Future<HttpResponse<Buffer>>> stuck = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        stuck.add(app.callbackAsync(payment("TY" + i, "Y" + i, 100)));
      }
      sleep(200);
      Future<HttpResponse<Buffer>> waiting = app.callbackAsync(payment("TZ", "Z", 100));
      sleep(800);
      HttpResponse<Buffer> ready = app.http.get("/health/ready").send().await();
      assertEquals(503, ready.statusCode(), ready.bodyAsString());
      assertEquals("STALLED", ready.bodyAsJsonObject().getString("callbacks"));
      assertTrue(!ready.bodyAsString().contains("Exception"), "status words only: " + ready.bodyAsString());
      stuck.forEach(f -> f.timeout(20, TimeUnit.SECONDS).await());
      assertEquals("APPLIED", waiting.timeout(20, TimeUnit.SECONDS).await().bodyAsJsonObject().getString("outcome"));
      tx.rollback().await();
    } finally {
      conn.close().await();
    }
    assertEquals(200, app.http.get("/health/ready").send().await().statusCode());
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
