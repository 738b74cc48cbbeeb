package dev.ordergate.outbox;

import dev.ordergate.config.ChannelConfig;
import dev.ordergate.config.OutboxConfig;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Delivers outbox events after their transaction committed, at least once, in order per order
 * number. All state is in the database, so a restart loses nothing:
 * <ol>
 *   <li>claim: one short statement takes up to {@code batchSize} due events with
 *       {@code FOR UPDATE SKIP LOCKED} and sets a lease ({@code claimed_until}, a fresh claim
 *       token) and counts the attempt. Other relays skip claimed rows, so several instances never
 *       deliver one event at the same time. An event waits while an earlier event of its order is
 *       pending;</li>
 *   <li>deliver over HTTP ({@code Idempotency-Key} = event id; 2xx = delivered) or to the log;</li>
 *   <li>mark under the claim token: DELIVERED, or back-off ({@code baseDelayMs * 2^(attempt-1)},
 *       capped at {@code maxDelayMs}), or DEAD after {@code maxAttempts}. A relay that died or
 *       stopped mid-delivery marks nothing; its lease runs out and the event is delivered again.</li>
 * </ol>
 * Runs never overlap on one instance: a timer re-armed after each run, plus a nudge after a
 * commit that wrote events ({@link OutboxSignal}).
 */
public final class OutboxRelay extends VerticleBase {

  private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
  private static final long GAUGE_REFRESH_MS = 5_000;
  private static final int ERROR_MAX = 500;

  private final Pool pool;
  private final OutboxConfig config;
  private final Map<String, ChannelConfig> channels;
  private final OutboxMetrics metrics;
  private final OutboxSignal signal;
  private final String instanceId;
  private final Runnable listener = this::nudgeFromAnyThread;

  private WebClient client;
  private long timerId = -1;
  private boolean running;
  private boolean again;
  private boolean stopped;
  private long gaugesRefreshedAt;

  public OutboxRelay(Pool pool, OutboxConfig config, Map<String, ChannelConfig> channels, OutboxMetrics metrics,
                     OutboxSignal signal, String instanceId) {
    this.pool = pool;
    this.config = config;
    this.channels = channels;
    this.metrics = metrics;
    this.signal = signal;
    this.instanceId = instanceId;
  }

