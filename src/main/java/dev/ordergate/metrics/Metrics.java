package dev.ordergate.metrics;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The service's own meters, on the registry that {@code GET /metrics} scrapes. */
public final class Metrics {

  private final MeterRegistry registry;
  /**
   * Counters by name and label values: registering looks a meter up by building its id, which
   * costs more than the increment on the callback path.
   */
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();

  public Metrics(MeterRegistry registry) {
    this.registry = registry;
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
