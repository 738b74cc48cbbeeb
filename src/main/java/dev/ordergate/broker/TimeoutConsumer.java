package dev.ordergate.broker;

import dev.ordergate.domain.ExpiryCancel;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancelGate;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.rabbitmq.QueueOptions;
import io.vertx.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.RabbitMQConsumer;
import io.vertx.rabbitmq.RabbitMQMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes the due queue (manual ack, {@code prefetch} unacked at most; the consumers of every
 * instance compete) and for each message:
 * <ol>
 *   <li>not a timeout message: rejected without requeue, so it is dead-lettered to the poison
 *       queue and logged; it never loops;</li>
 *   <li>the expiry is still at least one tier away: re-published into the largest tier that fits
 *       (confirmed before the delivery is acked);</li>
 *   <li>otherwise the remainder is held on a timer, then the order is cancelled through the gate
 *       ({@link CancelGate#cancelExpired}, source TIMEOUT_MESSAGE), which reads the expiry from the
 *       database: an early message waits (again), one for a paid or cancelled order is acked and
 *       dropped. The ack follows the gate's commit;</li>
 *   <li>a failure (database down, publish unknown) is nacked with requeue after a pause, so the
 *       quorum queue's delivery limit dead-letters a message that keeps failing.</li>
 * </ol>
 * Redeliveries and duplicates are harmless: the gate's conditional UPDATE lets one cancellation win.
 */
final class TimeoutConsumer {

  private static final Logger log = LoggerFactory.getLogger(TimeoutConsumer.class);
  private static final long RETRY_PAUSE_MS = 1_000;

  private final Vertx vertx;
  private final BrokerTopology topology;
  private final TimeoutPublisher publisher;
  private final CancelGate gate;
  private final BrokerMetrics metrics;
  private final int prefetch;
  private final String instanceId;
  private BrokerLink link;
  private RabbitMQConsumer consumer;

  TimeoutConsumer(Vertx vertx, BrokerTopology topology, TimeoutPublisher publisher, CancelGate gate,
                  BrokerMetrics metrics, int prefetch, String instanceId) {
    this.vertx = vertx;
    this.topology = topology;
    this.publisher = publisher;
    this.gate = gate;
    this.metrics = metrics;
    this.prefetch = prefetch;
    this.instanceId = instanceId;
  }

  void link(BrokerLink link) {
    this.link = link;
  }

  /** Link callback (on the link's context): prefetch, then consume; the handler is set before any delivery is dispatched. */
  Future<Void> onConnected(RabbitMQClient client) {
    return client.basicQos(prefetch)
        .compose(v -> client.basicConsumer(topology.dueQueue(), new QueueOptions().setAutoAck(false)
            .setMaxInternalQueueSize(prefetch * 2)))
        .map(c -> {
          c.handler(msg -> handle(client, msg));
          consumer = c;
          return null;
        });
  }

  void onLost() {
    consumer = null;
  }

  /** Cancels the consumer before the client stops (a live consumer would make the client reconnect). */
  Future<Void> cancel(RabbitMQClient client) {
    RabbitMQConsumer c = consumer;
    consumer = null;
    return c == null ? Future.succeededFuture() : c.cancel();
  }

  private void handle(RabbitMQClient client, RabbitMQMessage msg) {
    long tag = msg.envelope().getDeliveryTag();
    if (msg.envelope().isRedeliver()) {
      metrics.redelivered();
    }
    TimeoutMessage m;
    try {
      m = TimeoutMessage.parse(msg.body());
    } catch (IllegalArgumentException e) {
      log.warn("timeout message {} is poison, dead-lettered to {}: {}", msg.properties().getMessageId(),
          topology.poisonQueue(), e.getMessage());
      metrics.consumed("poison");
      client.basicNack(tag, false, false).onFailure(err -> link.suspect());
      return;
    }
    route(client, tag, m);
  }

  private void route(RabbitMQClient client, long tag, TimeoutMessage m) {
    long remaining = m.expiresAtMs() - System.currentTimeMillis();
    long tier = topology.tierFor(remaining);
    if (tier > 0) {
      publisher.publish("", topology.delayQueue(tier), m)
          .onSuccess(v -> ack(client, tag, "routed"))
          .onFailure(err -> retryLater(client, tag, m, err));
      return;
    }
    vertx.setTimer(Math.max(1, remaining), id -> cancel(client, tag, m));
  }

  private void cancel(RabbitMQClient client, long tag, TimeoutMessage m) {
    gate.cancelExpired(m.orderNo(), TransitionSource.TIMEOUT_MESSAGE, instanceId, "timeout-message")
        .onSuccess(result -> {
          switch (result.kind()) {
            case CANCELLED -> {
              metrics.cancelled(result.latenessSeconds());
              ack(client, tag, "cancelled");
            }
            case CLOSED, NOT_FOUND -> ack(client, tag, "closed");
            case NOT_DUE -> {
              metrics.consumed("early");
              route(client, tag, new TimeoutMessage(m.orderNo(), System.currentTimeMillis() + result.dueInMs()));
            }
          }
        })
        .onFailure(err -> retryLater(client, tag, m, err));
  }

  private void ack(RabbitMQClient client, long tag, String outcome) {
    metrics.consumed(outcome);
    client.basicAck(tag, false).onFailure(err -> {
      // The channel is gone; the broker redelivers the message, which then changes nothing.
      log.debug("ack of a timeout message failed ({}); it will be redelivered", err.toString());
      link.suspect();
    });
  }

  private void retryLater(RabbitMQClient client, long tag, TimeoutMessage m, Throwable err) {
    metrics.consumed("retry");
    log.warn("timeout message for order {} not handled ({}); requeued in {} ms", m.orderNo(), err.toString(),
        RETRY_PAUSE_MS);
    vertx.setTimer(RETRY_PAUSE_MS, id -> client.basicNack(tag, false, true).onFailure(e -> link.suspect()));
  }
}
