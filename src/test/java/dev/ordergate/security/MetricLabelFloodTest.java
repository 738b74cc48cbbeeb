package dev.ordergate.security;

import dev.ordergate.metrics.Metrics;
import dev.ordergate.support.AppTest;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outside review's flood: unauthenticated requests with random 200-letter methods (and random
 * paths) grew {@code /metrics} by a series per method. Client-chosen label values must map to a
 * fixed set, so the scrape stays small. (Without {@link Metrics#newRegistry()}'s filters this test
 * measured a scrape of several MB.)
 */
class MetricLabelFloodTest extends AppTest {

  private static final int REQUESTS = 3_000;

  @Test
  void randomMethodsAndPathsDoNotGrowTheScrape() {
    // Warm up the meters every ordinary request creates, so the baseline holds them.
    for (String m : List.of("GET", "POST", "PUT", "DELETE")) {
      app.call(HttpMethod.valueOf(m), "/api/orders/NOPE", null, false);
    }
    int before = app.scrape().length();
    int metersBefore = app.registry.getMeters().size();
    // The cap must never bite in normal operation: the service's own meters stay far below it.
    assertTrue(metersBefore < Metrics.MAX_METERS / 4, metersBefore + " meters");
    Random rng = new Random(42);
    List<String> sentMethods = new ArrayList<>();
    for (int sent = 0; sent < REQUESTS; ) {
      List<Future<?>> wave = new ArrayList<>();
      for (int i = 0; i < 50 && sent < REQUESTS; i++, sent++) {
        String method = letters(rng, 200);
        sentMethods.add(method);
        wave.add(app.http.request(HttpMethod.valueOf(method), "/" + letters(rng, 40) + "/" + rng.nextInt()).send()
            .otherwiseEmpty());
      }
      Future.join(wave).await();
    }
    String scrape = app.scrape();
    int growth = scrape.length() - before;
    assertTrue(growth < 16_384, "the scrape grew by " + growth + " bytes (from " + before + ")");
    for (String m : sentMethods.subList(0, 100)) {
      assertFalse(scrape.contains(m), "a client-chosen method became a label value");
    }
    assertTrue(scrape.contains("method=\"OTHER\""), "unknown methods are counted as OTHER");
    assertTrue(app.registry.getMeters().size() <= Metrics.MAX_METERS);
    System.out.printf("metric label flood: %d meters before, %d after; scrape %d bytes before, +%d after %d requests%n",
        metersBefore, app.registry.getMeters().size(), before, growth, REQUESTS);
    // They were counted, not dropped: the 3,000 requests are all in the OTHER series.
    double other = app.registry.find("vertx.http.server.requests").tag("method", "OTHER").counters().stream()
        .mapToDouble(c -> c.count()).sum();
    assertEquals(REQUESTS, other, 0.0);
  }

  private static String letters(Random rng, int n) {
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) ('A' + rng.nextInt(26)));
    }
    return b.toString();
  }
}
