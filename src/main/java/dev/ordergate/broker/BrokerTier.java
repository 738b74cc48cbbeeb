package dev.ordergate.broker;

import dev.ordergate.config.BrokerConfig;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.outbox.OutboxEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker tier (issue 12): a delayed timeout message per order through RabbitMQ, with the
 * timeout sweep kept as the fallback. Order creation writes an ORDER_TIMEOUT outbox event in its
 * transaction; the outbox relay hands it to {@link #schedule} after commit, so a broker that is down
 * never fails or slows creation and a crash loses nothing (the event is retried, and the sweep
 * cancels whatever no message did). Two supervised connections: one publishes, one consumes.
 */
public final class BrokerTier {

  private static final Logger log = LoggerFactory.getLogger(BrokerTier.class);

  private final BrokerConfig config;
  private final BrokerTopology topology;
  private final BrokerMetrics metrics;
  private final TimeoutPublisher publisher;
  private final TimeoutConsumer consumer;
  private final BrokerLink publishLink;
  private final BrokerLink consumeLink;

  public BrokerTier(Vertx vertx, BrokerConfig config, CancelGate gate, MeterRegistry registry, String instanceId) {
    this.config = config;
    this.topology = new BrokerTopology(config);
    this.metrics = new BrokerMetrics(registry);
    this.publisher = new TimeoutPublisher(vertx, metrics, config.confirmTimeoutMs());
    this.consumer = new TimeoutConsumer(vertx, topology, publisher, gate, metrics, config.prefetch(), instanceId);
    this.publishLink = new BrokerLink(vertx, config, "publish",
        c -> topology.declare(c).compose(v -> publisher.onConnected(c)), publisher::onLost);
    this.consumeLink = new BrokerLink(vertx, config, "consume",
        c -> topology.declare(c).compose(v -> consumer.onConnected(c)), consumer::onLost);
    publisher.link(publishLink);
    consumer.link(consumeLink);
  }

  /** Starts both links; does not wait for the broker (it may be down: the fallback sweep covers). */
  public Future<Void> start() {
    log.info("broker tier: tiers {} ms, prefetch {}, queues {}.*", config.tiersMs(), config.prefetch(), config.prefix());
    publishLink.start();
    consumeLink.start();
    return Future.succeededFuture();
  }

  /** Cancels the consumer, then closes both connections; a broker that does not answer delays it by at most a few seconds. */
  public Future<Void> stop() {
    return consumeLink.stop(consumer::cancel)
        .compose(v -> publishLink.stop(c -> Future.succeededFuture()));
  }

  /** Both links connected with the topology declared. */
  public boolean ready() {
    return publishLink.ready() && consumeLink.ready();
  }

  /** The publishing link connected with the topology declared (tests). */
  boolean publishReady() {
    return publishLink.ready();
  }

  /** Connections made by the consuming link so far (1 + reconnects). */
  public long consumerConnects() {
    return consumeLink.connects();
  }

  /**
   * The outbox relay's route for ORDER_TIMEOUT: publishes the message into the largest tier that
   * fits the time left (straight to the due queue when less than the smallest tier is left); a
   * failed or unconfirmed publish fails the delivery and the relay retries it. An order that
   * expired while the broker is unreachable is dropped: the fallback sweep cancels it.
   */
  public Future<Void> schedule(OutboxEvent event) {
    JsonObject payload = event.payload();
    String orderNo = payload.getString("orderNo", event.orderNo());
    Long expiresAtMs = payload.getLong("expiresAtMs");
    if (expiresAtMs == null) {
      log.warn("ORDER_TIMEOUT {} for order {} has no expiresAtMs; dropped (the sweep covers it)", event.id(), orderNo);
      return Future.succeededFuture();
    }
    TimeoutMessage message = new TimeoutMessage(orderNo, expiresAtMs);
    long remaining = expiresAtMs - System.currentTimeMillis();
    if (remaining < 0 && !publishLink.ready()) {
      // Expired while the broker was away: the fallback sweep cancels it; retrying helps nobody.
      metrics.published(topology.dueQueue(), "dropped_expired");
      return Future.succeededFuture();
    }
    long tier = topology.tierFor(remaining);
    return tier > 0
        ? publisher.publish("", topology.delayQueue(tier), message)
        : publisher.publish(topology.dueExchange(), topology.dueQueue(), message);
  }

  /** Deletes the tier's queues and exchanges (tools that ran with a prefix of their own clean up with it). */
  public static Future<Void> deleteTopology(Vertx vertx, BrokerConfig config) {
    BrokerTopology t = new BrokerTopology(config);
    io.vertx.rabbitmq.RabbitMQClient client = io.vertx.rabbitmq.RabbitMQClient.create(vertx,
        new io.vertx.rabbitmq.RabbitMQOptions().setUri(config.uri()));
    Future<Void> f = client.start()
        .compose(v -> client.queueDelete(t.dueQueue()).mapEmpty())
        .compose(v -> client.queueDelete(t.poisonQueue()).mapEmpty());
    for (long ttl : config.tiersMs()) {
      f = f.compose(v -> client.queueDelete(t.delayQueue(ttl)).mapEmpty());
    }
    return f.compose(v -> client.exchangeDelete(t.dueExchange()))
        .compose(v -> client.exchangeDelete(t.poisonExchange()))
        .eventually(client::stop);
  }
}
