package dev.ordergate.broker;

import dev.ordergate.config.BrokerConfig;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.rabbitmq.RabbitMQClient;

import java.util.ArrayList;
import java.util.List;

/**
 * The broker tier's queues, declared on every (re)connect (the client recovers no topology):
 * <ul>
 *   <li>{@code <prefix>.delay.<ttl>ms}, one per tier: durable quorum queue with a per-queue TTL and
 *       no consumer; expired messages dead-letter (at-least-once: kept until the target took them)
 *       to the exchange {@code <prefix>.due}. The TTL is in the name because queue arguments cannot
 *       change once declared: a new tier set declares new queues and never collides.</li>
 *   <li>{@code <prefix>.due}: durable quorum queue the consumers of every instance compete on; after
 *       {@code maxDeliveries} deliveries a message is dead-lettered to {@code <prefix>.poison}.</li>
 *   <li>{@code <prefix>.poison}: durable quorum queue for an operator; nothing consumes it.</li>
 * </ul>
 * One queue per fixed TTL, never per-message TTL: a queue's head then always expires first.
 */
final class BrokerTopology {

  private final BrokerConfig config;

  BrokerTopology(BrokerConfig config) {
    this.config = config;
  }

  String delayQueue(long ttlMs) {
    return config.prefix() + ".delay." + ttlMs + "ms";
  }

  String dueExchange() {
    return config.prefix() + ".due";
  }

  String dueQueue() {
    return config.prefix() + ".due";
  }

  String poisonExchange() {
    return config.prefix() + ".poison";
  }

  String poisonQueue() {
    return config.prefix() + ".poison";
  }

  /** The largest tier not longer than {@code remainingMs}, or -1 when the remainder is below every tier. */
  long tierFor(long remainingMs) {
    long best = -1;
    for (long tier : config.tiersMs()) {
      if (tier <= remainingMs) {
        best = tier;
      }
    }
    return best;
  }

  Future<Void> declare(RabbitMQClient client) {
    JsonObject due = new JsonObject().put("x-queue-type", "quorum")
        .put("x-delivery-limit", config.maxDeliveries())
        .put("x-dead-letter-exchange", poisonExchange())
        .put("x-dead-letter-routing-key", poisonQueue());
    Future<Void> f = client.exchangeDeclare(dueExchange(), "direct", true, false)
        .compose(v -> client.exchangeDeclare(poisonExchange(), "direct", true, false))
        .compose(v -> client.queueDeclare(poisonQueue(), true, false, false,
            new JsonObject().put("x-queue-type", "quorum")).mapEmpty())
        .compose(v -> client.queueBind(poisonQueue(), poisonExchange(), poisonQueue()))
        .compose(v -> client.queueDeclare(dueQueue(), true, false, false, due).mapEmpty())
        .compose(v -> client.queueBind(dueQueue(), dueExchange(), dueQueue()));
    List<Long> tiers = new ArrayList<>(config.tiersMs());
    for (long ttl : tiers) {
      JsonObject args = new JsonObject().put("x-queue-type", "quorum")
          .put("x-message-ttl", ttl)
          .put("x-dead-letter-exchange", dueExchange())
          .put("x-dead-letter-routing-key", dueQueue())
          .put("x-dead-letter-strategy", "at-least-once")
          .put("x-overflow", "reject-publish");
      f = f.compose(v -> client.queueDeclare(delayQueue(ttl), true, false, false, args).mapEmpty());
    }
    return f;
  }
}
