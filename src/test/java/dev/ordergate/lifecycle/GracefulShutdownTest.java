package dev.ordergate.lifecycle;

import dev.ordergate.db.DbUrl;
import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import dev.ordergate.tools.ServiceProcess;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SIGTERM to the service (a child process, as in production) under callback load: every request
 * it accepted is answered 200, every payment it acknowledged is in the database, and it exits
 * within {@code shutdown.graceMs}. A request refused (listener closed) or sent on a kept-alive
 * connection as the service closed it was not accepted: its payment must not have been applied.
 */
class GracefulShutdownTest {

  private static final int ORDERS = 2000;
  private static final long GRACE_MS = 8000;
  /** Serving on while reporting not ready, so the test can see the readiness flip. */
  private static final long DRAIN_DELAY_MS = 1000;

  /** The service's config for a child process on {@code db}. */
  static JsonObject childConfig(DbUrl db) {
    return new JsonObject()
        .put("api", new JsonObject().put("keys", new JsonArray().add(TestApp.API_KEY)))
        .put("db", new JsonObject().put("url", db.uri()).put("poolSize", 8))
        .put("admin", new JsonObject().put("token", TestApp.ADMIN_TOKEN))
        .put("sweep", new JsonObject().put("enabled", true).put("periodMs", 500))
        .put("shutdown", new JsonObject().put("graceMs", GRACE_MS).put("drainDelayMs", DRAIN_DELAY_MS))
        .put("payments", new JsonObject().put("channels", new JsonObject().put(TestApp.CHANNEL,
            new JsonObject().put("secrets", new JsonArray().add(TestApp.SECRET)))));
  }

  @Test
  void sigtermUnderCallbackLoadAnswersEveryAcceptedRequestAndExitsInTime() throws Exception {
    DbUrl db = TestDatabase.freshDatabase();
    Path dir = Files.createTempDirectory("ordergate-shutdown");
    Vertx vertx = Vertx.vertx();
    try (ServiceProcess service = ServiceProcess.start(childConfig(db), dir)) {
      assertTrue(service.awaitReady(90_000), "the service did not start: " + Files.readString(service.logFile()));
      int port = Integer.parseInt(service.url().substring(service.url().lastIndexOf(':') + 1));
      WebClient http = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port));
      String auth = "Bearer " + TestApp.ADMIN_TOKEN;
      assertEquals(200, http.put("/admin/inventory/A").putHeader("Authorization", auth)
          .sendJsonObject(new JsonObject().put("available", ORDERS)).await().statusCode());
      List<Future<?>> creates = new ArrayList<>();
      for (int i = 0; i < ORDERS; i++) {
        creates.add(http.post("/api/orders").putHeader("Authorization", "Bearer " + TestApp.API_KEY).sendJsonObject(TestApp.order("SD" + i, "u1", null, "A", 1, 100)));
        if (creates.size() == 64) {
          Future.all(creates).await();
          creates.clear();
        }
      }
      Future.all(creates).await();

