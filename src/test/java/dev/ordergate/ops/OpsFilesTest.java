package dev.ordergate.ops;

import dev.ordergate.support.AppTest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The alert rules and the dashboard name only metrics the service exports (a renamed meter fails
 * here, not silently in production), and the dashboard is a Grafana document with its panels.
 */
class OpsFilesTest extends AppTest {

  private static final Path RULES = Path.of("ops/prometheus/alerts.yml");
  private static final Path DASHBOARD = Path.of("ops/grafana/ordergate.json");
  private static final Pattern METRIC = Pattern.compile("\\b((?:ordergate|vertx)_[a-z0-9_]+)");

  @Test
  void everyMetricTheRulesAndTheDashboardNameIsExported() throws IOException, InterruptedException {
    // Activity that registers the lazily created meters: a paid order (callback counter, a relay
    // delivery to the log sink), a sweep run, a refresh of the database gauges.
    app.truncate();
    app.setStock("A", 10);
    app.createOrder(order("M1", "u1", null, "A", 1, 500));
    app.callback(payment("TM1", "M1", 500));
    expect(app.call(HttpMethod.POST, "/admin/sweeps/run", null, true), 200);
    Set<String> missing = new TreeSet<>();
    long deadline = System.nanoTime() + 30_000_000_000L;
    do {
      missing.clear();
      String scrape = app.scrape();
      for (Path file : new Path[] {RULES, DASHBOARD}) {
        Matcher m = METRIC.matcher(Files.readString(file));
        while (m.find()) {
          if (!Pattern.compile("(?m)^" + m.group(1) + "[{ ]").matcher(scrape).find()) {
            missing.add(m.group(1) + " (" + file.getFileName() + ")");
          }
        }
      }
      Thread.sleep(200);
    } while (!missing.isEmpty() && System.nanoTime() < deadline);
    assertTrue(missing.isEmpty(), "named but not exported: " + missing);
  }

  @Test
  void everyRouteMatcherInTheRulesMatchesARealRouteLabel() throws IOException {
    // The callback 5xx alert selects callbacks by Vert.x's route label: a route renamed or
    // re-mounted must not leave it selecting nothing.
    app.truncate();
    app.setStock("A", 10);
    app.createOrder(order("R1", "u1", null, "A", 1, 500));
    app.callback(payment("TR1", "R1", 500));
    Set<String> routes = new TreeSet<>();
    Matcher label = Pattern.compile("(?m)^vertx_http_server_requests_total\\{[^}]*route=\"([^\"]*)\"").matcher(app.scrape());
    while (label.find()) {
      routes.add(label.group(1));
    }
    Matcher matcher = Pattern.compile("route=~\"([^\"]+)\"").matcher(Files.readString(RULES) + Files.readString(DASHBOARD));
    int checked = 0;
    while (matcher.find()) {
      // Prometheus anchors a label regex at both ends, as String.matches does.
      String regex = matcher.group(1).replace("\\\\", "\\");
      assertTrue(routes.stream().anyMatch(r -> r.matches(regex)), "route=~\"" + regex + "\" matches none of " + routes);
      checked++;
    }
    assertTrue(checked >= 2, "route matchers found: " + checked);
  }

  @Test
  void theDashboardIsAGrafanaDocumentWithAQueryPerPanel() throws IOException {
    JsonObject dashboard = new JsonObject(Files.readString(DASHBOARD));
    assertEquals("ordergate", dashboard.getString("uid"));
    long queries = dashboard.getJsonArray("panels").stream().map(JsonObject.class::cast)
        .filter(p -> !"row".equals(p.getString("type")))
        .peek(p -> assertTrue(!p.getJsonArray("targets").isEmpty(), p.getString("title")))
        .count();
    assertTrue(queries >= 20, "panels: " + queries);
  }
}
