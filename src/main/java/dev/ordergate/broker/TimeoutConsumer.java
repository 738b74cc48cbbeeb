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

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Consumes the due queue (manual ack, {@code prefetch} unacked at most; the consumers of every
 * instance compete) and for each message:
 * <ol>
 *   <li>not a timeout message: rejected without requeue, so it is dead-lettered to the poison
 *       queue and logged; it never loops;</li>
 *   <li>the expiry is still at least one tier away: re-published into the largest tier that fits
 *       (confirmed before the delivery is acked);</li>
 *   <li>otherwise the remainder is held on a timer, then the order is cancelled through the gate
 *       ({@link CancelGate#cancelExpired}, source TIMEOUT_MESSAGE; the messages that fall due while
 *       a statement runs go together into the next), which reads the expiry from the database: an
 *       early message waits (again), one for a paid or cancelled order is acked and dropped. The
 *       ack follows the gate's commit;</li>
 *   <li>a failure (database down, publish unknown) is nacked with requeue after a pause, so the
 *       quorum queue's delivery limit dead-letters a message that keeps failing.</li>
 * </ol>
 * Redeliveries and duplicates are harmless: the gate's conditional UPDATE lets one cancellation win.
 */
final class TimeoutConsumer {

  private static final Logger log = LoggerFactory.getLogger(TimeoutConsumer.class);
  private static final long RETRY_PAUSE_MS = 1_000;
  /** A due order held by another transaction (a payment in flight) is tried again after this. */
  private static final long BUSY_PAUSE_MS = 50;

  private final Vertx vertx;
  private final BrokerTopology topology;
  private final TimeoutPublisher publisher;
  private final CancelGate gate;
  private final BrokerMetrics metrics;
  private final int prefetch;
  private final String instanceId;
  private BrokerLink link;
  private RabbitMQConsumer consumer;
  private final List<Due> due = new ArrayList<>();
  private boolean flushing;

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
      call(() -> client.basicNack(tag, false, false)).onFailure(err -> link.suspect());
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

  /** A due message waiting for the next cancellation statement. */
  private record Due(RabbitMQClient client, long tag, TimeoutMessage message) {}

  private void cancel(RabbitMQClient client, long tag, TimeoutMessage m) {
    due.add(new Due(client, tag, m));
    flush();
  }

  /**
   * One gate statement at a time; the messages that fall due meanwhile go together into the next
   * one (at most {@code prefetch}), so a burst of expiries costs a transaction per batch, not per order.
   */
  private void flush() {
    if (flushing || due.isEmpty()) {
      return;
    }
    flushing = true;
    List<Due> batch = new ArrayList<>(due.subList(0, Math.min(due.size(), prefetch)));
    due.subList(0, batch.size()).clear();
    gate.cancelExpired(batch.stream().map(d -> d.message().orderNo()).toList(), TransitionSource.TIMEOUT_MESSAGE,
            instanceId, "timeout-message")
        .onComplete(ar -> {
          flushing = false;
          if (ar.failed()) {
            batch.forEach(d -> retryLater(d.client(), d.tag(), d.message(), ar.cause()));
          } else {
            Set<String> counted = new HashSet<>();
            for (Due d : batch) {
              answer(d, ar.result().get(d.message().orderNo()), counted);
            }
          }
          flush();
        });
  }

  private void answer(Due d, ExpiryCancel result, Set<String> counted) {
    switch (result.kind()) {
      case CANCELLED -> {
        // A duplicate in the same batch shares the winner's answer: acked, counted once.
        if (counted.add(result.orderNo())) {
          metrics.cancelled(result.latenessSeconds());
          ack(d.client(), d.tag(), "cancelled");
        } else {
          ack(d.client(), d.tag(), "closed");
        }
      }
      case CLOSED, NOT_FOUND -> ack(d.client(), d.tag(), "closed");
      case BUSY -> {
        metrics.consumed("busy");
        vertx.setTimer(BUSY_PAUSE_MS, id -> cancel(d.client(), d.tag(), d.message()));
      }
      case NOT_DUE -> {
        metrics.consumed("early");
        route(d.client(), d.tag(), new TimeoutMessage(d.message().orderNo(), System.currentTimeMillis() + result.dueInMs()));
      }
    }
  }

  private void ack(RabbitMQClient client, long tag, String outcome) {
    metrics.consumed(outcome);
    call(() -> client.basicAck(tag, false)).onFailure(err -> {
      // The channel is gone; the broker redelivers the message, which then changes nothing.
      log.debug("ack of a timeout message failed ({}); it will be redelivered", err.toString());
      link.suspect();
    });
  }

  /** The client throws (instead of failing the future) when the connection closed under it. */
  private static Future<Void> call(Supplier<Future<Void>> op) {
    try {
      return op.get();
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }

  private void retryLater(RabbitMQClient client, long tag, TimeoutMessage m, Throwable err) {
    metrics.consumed("retry");
    log.warn("timeout message for order {} not handled ({}); requeued in {} ms", m.orderNo(), err.toString(),
        RETRY_PAUSE_MS);
    vertx.setTimer(RETRY_PAUSE_MS, id -> call(() -> client.basicNack(tag, false, true)).onFailure(e -> link.suspect()));
  }
}
