package dev.ordergate.ops;

import dev.ordergate.support.AppTest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Predicate;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real Prometheus (Debian's {@code prometheus}; {@code .ci/run} installs it) scrapes the running
 * service every second and evaluates {@code ops/prometheus/alerts.yml}: the reconciliation alert
 * stays quiet on a consistent database and fires once a violation is injected. Without the
 * binary the test is skipped locally, and fails under CI. ({@link OpsFilesTest} checks the names.)
 */
class AlertsLiveTest extends AppTest {

  private static final Path RULES = Path.of("ops/prometheus/alerts.yml").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static Process prometheus;
  private static Path dir;
  private static String api;

  @BeforeAll
  static void startPrometheus() throws IOException {
    String binary = which("prometheus");
    if (binary == null && System.getenv("CI") != null) {
      throw new AssertionError("prometheus is not installed (.ci/run installs Debian's prometheus package)");
    }
    Assumptions.assumeTrue(binary != null, "prometheus not installed: apt-get install prometheus");
    dir = Files.createTempDirectory("ordergate-prometheus");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Files.writeString(dir.resolve("prometheus.yml"), """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files:
          - %s
        scrape_configs:
          - job_name: ordergate
            metrics_path: /metrics
            static_configs:
              - targets: ['127.0.0.1:%d']
        """.formatted(RULES, metricsPort()));
    prometheus = new ProcessBuilder(binary, "--config.file=" + dir.resolve("prometheus.yml"),
        "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
        .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
    api = "http://127.0.0.1:" + port + "/api/v1/";
  }

  /** The management listener, which serves {@code GET /metrics}. */
  private static int metricsPort() {
    return app.verticle.managementPort();
  }

  @AfterAll
  static void stopPrometheus() throws Exception {
    if (prometheus != null) {
      prometheus.destroy();
      prometheus.waitFor();
    }
    if (dir != null) {
      try (var files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
      }
    }
  }

  private static String which(String name) {
    for (String p : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(p, name);
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }

  private static JsonObject get(String path) {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(api + path)).timeout(Duration.ofSeconds(5))
          .build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 ? new JsonObject(r.body()) : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  private static JsonArray query(String promql) {
    JsonObject r = get("query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    return r == null ? null : r.getJsonObject("data").getJsonArray("result");
  }

  /** The state of {@code alertname} at Prometheus ("inactive" when not listed). */
  private static String alertState(String alertname) {
    JsonObject r = get("alerts");
    if (r == null) {
      return null;
    }
    for (Object a : r.getJsonObject("data").getJsonArray("alerts")) {
      JsonObject alert = (JsonObject) a;
      if (alertname.equals(alert.getJsonObject("labels").getString("alertname"))) {
        return alert.getString("state");
      }
    }
    return "inactive";
  }

  /** Waits (generously; not a timing assertion) until {@code probe} answers something {@code done} accepts. */
  private static <T> T await(String what, java.util.function.Supplier<T> probe, Predicate<T> done) {
    long deadline = System.nanoTime() + 90_000_000_000L;
    T last = null;
    while (System.nanoTime() < deadline) {
      last = probe.get();
      if (last != null && done.test(last)) {
        return last;
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    throw new AssertionError("timed out waiting until " + what + " (last: " + last + "); log: " + log());
  }

  private static String log() {
    try {
      String s = Files.readString(dir.resolve("prometheus.log"));
      return s.length() > 3000 ? s.substring(s.length() - 3000) : s;
    } catch (IOException e) {
      return e.toString();
    }
  }

  private static double violationsAtPrometheus() {
    JsonArray r = query("ordergate_reconcile_violations");
    return r == null || r.isEmpty() ? Double.NaN
        : Double.parseDouble(r.getJsonObject(0).getJsonArray("value").getString(1));
  }

  @Test
  void theReconciliationAlertFiresWhenAViolationIsInjected() {
    app.truncate();
    app.setStock("A", 10);
    app.createOrder(order("O1", "u1", null, "A", 1, 500));
    app.callback(payment("T1", "O1", 500));
    JsonObject clean = expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject();
    assertTrue(clean.getBoolean("ok"), clean.encode());
    // Prometheus has scraped the clean run (0, not NaN), and the rules were loaded and evaluated.
    await("Prometheus sees 0 violations", AlertsLiveTest::violationsAtPrometheus, v -> v == 0.0);
    JsonObject rules = await("the rules are loaded", () -> get("rules"),
        r -> !r.getJsonObject("data").getJsonArray("groups").isEmpty());
    assertEquals(4, rules.getJsonObject("data").getJsonArray("groups").size());
    assertEquals("inactive", await("the alert was evaluated", () -> alertState("OrdergateReconciliationViolations"),
        s -> true));
    assertEquals("1", query("up{job=\"ordergate\"}").getJsonObject(0).getJsonArray("value").getString(1));

    // The violation: stock that no ledger entry explains.
    app.pool.query("UPDATE inventory SET available = available + 1 WHERE sku = 'A'").execute().await();
    JsonObject broken = expect(app.call(HttpMethod.GET, "/admin/reconcile", null, true), 200).bodyAsJsonObject();
    assertFalse(broken.getBoolean("ok"), broken.encode());

    assertEquals("firing", await("the reconciliation alert fires",
        () -> alertState("OrdergateReconciliationViolations"), "firing"::equals));
    assertTrue(violationsAtPrometheus() > 0);
    assertEquals("inactive", alertState("OrdergateDown"));
    assertEquals("inactive", alertState("OrdergateDatabaseNotReady"));
  }
}
