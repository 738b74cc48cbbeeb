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
  /** Counters by label values: registering looks the meter up by building its id, on every callback. */
  private final Map<String, Counter> callbackCounters = new ConcurrentHashMap<>();

  public Metrics(MeterRegistry registry) {
    this.registry = registry;
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** {@code ordergate_callbacks_total{channel,outcome,duplicate}}; rejected callbacks count under their error code. */
  public void callback(String channel, String outcome, boolean duplicate) {
    callbackCounters.computeIfAbsent(channel + '\u0000' + outcome + '\u0000' + duplicate, k -> Counter.builder("ordergate.callbacks")
        .description("Payment callbacks by channel and outcome")
        .tag("channel", channel)
        .tag("outcome", outcome)
        .tag("duplicate", Boolean.toString(duplicate))
        .register(registry))
        .increment();
  }

  public void callback(String channel, CallbackOutcome outcome, boolean duplicate) {
    callback(channel, outcome.name(), duplicate);
  }

  /** {@code ordergate_transitions_total{source,to}}, counted after commit. */
  public void transitions(TransitionSource source, OrderStatus to, int count) {
    if (count <= 0) {
      return;
    }
    Counter.builder("ordergate.transitions")
        .description("Committed order status transitions")
        .tag("source", source.name())
        .tag("to", to.name())
        .register(registry)
        .increment(count);
  }
}
