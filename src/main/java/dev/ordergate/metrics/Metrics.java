package dev.ordergate.metrics;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The service's own meters, on the registry that {@code GET /metrics} scrapes. */
public final class Metrics {

  /** Request methods kept as a label value; any other method a client sends counts as {@code OTHER}. */
  public static final Set<String> METHODS =
      Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT");
  /** Distinct values of Vert.x's {@code route} label kept (routes are ours, but a cap costs nothing). */
  static final int MAX_ROUTES = 200;
  /**
   * Meters in the registry, all kinds together: about 250 in service; above it new meters are
   * dropped, so no label a client can influence grows the registry (and {@code /metrics}) without bound.
   */
  public static final int MAX_METERS = 2_000;

  private final MeterRegistry registry;
  /**
   * Counters by name and label values: registering looks a meter up by building its id, which
   * costs more than the increment on the callback path.
   */
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  public Metrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * The registry {@code /metrics} scrapes, with its label limits: client-chosen label values (the
   * request method) are mapped to a fixed set, route labels and the meter count are capped.
   */
  public static PrometheusMeterRegistry newRegistry() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config()
        .meterFilter(MeterFilter.replaceTagValues("method", m -> METHODS.contains(m) ? m : "OTHER"))
        .meterFilter(MeterFilter.maximumAllowableTags("vertx.http", "route", MAX_ROUTES, MeterFilter.deny()))
        .meterFilter(MeterFilter.maximumAllowableMetrics(MAX_METERS));
    return registry;
  }

  /** A Vert.x instance whose HTTP, pool and event-bus meters go to {@code registry}. */
  public static Vertx vertx(PrometheusMeterRegistry registry) {
    return Vertx.builder()
        .with(new VertxOptions().setPreferNativeTransport(true).setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true).addLabels(Label.HTTP_ROUTE)))
        .withMetrics(new MicrometerMetricsFactory(registry))
        .build();
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** {@code ordergate_callbacks_total{channel,outcome,duplicate}}; rejected callbacks count under their error code. */
  public void callback(String channel, String outcome, boolean duplicate) {
    counter("ordergate.callbacks", "Payment callbacks by channel and outcome",
        "channel", channel, "outcome", outcome, "duplicate", Boolean.toString(duplicate)).increment();
  }

  public void callback(String channel, CallbackOutcome outcome, boolean duplicate) {
    callback(channel, outcome.name(), duplicate);
  }

  /** {@code ordergate_callback_conflicts_total{channel}}: SUCCESS duplicates unlike the first SUCCESS of their txn. */
  public void callbackConflict(String channel) {
    counter("ordergate.callback.conflicts", "SUCCESS duplicates whose order or amount differs from the first",
        "channel", channel).increment();
  }

  /**
   * {@code ordergate_gate_batches_total{path}}: payment batches by the way they went through the gate, counted after
   * commit. {@code statement}: first payments that all won, one statement without {@code BEGIN} and {@code COMMIT};
   * {@code again}: first payments of which one lost, that statement undone and the batch run again in a transaction;
   * {@code transaction}: any other batch, in a transaction at once.
   */
  public void gateBatch(String path) {
    counter("ordergate.gate.batches", "Payment batches by the way they went through the gate", "path", path).increment();
  }

  /** {@code ordergate_transitions_total{source,to}}, counted after commit. */
  public void transitions(TransitionSource source, OrderStatus to, int count) {
    if (count <= 0) {
      return;
    }
    counter("ordergate.transitions", "Committed order status transitions",
        "source", source.name(), "to", to.name()).increment(count);
  }

  /** The counter {@code name} with these tags (key, value, key, value, ...), registered once. */
  private Counter counter(String name, String description, String... tags) {
    return counters.computeIfAbsent(name + '\u0000' + String.join("\u0000", tags),
        k -> Counter.builder(name).description(description).tags(tags).register(registry));
  }
}