  @Override
  public Future<?> start() {
    client = WebClient.create(vertx, new WebClientOptions()
        .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, config.httpTimeoutMs()))
        .setUserAgent("ordergate-outbox"));
    signal.listen(listener);
    log.info("outbox relay {} started (poll {} ms, batch {}, {} attempts, lease {} ms)", instanceId,
        config.pollMs(), config.batchSize(), config.maxAttempts(), config.leaseMs());
    context.runOnContext(v -> run());
    return Future.succeededFuture();
  }

  /** Stops claiming; deliveries in flight are abandoned unmarked, and their leases bring them back. */
  @Override
  public Future<?> stop() {
    stopped = true;
    signal.unlisten(listener);
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
    }
    client.close();
    return Future.succeededFuture();
  }

  private void nudgeFromAnyThread() {
    context.runOnContext(v -> nudge());
  }

  /** Runs now unless a run is going on, in which case another run follows it at once. */
  void nudge() {
    if (stopped) {
      return;
    }
    if (running) {
      again = true;
      return;
    }
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    run();
  }

  private void run() {
    if (stopped) {
      return;
    }
    running = true;
    again = false;
    runOnce().onComplete(ar -> {
      running = false;
      long delay;
      if (ar.failed()) {
        log.warn("outbox relay {}: run failed: {}", instanceId, ar.cause().toString());
        delay = config.pollMs();
      } else {
        delay = again ? 1 : Math.max(1, ar.result());
      }
      if (!stopped) {
        timerId = vertx.setTimer(delay, t -> {
          timerId = -1;
          run();
        });
      }
    });
  }

  /**
   * One batch. Returns 0 to run again at once (the batch was full, or a delivery may have
   * unblocked the next event of its order), otherwise the delay before the next run: the poll
   * period, or sooner when a retry falls due earlier.
   */
  private Future<Long> runOnce() {
    UUID token = UUID.randomUUID();
    return refreshGauges()
        .compose(v -> pool.preparedQuery(OutboxSql.CLAIM)
            .execute(Params.of(config.batchSize(), config.leaseMs(), instanceId, token)))
        .compose(rows -> deliverAll(rows, token).map(soonest -> rows.size() >= config.batchSize() ? 0L : soonest));
  }

  private Future<Long> deliverAll(RowSet<Row> rows, UUID token) {
    List<Future<Long>> each = new ArrayList<>();
    for (Row row : rows) {
      OutboxEvent event = OutboxEvent.of(row);
      each.add(deliver(event).transform(ar -> {
        if (stopped) {
          return Future.succeededFuture(Long.MAX_VALUE);
        }
        return ar.succeeded() ? markDelivered(event, token) : markFailed(event, token, ar.cause());
      }));
    }
    return Future.join(each).transform(ar -> {
      long soonest = config.pollMs();
      for (Future<Long> f : each) {
        if (f.succeeded()) {
          soonest = Math.min(soonest, f.result());
        } else {
          log.warn("outbox relay {}: marking an event failed: {}", instanceId, f.cause().toString());
        }
      }
      return Future.succeededFuture(soonest);
    });
  }

  private Future<Void> deliver(OutboxEvent event) {
    String url;
    JsonObject body;
    if (event.type() == OutboxEventType.REFUND_REQUESTED) {
      ChannelConfig channel = channels.get(event.payload().getString("channel"));
      url = channel == null ? null : channel.refundUrl();
      if (url == null) {
        return Future.failedFuture(new IllegalStateException(
            "channel " + event.payload().getString("channel") + " has no refundUrl"));
      }
      body = event.refundRequest();
    } else {
      url = config.sinkUrls().get(event.type().name());
      body = event.envelope();
    }
    if (url == null) {
      log.info("outbox {} {} order {} (log sink): {}", event.type(), event.id(), event.orderNo(), event.payload().encode());
      return Future.succeededFuture();
    }
    return client.postAbs(url)
        .putHeader("Idempotency-Key", event.id().toString())
        .timeout(config.httpTimeoutMs())
        .sendJsonObject(body)
        .compose(resp -> resp.statusCode() / 100 == 2
            ? Future.<Void>succeededFuture()
            : Future.failedFuture(new IllegalStateException("HTTP " + resp.statusCode() + " from " + url)));
  }

  /** Marks a delivery; answers 0: the order's next event may be due now. */
  private Future<Long> markDelivered(OutboxEvent event, UUID token) {
    return pool.preparedQuery(OutboxSql.MARK_DELIVERED).execute(Params.of(event.id(), token, instanceId))
        .map(rows -> {
          if (rows.size() == 1) {
            metrics.delivery(event.type(), "delivered");
            log.debug("outbox {} {} order {} delivered (attempt {})", event.type(), event.id(), event.orderNo(),
                event.attempts());
          } else {
            log.warn("outbox {} {} delivered, but no longer under this claim (lease ran out, or the event is gone)",
                event.type(), event.id());
          }
          return 0L;
        });
  }

  /** Marks a failed attempt; answers how soon the event is due again. */
  private Future<Long> markFailed(OutboxEvent event, UUID token, Throwable cause) {
    String error = String.valueOf(cause.getMessage() == null ? cause.toString() : cause.getMessage());
    if (error.length() > ERROR_MAX) {
      error = error.substring(0, ERROR_MAX);
    }
    String reason = error;
    return pool.preparedQuery(OutboxSql.MARK_FAILED).execute(Params.of(event.id(), token, reason,
            config.maxAttempts(), (double) config.baseDelayMs(), (double) config.maxDelayMs(), instanceId))
        .map(rows -> {
          if (rows.size() == 0) {
            return config.pollMs();
          }
          Row r = rows.iterator().next();
          if ("DEAD".equals(r.getString("status"))) {
            metrics.delivery(event.type(), "dead");
            log.error("outbox {} {} order {} is DEAD after {} attempts: {}", event.type(), event.id(),
                event.orderNo(), r.getInteger("attempts"), reason);
            return config.pollMs();
          }
          metrics.delivery(event.type(), "retry");
          long retryIn = r.getLong("retry_in_ms");
          log.warn("outbox {} {} order {} attempt {} failed ({}); retry in {} ms", event.type(), event.id(),
              event.orderNo(), r.getInteger("attempts"), reason, retryIn);
          return Math.max(1, retryIn);
        });
  }

  private Future<Void> refreshGauges() {
    long now = System.currentTimeMillis();
    if (now - gaugesRefreshedAt < GAUGE_REFRESH_MS) {
      return Future.succeededFuture();
    }
    gaugesRefreshedAt = now;
    return metrics.refresh(pool).recover(err -> {
      log.warn("outbox relay {}: gauges not refreshed: {}", instanceId, err.toString());
      return Future.succeededFuture();
    });
  }
}
