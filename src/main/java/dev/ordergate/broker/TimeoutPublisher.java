package dev.ordergate.broker;

import com.rabbitmq.client.AMQP;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.rabbitmq.RabbitMQClient;
import io.vertx.rabbitmq.RabbitMQConfirmation;

import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Publishes timeout messages (persistent, {@code messageId} = order number) with publisher
 * confirms tracked here by delivery tag: a publish succeeds only on the broker's ack. A nack, no
 * confirm within {@code confirmTimeoutMs}, or the connection going away (its unconfirmed tags are
 * failed at once) all fail it: the outcome is unknown and the caller sends again (the consumer
 * makes duplicates harmless). Futures complete on the caller's context.
 *
 * <p>Every publish is issued from the publishing link's context: the client runs each call as
 * blocking work ordered per context, and the delivery tag is read just before the publish, so
 * publishes from two contexts (the relay, the consumer's router) could read the same tag.
 */
final class TimeoutPublisher {

  private static final AMQP.BasicProperties.Builder PROPS = new AMQP.BasicProperties.Builder()
      .deliveryMode(2).contentType("application/json");

  private final Vertx vertx;
  private final BrokerMetrics metrics;
  private final long confirmTimeoutMs;
  private BrokerLink link;
  /** The unconfirmed publishes of the current connection, by delivery tag. */
  private volatile ConcurrentSkipListMap<Long, Confirm> unconfirmed = new ConcurrentSkipListMap<>();

  TimeoutPublisher(Vertx vertx, BrokerMetrics metrics, long confirmTimeoutMs) {
    this.vertx = vertx;
    this.metrics = metrics;
    this.confirmTimeoutMs = confirmTimeoutMs;
  }

  void link(BrokerLink link) {
    this.link = link;
  }

  /** Link callback: confirm mode with a listener for this connection's tags. */
  Future<Void> onConnected(RabbitMQClient client) {
    ConcurrentSkipListMap<Long, Confirm> tags = new ConcurrentSkipListMap<>();
    return client.addConfirmListener(100_000).map(stream -> {
      stream.handler(c -> settle(tags, c));
      failAll(unconfirmed, "connection replaced");
      unconfirmed = tags;
      return null;
    });
  }

  /** Link callback: the connection is gone; nothing unconfirmed on it will be confirmed. */
  void onLost() {
    failAll(unconfirmed, "connection lost before the confirm");
  }

  Future<Void> publish(String exchange, String routingKey, TimeoutMessage message) {
    String label = exchange.isEmpty() ? routingKey : exchange;
    Context linkContext = link.context();
    if (linkContext == null || link.client() == null) {
      link.suspect();
      metrics.published(label, "not_connected");
      return Future.failedFuture(new IllegalStateException("broker not connected"));
    }
    Confirm confirm = new Confirm(vertx.getOrCreateContext(), label);
    confirm.timer = vertx.setTimer(confirmTimeoutMs, id -> confirm.fail("unknown",
        new TimeoutException("no publisher confirm within " + confirmTimeoutMs + " ms: outcome unknown")));
    if (Vertx.currentContext() == linkContext) {
      send(exchange, routingKey, message, confirm);
    } else {
      linkContext.runOnContext(v -> send(exchange, routingKey, message, confirm));
    }
    return confirm.promise.future();
  }

  /** On the link's context. */
  private void send(String exchange, String routingKey, TimeoutMessage message, Confirm confirm) {
    RabbitMQClient client = link.client();
    if (client == null) {
      confirm.fail("not_connected", new IllegalStateException("broker not connected"));
      return;
    }
    ConcurrentSkipListMap<Long, Confirm> tags = unconfirmed;
    confirm.tags = tags;
    Future<Void> sent;
    try {
      sent = client.basicPublishWithDeliveryTag(exchange, routingKey, PROPS.messageId(message.orderNo()).build(),
          message.toBuffer(), tag -> {
            confirm.tag = tag;
            tags.put(tag, confirm);
          });
    } catch (RuntimeException e) {
      // The client throws (instead of failing the future) when the connection closed under it.
      sent = Future.failedFuture(e);
    }
    sent.onFailure(err -> {
      confirm.fail("unknown", err);
      link.suspect();
    });
  }

  private void settle(ConcurrentSkipListMap<Long, Confirm> tags, RabbitMQConfirmation c) {
    ConcurrentNavigableMap<Long, Confirm> done = c.isMultiple()
        ? tags.headMap(c.getDeliveryTag(), true)
        : tags.subMap(c.getDeliveryTag(), true, c.getDeliveryTag(), true);
    for (Map.Entry<Long, Confirm> e : done.entrySet()) {
      if (tags.remove(e.getKey()) != null) {
        if (c.isSucceeded()) {
          e.getValue().succeed();
        } else {
          e.getValue().fail("nacked", new IllegalStateException("publish nacked by the broker"));
        }
      }
    }
  }

  private static void failAll(ConcurrentSkipListMap<Long, Confirm> tags, String why) {
    for (Long tag : tags.keySet()) {
      Confirm c = tags.remove(tag);
      if (c != null) {
        c.fail("unknown", new IllegalStateException(why + ": outcome unknown"));
      }
    }
  }

  /** One publish waiting for its confirm; settled once, on the publishing context. */
  private final class Confirm {
    final Context ctx;
    final String label;
    volatile ConcurrentSkipListMap<Long, Confirm> tags;
    final Promise<Void> promise = Promise.promise();
    final AtomicBoolean settled = new AtomicBoolean();
    volatile long timer = -1;
    volatile long tag = -1;

    Confirm(Context ctx, String label) {
      this.ctx = ctx;
      this.label = label;
    }

    void succeed() {
      if (settled.compareAndSet(false, true)) {
        vertx.cancelTimer(timer);
        metrics.published(label, "ok");
        ctx.runOnContext(v -> promise.complete());
      }
    }

    void fail(String result, Throwable err) {
      if (settled.compareAndSet(false, true)) {
        vertx.cancelTimer(timer);
        if (tag >= 0 && tags != null) {
          tags.remove(tag);
        }
        metrics.published(label, result);
        ctx.runOnContext(v -> promise.fail(err));
      }
    }
  }
}
