package dev.ordergate.reminder;

import dev.ordergate.config.RemindersConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.ProtocolVersion;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * The optional Redis trigger for payment reminders. After an order's creation commits, a key
 * {@code <keyPrefix><orderNo>} is set to expire at the reminder's due time; a dedicated subscriber
 * connection listens on {@code __keyevent@<db>__:expired} and hands the order numbers of its keys
 * to {@link Reminders#remind}, which decides in the database whether to send.
 * <ul>
 *   <li>The service enables the {@code Ex} keyspace notifications itself (merged with flags already
 *       set; Redis without a config file forgets them on restart, so this runs on every connect).</li>
 *   <li>Expired events fire when Redis actually evicts the key, which can be late, and Pub/Sub loses
 *       every event while the subscriber is disconnected: the subscriber reconnects and
 *       re-subscribes after {@code reconnectMs}, and the database scan covers what was missed.</li>
 *   <li>Events reach every instance; the reminder's primary key makes the second one a no-op.</li>
 * </ul>
 * Paid or cancelled orders keep their key: the event then finds nothing to send. {@link #stop()}
 * answers once the reminder statement in flight has ended (events still queued are left to the scan),
 * and {@link #start()} may follow it: each start opens its own command client.
 */
final class RedisReminderTrigger {

  private static final Logger log = LoggerFactory.getLogger(RedisReminderTrigger.class);
  private static final String NOTIFY = "notify-keyspace-events";
  /** How often the notification flags are checked (someone may reset them; a Redis restart does). */
  private static final long FLAGS_CHECK_MS = 30_000;

  private final Vertx vertx;
  private final RemindersConfig config;
  private final ReminderMetrics metrics;
  private final Reminders reminders;
  private final String clientName;
  private final String channel;
  /** Opened by {@link #start()}, closed by {@link #stop()}; null before the first start. */
  private volatile Redis commands;
  private RedisConnection subscriber;
  private boolean subscribed;
  private volatile boolean stopped;
  private long reconnectTimer = -1;
  private long flagsTimer = -1;
  private final List<String> pending = new ArrayList<>();
  /** The reminder statement in flight, or the last one's outcome. */
  private Future<Integer> flushed = Future.succeededFuture(0);
  private boolean flushing;

  RedisReminderTrigger(Vertx vertx, RemindersConfig config, ReminderMetrics metrics, Reminders reminders,
                       String instanceId) {
    this.vertx = vertx;
    this.config = config;
    this.metrics = metrics;
    this.reminders = reminders;
    this.clientName = "ordergate-reminders-" + instanceId.replaceAll("[^A-Za-z0-9_.-]", "_");
    this.channel = "__keyevent@" + config.redisDb() + "__:expired";
  }

  Future<Void> start() {
    stopped = false;
    commands = Redis.createClient(vertx, new RedisOptions().setConnectionString(config.redisUrl())
        .setMaxPoolSize(4).setMaxPoolWaiting(10_000));
    flagsTimer = vertx.setPeriodic(FLAGS_CHECK_MS, id -> checkFlags());
    return subscribe().onFailure(err -> {
      log.warn("reminders: Redis subscriber not connected ({}); retrying every {} ms, the scan covers meanwhile",
          err.toString(), config.redisReconnectMs());
      scheduleReconnect();
    });
  }

  /** No event is taken after this; the answer comes once the reminder statement in flight has ended. */
  Future<Void> stop() {
    stopped = true;
    pending.clear();
    if (reconnectTimer >= 0) {
      vertx.cancelTimer(reconnectTimer);
      reconnectTimer = -1;
    }
    if (flagsTimer >= 0) {
      vertx.cancelTimer(flagsTimer);
      flagsTimer = -1;
    }
    RedisConnection conn = subscriber;
    subscriber = null;
    subscribed = false;
    Future<Void> closed = conn == null ? Future.succeededFuture() : conn.close().recover(err -> Future.succeededFuture());
    Redis client = commands;
    Future<Void> ended = closed.compose(v -> flushed.transform(ignored -> Future.succeededFuture()));
    // A stop without a start (the service's start failed before the reminders') has no client to close.
    return client == null ? ended : ended.eventually(client::close);
  }

  boolean subscribed() {
    return subscribed;
  }

  /** The subscriber's client name, as {@code CLIENT LIST} shows it. */
  String clientName() {
    return clientName;
  }

  String key(String orderNo) {
    return config.redisKeyPrefix() + orderNo;
  }

  void orderCreated(JsonObject order) {
    String orderNo = order.getString("orderNo");
    long dueAt;
    try {
      dueAt = Instant.parse(order.getString("expiresAt")).toEpochMilli() - config.beforeSeconds() * 1000;
    } catch (DateTimeParseException | NullPointerException e) {
      return;
    }
    Redis client = commands;
    if (dueAt <= System.currentTimeMillis() || client == null || stopped) {
      return; // already due, or the trigger is not running: the scan sends it
    }
    client.send(Request.cmd(Command.SET).arg(key(orderNo)).arg("1").arg("PXAT").arg(dueAt))
        .onFailure(err -> {
          metrics.keyNotWritten();
          log.debug("reminder key for order {} not written ({}); the scan will send it", orderNo, err.toString());
        });
  }

  private Future<Void> subscribe() {
    return Redis.createClient(vertx, new RedisOptions().setConnectionString(config.redisUrl())
            .setPreferredProtocolVersion(ProtocolVersion.RESP2))
        .connect()
        .compose(conn -> {
          if (stopped) {
            return conn.close();
          }
          conn.handler(this::onMessage);
          conn.exceptionHandler(err -> lost(conn, err.toString()));
          conn.endHandler(v -> lost(conn, "connection closed"));
          return conn.send(Request.cmd(Command.CLIENT).arg("SETNAME").arg(clientName))
              .compose(v -> conn.send(Request.cmd(Command.CONFIG).arg("GET").arg(NOTIFY)))
              .compose(resp -> enableNotifications(conn, resp.size() >= 2 ? resp.get(1).toString() : ""))
              .compose(v -> conn.send(Request.cmd(Command.SUBSCRIBE).arg(channel)))
              .map(v -> {
                subscriber = conn;
                subscribed = true;
                log.info("reminders: subscribed to {} ({})", channel, clientName);
                return (Void) null;
              })
              .onFailure(err -> conn.close());
        });
  }

  /** Puts the flags back if they were changed under a live subscription (the events would silently stop). */
  private void checkFlags() {
    if (!subscribed) {
      return;
    }
    commands.send(Request.cmd(Command.CONFIG).arg("GET").arg(NOTIFY))
        .compose(resp -> {
          String flags = resp.get(NOTIFY) != null ? resp.get(NOTIFY).toString()
              : resp.size() >= 2 ? resp.get(1).toString() : "";
          String merged = merge(flags);
          if (merged.equals(flags)) {
            return Future.<Void>succeededFuture();
          }
          log.warn("reminders: {} was changed to '{}' under the subscription; setting '{}' again (the scan "
              + "covered the gap)", NOTIFY, flags, merged);
          return commands.send(Request.cmd(Command.CONFIG).arg("SET").arg(NOTIFY).arg(merged)).mapEmpty();
        })
        .onFailure(err -> log.debug("reminders: flag check failed: {}", err.toString()));
  }

  /** Adds {@code E} (keyevent channel) and {@code x} (expired) to the flags already set. */
  private Future<Void> enableNotifications(RedisConnection conn, String flags) {
    String merged = merge(flags);
    if (merged.equals(flags)) {
      return Future.succeededFuture();
    }
    log.info("reminders: CONFIG SET {} '{}' (was '{}')", NOTIFY, merged, flags);
    return conn.send(Request.cmd(Command.CONFIG).arg("SET").arg(NOTIFY).arg(merged)).mapEmpty();
  }

  static String merge(String flags) {
    String out = flags == null ? "" : flags;
    if (out.indexOf('E') < 0) {
      out += "E";
    }
    if (out.indexOf('x') < 0 && out.indexOf('A') < 0) {
      out += "x";
    }
    return out;
  }

  private void lost(RedisConnection conn, String why) {
    if (conn != subscriber && subscriber != null) {
      return;
    }
    if (subscribed) {
      log.warn("reminders: Redis subscriber lost ({}); re-subscribing in {} ms, the scan covers meanwhile", why,
          config.redisReconnectMs());
    }
    subscribed = false;
    subscriber = null;
    scheduleReconnect();
  }

  private void scheduleReconnect() {
    if (stopped || reconnectTimer >= 0) {
      return;
    }
    reconnectTimer = vertx.setTimer(config.redisReconnectMs(), id -> {
      reconnectTimer = -1;
      if (stopped || subscribed) {
        return;
      }
      subscribe().onFailure(err -> {
        log.debug("reminders: re-subscribe failed: {}", err.toString());
        scheduleReconnect();
      });
    });
  }

  private void onMessage(Response r) {
    if (r == null || r.size() < 3 || !"message".equals(r.get(0).toString())) {
      return;
    }
    String key = r.get(2).toString();
    if (stopped || !key.startsWith(config.redisKeyPrefix())) {
      return;
    }
    metrics.event();
    pending.add(key.substring(config.redisKeyPrefix().length()));
    flush();
  }

  /** One statement at a time; events that arrive meanwhile go together in the next one. */
  private void flush() {
    if (flushing || pending.isEmpty()) { // empty for good once stopped: stop() clears it, onMessage takes nothing
      return;
    }
    flushing = true;
    List<String> batch = new ArrayList<>(pending);
    pending.clear();
    flushed = reminders.remind(batch, Reminders.Trigger.REDIS_EXPIRY).onComplete(ar -> {
      flushing = false;
      if (ar.failed()) {
        log.warn("reminders: {} Redis-triggered reminder(s) not sent now ({}); the scan covers them", batch.size(),
            ar.cause().toString());
      }
      flush();
    });
  }
}
