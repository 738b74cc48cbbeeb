package dev.ordergate.outbox;

import dev.ordergate.db.ExceptionSql;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import dev.ordergate.domain.ExceptionKind;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code ordergate_outbox_delivery_total{type,result}} (counted when the relay's mark committed),
 * and the gauges {@code ordergate_outbox_pending}, {@code ordergate_outbox_oldest_pending_seconds},
 * {@code ordergate_outbox_dead}, {@code ordergate_exceptions_open{kind}},
 * {@code ordergate_exceptions_oldest_open_seconds{kind}} and {@code ordergate_exceptions_refund_failed},
 * read from the database by {@link #refresh(Pool, long)} (the relay calls it every 5 s). One instance per registry.
 */
public final class OutboxMetrics {

  private final MeterRegistry registry;
  private final AtomicLong pending = new AtomicLong();
  private final AtomicLong dead = new AtomicLong();
  private final AtomicLong refundFailed = new AtomicLong();
  private volatile double oldestPendingSeconds;
  private final Map<ExceptionKind, AtomicLong> open = new EnumMap<>(ExceptionKind.class);
  private final Map<ExceptionKind, AtomicLong> oldestOpenSeconds = new EnumMap<>(ExceptionKind.class);

  public OutboxMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("ordergate.outbox.pending", pending, AtomicLong::get)
        .description("Outbox events not yet delivered (nor dead)")
        .register(registry);
    Gauge.builder("ordergate.outbox.oldest.pending", this, m -> m.oldestPendingSeconds)
        .description("Age in seconds of the oldest outbox event not yet delivered (0: none pending)")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder("ordergate.outbox.dead", dead, AtomicLong::get)
        .description("Outbox events given up after maxAttempts (DEAD), waiting for an operator")
        .register(registry);
    Gauge.builder("ordergate.exceptions.refund.failed", refundFailed, AtomicLong::get)
        .description("Exception orders whose refund request died (REFUND_FAILED)")
        .register(registry);
    for (ExceptionKind kind : ExceptionKind.values()) {
      AtomicLong n = new AtomicLong();
      open.put(kind, n);
      Gauge.builder("ordergate.exceptions.open", n, AtomicLong::get)
          .description("Exception orders not yet closed (refunded or resolved)")
          .tag("kind", kind.name())
          .register(registry);
      AtomicLong age = new AtomicLong();
      oldestOpenSeconds.put(kind, age);
      Gauge.builder("ordergate.exceptions.oldest.open", age, AtomicLong::get)
          .description("Age in seconds of the oldest exception order not yet closed (0: none)")
          .baseUnit("seconds")
          .tag("kind", kind.name())
          .register(registry);
    }
  }

  /** {@code result}: delivered, retry (failed, will be retried) or dead. */
  public void delivery(OutboxEventType type, String result) {
    deliveries.computeIfAbsent(type.name() + '/' + result, k -> Counter.builder("ordergate.outbox.delivery")
        .description("Outbox delivery attempts by event type and result")
        .tag("type", type.name())
        .tag("result", result)
        .register(registry)).increment();
  }

  /** Counters by type and result, registered once (a lookup per event costs more than the increment). */
  private final Map<String, Counter> deliveries = new java.util.concurrent.ConcurrentHashMap<>();

  /** Events made DEAD because their last attempt was lost with its lease (counted as dead, type unknown here). */
  public void exhausted(long n) {
    Counter.builder("ordergate.outbox.exhausted")
        .description("Outbox events made DEAD because their last attempt was never answered within its lease")
        .register(registry)
        .increment(n);
  }

  /** Delivered events removed by the retention ({@code outbox.retentionHours}). */
  public void pruned(long n) {
    Counter.builder("ordergate.outbox.pruned")
        .description("Delivered outbox events deleted by the retention")
        .register(registry)
        .increment(n);
  }

  /** {@code floor}: the relay's ({@link OutboxSql#COUNT_PENDING} walks the fresh events from it). */
  public Future<Void> refresh(Pool pool, long floor) {
    return pool.withTransaction(conn -> conn.query(OutboxSql.CLAIM_PLAN).execute()
            .compose(x -> conn.preparedQuery(OutboxSql.COUNT_PENDING).execute(Params.of(floor))))
        .map(rows -> {
          var row = rows.iterator().next();
          pending.set(row.getLong("pending"));
          oldestPendingSeconds = row.getDouble("oldest_pending_s");
          dead.set(row.getLong("dead"));
          return null;
        })
        .compose(v -> pool.query(ExceptionSql.OPEN_COUNTS).execute())
        .map(rows -> {
          open.values().forEach(n -> n.set(0));
          oldestOpenSeconds.values().forEach(n -> n.set(0));
          long failed = 0;
          for (var r : rows) {
            ExceptionKind kind = ExceptionKind.valueOf(r.getString("kind"));
            open.get(kind).set(r.getLong("n"));
            oldestOpenSeconds.get(kind).set((long) Math.floor(r.getDouble("oldest_s")));
            failed += r.getLong("refund_failed");
          }
          refundFailed.set(failed);
          return null;
        });
  }
}
