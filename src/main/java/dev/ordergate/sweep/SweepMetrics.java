package dev.ordergate.sweep;

import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sweep's meters: {@code ordergate_sweep_runs_total{result}}, {@code ordergate_sweep_cancelled_total},
 * {@code ordergate_sweep_duration_seconds}, {@code ordergate_cancel_lateness_seconds} (histogram of
 * cancelledAt - expiresAt of sweep cancellations), {@code ordergate_overdue_orders} (pending orders
 * past expiry + grace, measured at the end of each run: what the run left behind) and
 * {@code ordergate_sweep_last_run_timestamp_seconds} (when the last run finished; 0 before the first).
 * With the broker tier on, the sweep is its fallback, and {@code ordergate_fallback_cancellations_total}
 * counts the orders it had to cancel because no timeout message did (the broker tier's miss rate).
 */
public final class SweepMetrics {

  private static final Duration[] LATENESS_BUCKETS = {
      Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(1500),
      Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30),
      Duration.ofMinutes(1), Duration.ofMinutes(2), Duration.ofMinutes(5), Duration.ofMinutes(10),
      Duration.ofMinutes(30), Duration.ofHours(1)};

  private final Metrics metrics;
  private final Counter ok;
  private final Counter failed;
  private final Counter cancelled;
  private final Timer duration;
  /** A Timer, not a DistributionSummary: its buckets place sub-second values exactly (nanoseconds). */
  private final Timer lateness;
  private final AtomicLong overdue = new AtomicLong();
  private final AtomicLong lastRunEpochSeconds = new AtomicLong();
  /** Null unless the sweep is the broker tier's fallback. */
  private final Counter fallback;

  public SweepMetrics(Metrics metrics) {
    this(metrics, false);
  }

  public SweepMetrics(Metrics metrics, boolean fallbackOfBrokerTier) {
    this.metrics = metrics;
    fallback = fallbackOfBrokerTier ? Counter.builder("ordergate.fallback.cancellations")
        .description("Orders the fallback sweep cancelled because no timeout message did")
        .register(metrics.registry()) : null;
    MeterRegistry registry = metrics.registry();
    ok = runs(registry, "ok");
    failed = runs(registry, "error");
    cancelled = Counter.builder("ordergate.sweep.cancelled")
        .description("Orders cancelled by the timeout sweep").register(registry);
    duration = Timer.builder("ordergate.sweep.duration")
        .description("Duration of sweep runs").register(registry);
    lateness = Timer.builder("ordergate.cancel.lateness")
        .description("Time between an order's expiry and its cancellation by the sweep")
        .serviceLevelObjectives(LATENESS_BUCKETS)
        .register(registry);
    Gauge.builder("ordergate.overdue.orders", overdue, AtomicLong::get)
        .description("Pending orders past expiry + grace, measured at the end of the last sweep run")
        .register(registry);
    Gauge.builder("ordergate.sweep.last.run.timestamp", lastRunEpochSeconds, AtomicLong::get)
        .description("Unix time (s) when the last sweep run finished, whatever its result; 0 before the first")
        .baseUnit("seconds")
        .register(registry);
  }

  private static Counter runs(MeterRegistry registry, String result) {
    return Counter.builder("ordergate.sweep.runs").description("Sweep runs by result")
        .tag("result", result).register(registry);
  }

  void run(boolean succeeded, long nanos) {
    (succeeded ? ok : failed).increment();
    duration.record(nanos, TimeUnit.NANOSECONDS);
    lastRunEpochSeconds.set(System.currentTimeMillis() / 1000);
  }

  /** After a batch committed. */
  void cancelled(double[] latenessSeconds) {
    if (latenessSeconds.length == 0) {
      return;
    }
    cancelled.increment(latenessSeconds.length);
    if (fallback != null) {
      fallback.increment(latenessSeconds.length);
    }
    metrics.transitions(TransitionSource.TIMEOUT_SWEEP, OrderStatus.CANCELLED, latenessSeconds.length);
    for (double s : latenessSeconds) {
      lateness.record((long) (Math.max(0, s) * 1e9), TimeUnit.NANOSECONDS);
    }
  }

  void overdue(long count) {
    overdue.set(count);
  }
}
