package dev.ordergate.outbox;

import dev.ordergate.db.ExceptionSql;
import dev.ordergate.db.OutboxSql;
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
 * and the gauges {@code ordergate_outbox_pending} and {@code ordergate_exceptions_open{kind}},
 * read from the database by {@link #refresh(Pool)}. One instance per registry.
 */
public final class OutboxMetrics {

  private final MeterRegistry registry;
  private final AtomicLong pending = new AtomicLong();
  private final Map<ExceptionKind, AtomicLong> open = new EnumMap<>(ExceptionKind.class);

  public OutboxMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder("ordergate.outbox.pending", pending, AtomicLong::get)
        .description("Outbox events not yet delivered (nor dead)")
        .register(registry);
    for (ExceptionKind kind : ExceptionKind.values()) {
      AtomicLong n = new AtomicLong();
      open.put(kind, n);
      Gauge.builder("ordergate.exceptions.open", n, AtomicLong::get)
          .description("Exception orders not yet closed (refunded or resolved)")
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

  public Future<Void> refresh(Pool pool) {
    return pool.query(OutboxSql.COUNT_PENDING).execute()
        .map(rows -> {
          pending.set(rows.iterator().next().getLong(0));
          return null;
        })
        .compose(v -> pool.query(ExceptionSql.OPEN_COUNTS).execute())
        .map(rows -> {
          open.values().forEach(n -> n.set(0));
          rows.forEach(r -> open.get(ExceptionKind.valueOf(r.getString("kind"))).set(r.getLong("n")));
          return null;
        });
  }
}
