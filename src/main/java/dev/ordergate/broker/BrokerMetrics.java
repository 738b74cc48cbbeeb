package dev.ordergate.broker;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The broker tier's meters: {@code ordergate_broker_published_total{queue,result}} (ok, nacked,
 * unknown = no confirm in time or connection lost, not_connected, dropped_expired = expired while
 * the broker was unreachable, left to the fallback), {@code ordergate_broker_consumed_total{outcome}}
 * (cancelled, closed, routed, early, busy, retry, poison), {@code ordergate_broker_redeliveries_total},
 * and {@code ordergate_broker_cancel_lateness_seconds} (cancelledAt - expiresAt of this tier's
 * cancellations). The fallback's catches are {@code ordergate_fallback_cancellations_total} (the sweep's).
 */
final class BrokerMetrics {

  private static final Duration[] BUCKETS = {
      Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
      Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
      Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofMinutes(1),
      Duration.ofMinutes(5)};

  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Counter redeliveries;
  private final Timer lateness;

  BrokerMetrics(MeterRegistry registry) {
    this.registry = registry;
    redeliveries = Counter.builder("ordergate.broker.redeliveries")
        .description("Timeout messages delivered again (redelivered flag set)").register(registry);
    lateness = Timer.builder("ordergate.broker.cancel.lateness")
        .description("Time between an order's expiry and its cancellation by a timeout message")
        .serviceLevelObjectives(BUCKETS).register(registry);
  }

  void published(String queue, String result) {
    counters.computeIfAbsent("p\u0000" + queue + "\u0000" + result, k -> Counter.builder("ordergate.broker.published")
        .description("Timeout messages published, by queue and confirm result")
        .tags("queue", queue, "result", result).register(registry)).increment();
  }

  void consumed(String outcome) {
    counters.computeIfAbsent("c\u0000" + outcome, k -> Counter.builder("ordergate.broker.consumed")
        .description("Timeout messages consumed, by outcome").tags("outcome", outcome).register(registry)).increment();
  }

  void redelivered() {
    redeliveries.increment();
  }

  void cancelled(double latenessSeconds) {
    lateness.record((long) (Math.max(0, latenessSeconds) * 1e9), TimeUnit.NANOSECONDS);
  }
}
