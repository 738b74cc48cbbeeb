package dev.ordergate.sweep;

import dev.ordergate.domain.OrderStatus;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.metrics.Metrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sweep's meters: {@code ordergate_sweep_runs_total{result}}, {@code ordergate_sweep_cancelled_total},
 * {@code ordergate_sweep_duration_seconds}, {@code ordergate_cancel_lateness_seconds} (histogram of
 * cancelledAt - expiresAt of sweep cancellations) and {@code ordergate_overdue_orders} (pending orders
 * past expiry + grace, measured at the end of each run: what the run left behind).
 */
public final class SweepMetrics {

  private static final double[] LATENESS_BUCKETS =
      {0.25, 0.5, 1, 1.5, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};

  private final Metrics metrics;
  private final Counter ok;
  private final Counter failed;
  private final Counter cancelled;
  private final Timer duration;
  private final DistributionSummary lateness;
  private final AtomicLong overdue = new AtomicLong();

  public SweepMetrics(Metrics metrics) {
    this.metrics = metrics;
    MeterRegistry registry = metrics.registry();
    ok = runs(registry, "ok");
    failed = runs(registry, "error");
    cancelled = Counter.builder("ordergate.sweep.cancelled")
        .description("Orders cancelled by the timeout sweep").register(registry);
    duration = Timer.builder("ordergate.sweep.duration")
        .description("Duration of sweep runs").register(registry);
    lateness = DistributionSummary.builder("ordergate.cancel.lateness")
        .description("Seconds between an order's expiry and its cancellation by the sweep")
        .baseUnit("seconds")
        .serviceLevelObjectives(LATENESS_BUCKETS)
        .register(registry);
    Gauge.builder("ordergate.overdue.orders", overdue, AtomicLong::get)
        .description("Pending orders past expiry + grace, measured at the end of the last sweep run")
        .register(registry);
  }

  private static Counter runs(MeterRegistry registry, String result) {
    return Counter.builder("ordergate.sweep.runs").description("Sweep runs by result")
        .tag("result", result).register(registry);
  }

  void run(boolean succeeded, long nanos) {
    (succeeded ? ok : failed).increment();
    duration.record(nanos, TimeUnit.NANOSECONDS);
  }

  /** After a batch committed. */
  void cancelled(double[] latenessSeconds) {
    if (latenessSeconds.length == 0) {
      return;
    }
    cancelled.increment(latenessSeconds.length);
    metrics.transitions(TransitionSource.TIMEOUT_SWEEP, OrderStatus.CANCELLED, latenessSeconds.length);
    for (double s : latenessSeconds) {
      lateness.record(Math.max(0, s));
    }
  }

  void overdue(long count) {
    overdue.set(count);
  }
}
