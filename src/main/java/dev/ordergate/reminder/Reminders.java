package dev.ordergate.reminder;

import dev.ordergate.config.RemindersConfig;
import dev.ordergate.db.Params;
import dev.ordergate.lifecycle.OnContext;
import dev.ordergate.outbox.OutboxSignal;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Supplier;

/**
 * Payment reminders: one NOTIFY_SMS {@value #TEMPLATE} per pending order, {@code beforeSeconds}
 * before its expiry, at most once, never after the order left PENDING_PAYMENT or expired (both
 * decided inside one statement, {@link ReminderSql}). The triggers only say "look now":
 * <ul>
 *   <li>the database scan, re-armed with {@code setTimer} after each run (the reliable default);</li>
 *   <li>optionally Redis expiry events ({@link RedisReminderTrigger}), which may be late or lost;
 *       the scan covers what they miss.</li>
 * </ul>
 * This package cannot cancel an order: it has no access to the gate ({@code ReminderPackageTest}
 * reads its class files), and none of its statements writes {@code orders}.
 * The scan's state is touched on the context the reminders were created on; {@link #start()} and
 * {@link #stop()} hop to it, and {@code stop()} completes once the scan in flight has ended.
 */
public final class Reminders {

  /** Who noticed that a reminder is due (stored with the reminder). */
  public enum Trigger { DB_SCAN, REDIS_EXPIRY }

  public static final String TEMPLATE = "payment_reminder";

  private static final Logger log = LoggerFactory.getLogger(Reminders.class);

  private final Context context;
  private final Pool pool;
  private final RemindersConfig config;
  private final OutboxSignal signal;
  private final String instanceId;
  private final ReminderMetrics metrics;
  private final RedisReminderTrigger redis;
  private long timerId = -1;
  /** Read by a scan between its batches, which may run off the context (scanNow). */
  private volatile boolean stopped;
  /** The timer's scan in flight, or the last one's outcome. */
  private Future<Integer> scanning = Future.succeededFuture(0);

  public Reminders(Vertx vertx, Pool pool, RemindersConfig config, OutboxSignal signal, MeterRegistry registry,
                   String instanceId) {
    this.context = vertx.getOrCreateContext();
    this.pool = pool;
    this.config = config;
    this.signal = signal;
    this.instanceId = instanceId;
    this.metrics = new ReminderMetrics(registry);
    this.redis = config.redisEnabled() ? new RedisReminderTrigger(vertx, config, metrics, this, instanceId) : null;
  }

  public Future<Void> start() {
    return onContext(() -> {
      stopped = false;
      log.info("payment reminders {} s before expiry on instance {}: scan every {} ms{}", config.beforeSeconds(),
          instanceId, config.scanMs(), redis == null ? "" : ", Redis expiry events at " + config.redisUrl());
      arm(config.scanMs());
      // Redis is optional: the service starts without it, and the trigger keeps reconnecting.
      return redis == null ? Future.succeededFuture() : redis.start().recover(err -> Future.succeededFuture());
    });
  }

  /**
   * No scan is armed after this, and the answer comes once the scan in flight (if any) has ended: a
   * reminder it sends is sent before stop() completes, never after.
   */
  public Future<Void> stop() {
    return onContext(() -> {
      stopped = true;
      if (timerId >= 0) {
        context.owner().cancelTimer(timerId);
        timerId = -1;
      }
      Future<Void> scanEnded = scanning.transform(ignored -> Future.succeededFuture());
      return redis == null ? scanEnded : scanEnded.compose(v -> redis.stop());
    });
  }

  /** Order creation's after-commit hook: the Redis trigger writes the order's reminder key. */
  public void orderCreated(JsonObject order) {
    if (redis != null) {
      redis.orderCreated(order);
    }
  }

  /** Redis subscription state for /health/ready; null when Redis is not configured. */
  public Boolean redisSubscribed() {
    return redis == null ? null : redis.subscribed();
  }

  RedisReminderTrigger redis() {
    return redis;
  }

  private void arm(long delayMs) {
    if (stopped) {
      return;
    }
    timerId = context.owner().setTimer(Math.max(1, delayMs), id -> {
      timerId = -1;
      scanning = scanNow().onComplete(ar -> {
        if (ar.failed()) {
          log.warn("reminder scan on instance {} failed: {}", instanceId, ar.cause().toString());
        }
        arm(config.scanMs());
      });
    });
  }

  private <T> Future<T> onContext(Supplier<Future<T>> work) {
    return OnContext.run(context, work);
  }

  /** One scan: sends every due reminder, batch after batch; answers how many this instance sent. */
  public Future<Integer> scanNow() {
    return scanBatches(0);
  }

  private Future<Integer> scanBatches(int sentSoFar) {
    return pool.preparedQuery(ReminderSql.SEND_DUE)
        .execute(Params.of(config.beforeSeconds(), config.batchSize(), Trigger.DB_SCAN.name(), instanceId, TEMPLATE))
        .compose(rows -> {
          int n = sent(rows, Trigger.DB_SCAN);
          return n >= config.batchSize() && !stopped ? scanBatches(sentSoFar + n) : Future.succeededFuture(sentSoFar + n);
        });
  }

  /** Sends the named orders' reminders if they are due and not yet sent; answers how many were sent. */
  public Future<Integer> remind(List<String> orderNos, Trigger trigger) {
    if (orderNos.isEmpty()) {
      return Future.succeededFuture(0);
    }
    return pool.preparedQuery(ReminderSql.SEND_FOR)
        .execute(Params.of(config.beforeSeconds(), orderNos.toArray(String[]::new), trigger.name(), instanceId,
            TEMPLATE))
        .map(rows -> sent(rows, trigger));
  }

  private int sent(RowSet<Row> rows, Trigger trigger) {
    for (Row r : rows) {
      metrics.sent(trigger, r.getDouble("lateness_seconds"));
      log.debug("payment reminder for order {} sent ({})", r.getString("order_no"), trigger);
    }
    if (rows.size() > 0) {
      signal.signal();
    }
    return rows.size();
  }
}
