package dev.ordergate.broker;

import dev.ordergate.config.BrokerConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.RabbitMQOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One supervised connection to the broker. The Vert.x client's own reconnect is off (its restarts
 * recover no topology, and in-flight confirms can hang across them): this class reconnects itself.
 * It checks the connection every {@code reconnectMs}; when it is gone (or never came), it drops the
 * client, creates a fresh one, and runs {@code onConnected} (declare the topology, then consume or
 * listen for confirms) before it calls the link ready again. A broker that is down at startup does
 * not fail the service: the link keeps trying. All state is touched on the context it started on.
 */
final class BrokerLink {

  private static final Logger log = LoggerFactory.getLogger(BrokerLink.class);
  private static final long STOP_STEP_MS = 5_000;

  private final Vertx vertx;
  private final BrokerConfig config;
  private final String name;
  private final Function<RabbitMQClient, Future<Void>> onConnected;
  private final Runnable onLost;
  private Context context;
  private RabbitMQClient client;
  private boolean ready;
  private boolean connecting;
  private boolean stopped;
  private long timerId = -1;
  private long connects;

  /** {@code onLost} runs on the link's context when a ready connection is found gone. */
  BrokerLink(Vertx vertx, BrokerConfig config, String name, Function<RabbitMQClient, Future<Void>> onConnected,
             Runnable onLost) {
    this.vertx = vertx;
    this.config = config;
    this.name = name;
    this.onConnected = onConnected;
    this.onLost = onLost;
  }

  void start() {
    context = vertx.getOrCreateContext();
    context.runOnContext(v -> check());
  }

  /** The context the link runs on (null before start). */
  Context context() {
    return context;
  }

  /**
   * The client while the link is ready (connected, topology declared, the connection and channel still
   * open), else null. A connection found gone before this link's check (every {@code reconnectMs}) noticed
   * it gives no client either: a publish on it would only throw, its outcome counted unknown and retried
   * after a back-off (BrokerTierTest).
   */
  RabbitMQClient client() {
    return ready() ? client : null;
  }

  boolean ready() {
    return ready && healthy(client);
  }

  /**
   * Connected with the channel open. A channel closed under an open connection (a channel-level
   * error) counts as lost too: its consumer and confirm listener are gone with it, and the client
   * would only reopen a bare channel.
   */
  private static boolean healthy(RabbitMQClient c) {
    return c != null && c.isConnected() && c.isOpenChannel();
  }

  /** How many times the link connected (1 + reconnects). */
  long connects() {
    return connects;
  }

  /** Stops supervising; {@code beforeStop} runs first with the client (cancel consumers). */
  Future<Void> stop(Function<RabbitMQClient, Future<Void>> beforeStop) {
    stopped = true;
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    RabbitMQClient c = client;
    client = null;
    ready = false;
    if (c == null) {
      return Future.succeededFuture();
    }
    Future<Void> before;
    try {
      // Nothing to cancel on a connection already gone (the client throws instead of failing the future).
      before = healthy(c) ? beforeStop.apply(c) : Future.succeededFuture();
    } catch (RuntimeException e) {
      before = Future.failedFuture(e);
    }
    return before.timeout(STOP_STEP_MS, TimeUnit.MILLISECONDS).recover(err -> Future.succeededFuture())
        .compose(v -> c.stop().timeout(STOP_STEP_MS, TimeUnit.MILLISECONDS).recover(err -> {
          log.warn("broker link {}: close did not complete ({})", name, err.toString());
          return Future.succeededFuture();
        }));
  }

  /** Asks for a check now (a publish or an ack failed): a lost connection is replaced sooner. */
  void suspect() {
    if (context != null) {
      context.runOnContext(v -> {
        if (!stopped && ready && !healthy(client)) {
          check();
        }
      });
    }
  }

  private void check() {
    if (stopped) {
      return;
    }
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    if (ready && healthy(client)) {
      arm();
      return;
    }
    if (ready) {
      ready = false;
      log.warn("broker link {}: connection lost; reconnecting", name);
      onLost.run();
    }
    if (!connecting) {
      connect();
    }
    arm();
  }

  private void arm() {
    if (!stopped) {
      timerId = vertx.setTimer(config.reconnectMs(), id -> {
        timerId = -1;
        check();
      });
    }
  }

  private void connect() {
    connecting = true;
    RabbitMQClient old = client;
    client = null;
    Future<Void> dropped = old == null ? Future.succeededFuture() : old.stop().recover(err -> Future.succeededFuture());
    dropped.compose(v -> {
      RabbitMQClient fresh = RabbitMQClient.create(vertx, new RabbitMQOptions()
          .setUri(config.uri())
          .setConnectionName("ordergate-" + name)
          .setAutomaticRecoveryEnabled(false)
          .setReconnectAttempts(0)
          .setConnectionTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1_000, config.confirmTimeoutMs())))
          .setRequestedHeartbeat(10));
      return fresh.start()
          .compose(x -> onConnected.apply(fresh))
          .map(x -> fresh)
          .recover(err -> fresh.stop().transform(x -> Future.failedFuture(err)));
    }).onComplete(ar -> {
      connecting = false;
      if (ar.failed()) {
        log.warn("broker link {}: cannot connect to {} ({}); retrying in {} ms", name, redacted(), ar.cause().toString(),
            config.reconnectMs());
        return;
      }
      if (stopped) {
        ar.result().stop();
        return;
      }
      client = ar.result();
      ready = true;
      connects++;
      log.info("broker link {}: connected to {}, topology declared{}", name, redacted(),
          connects > 1 ? " (reconnect " + (connects - 1) + ")" : "");
    });
  }

  private String redacted() {
    return config.uri().replaceFirst("//([^:@/]*):[^@/]*@", "//$1:***@");
  }
}