      Map<String, Integer> answers = new TreeMap<>();
      List<String> failedAnswers = new ArrayList<>();
      Set<String> acknowledged = ConcurrentHashMap.newKeySet();
      // Sent on a kept-alive connection the service closed at that instant: never read, so never
      // accepted, which the database must confirm (a payment applied but not answered would be a failure).
      Set<String> lost = ConcurrentHashMap.newKeySet();
      AtomicInteger next = new AtomicInteger();
      AtomicLong sigtermAt = new AtomicLong(Long.MAX_VALUE);
      AtomicInteger answeredAfterSigterm = new AtomicInteger();
      List<Future<Void>> loops = new ArrayList<>();
      for (int c = 0; c < 32; c++) {
        Promise<Void> done = Promise.promise();
        loops.add(done.future());
        vertx.runOnContext(v -> loop(http, next, answers, failedAnswers, lost, acknowledged, sigtermAt,
            answeredAfterSigterm, done));
      }
      Thread.sleep(1500);
      sigtermAt.set(System.currentTimeMillis());
      service.terminate();
      String readiness = null;
      for (long until = System.currentTimeMillis() + DRAIN_DELAY_MS; System.currentTimeMillis() < until; ) {
        var ready = http.get("/health/ready").send().toCompletionStage().toCompletableFuture();
        try {
          var r = ready.get();
          if (r.statusCode() == 503) {
            readiness = r.bodyAsString();
            break;
          }
        } catch (Exception listenerGone) {
          break;
        }
        Thread.sleep(50);
      }
      Integer exit = service.waitFor(GRACE_MS + 5000);
      long took = System.currentTimeMillis() - sigtermAt.get();
      Future.all(loops).await();
      String log = Files.readString(service.logFile());
      System.out.println("graceful shutdown: readiness " + readiness + ", exit " + exit + " after " + took + " ms, answers " + answers + ", "
          + acknowledged.size() + " payments acknowledged, " + answeredAfterSigterm.get() + " answered after SIGTERM, "
          + lost.size() + " unread on closing connections");
      assertNotNull(exit, "still running " + took + " ms after SIGTERM");
      assertTrue(readiness != null && readiness.contains("DRAINING"), "readiness after SIGTERM: " + readiness);
      assertTrue(took < GRACE_MS + 2000, "exit took " + took + " ms, grace is " + GRACE_MS);
      assertTrue(failedAnswers.isEmpty(), "accepted requests that failed: " + failedAnswers);
      assertTrue(acknowledged.size() > 0 && answeredAfterSigterm.get() > 0, "no load at the SIGTERM: " + answers);
      assertTrue(log.contains("shutting down: not ready") && log.contains("drained; stopping"), log);
      try (Connection conn = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password())) {
        for (String orderNo : acknowledged) {
          try (ResultSet rs = conn.createStatement().executeQuery(
              "SELECT o.status, (SELECT count(*) FROM payment_receipts r WHERE r.order_no = o.order_no) "
                  + "FROM orders o WHERE order_no = '" + orderNo + "'")) {
            assertTrue(rs.next(), orderNo);
            assertEquals("PAID", rs.getString(1), orderNo + " was acknowledged");
            assertEquals(1, rs.getInt(2), orderNo + " receipt");
          }
        }
        // (An order paid and acknowledged before may be repeated on a closing connection: that proves nothing.)
        for (String orderNo : lost.stream().filter(o -> !acknowledged.contains(o)).toList()) {
          try (ResultSet rs = conn.createStatement().executeQuery(
              "SELECT count(*) FROM payment_receipts WHERE order_no = '" + orderNo + "'")) {
            rs.next();
            assertEquals(0, rs.getInt(1), orderNo + ": applied, but its connection closed without an answer");
          }
        }
      }
    } finally {
      vertx.close().await();
      TestDatabase.drop(db);
    }
  }

  /** One client: pays the next order until the service stops accepting connections. */
  private static void loop(WebClient http, AtomicInteger next, Map<String, Integer> answers, List<String> failed,
                           Set<String> lost,
                           Set<String> acknowledged, AtomicLong sigtermAt, AtomicInteger afterSigterm,
                           Promise<Void> done) {
    // Round and round: a repeat is answered 200 (duplicate) too, so the load lasts until the SIGTERM.
    int n = next.getAndIncrement() % ORDERS;
    JsonObject body = TestApp.payment("TXSD" + n, "SD" + n, 100);
    byte[] raw = body.encode().getBytes(StandardCharsets.UTF_8);
    http.post("/api/callbacks/" + TestApp.CHANNEL)
        .putHeader(OrdergateSignature.HEADER, OrdergateSignature.header(TestApp.SECRET, System.currentTimeMillis() / 1000, TestApp.CHANNEL, raw))
        .putHeader("Content-Type", "application/json")
        .timeout(20_000)
        .sendBuffer(Buffer.buffer(raw))
        .onComplete(ar -> {
          synchronized (answers) {
            if (ar.failed()) {
              // Refused: the listener was closed, nothing was accepted. Anything else lost a request.
              boolean refused = ar.cause() instanceof java.net.ConnectException;
              answers.merge(refused ? "refused" : "lost: " + ar.cause().getClass().getSimpleName(), 1, Integer::sum);
              if (!refused) {
                lost.add("SD" + n);
              }
            } else {
              answers.merge(Integer.toString(ar.result().statusCode()), 1, Integer::sum);
              if (ar.result().statusCode() != 200) {
                failed.add("SD" + n + " -> " + ar.result().statusCode() + " " + ar.result().bodyAsString());
              }
            }
          }
          if (ar.succeeded() && ar.result().statusCode() == 200) {
            if (System.currentTimeMillis() > sigtermAt.get()) {
              afterSigterm.incrementAndGet();
            }
            if ("PAID".equals(ar.result().bodyAsJsonObject().getString("orderStatus"))) {
              acknowledged.add("SD" + n);
            }
          }
          if (ar.failed() && System.currentTimeMillis() > sigtermAt.get()) {
            done.complete();
          } else {
            loop(http, next, answers, failed, lost, acknowledged, sigtermAt, afterSigterm, done);
          }
        });
  }
}
