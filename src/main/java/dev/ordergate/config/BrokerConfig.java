package dev.ordergate.config;

import io.vertx.core.json.JsonArray;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The broker tier ({@code triggers.broker.*}, off by default): delayed timeout messages through
 * RabbitMQ, with the timeout sweep as the fallback. {@code tiersMs} are the fixed delay queues'
 * TTLs (each queue's name carries its TTL, so a changed set never collides with an old queue).
 */
public record BrokerConfig(
    boolean enabled,
    String uri,
    List<Long> tiersMs,
    int prefetch,
    String prefix,
    long confirmTimeoutMs,
    long reconnectMs,
    int maxDeliveries) {

  /**
   * 100 ms doubling to about 14.6 hours (20 queues): the router's greedy choice then makes at most one
   * hop per tier, so a 30-minute timeout takes about 5 hops (decimal tiers such as 100/1000/10000/...
   * took 30 and more, and each hop is a publish, a confirm and an ack).
   */
  public static final List<Long> DEFAULT_TIERS = java.util.stream.IntStream.rangeClosed(0, 19)
      .mapToObj(k -> 100L << k).toList();

  /** With {@code outboxLeaseMs}: a publish waits for its confirm within the relay's lease on the event. */
  public static BrokerConfig from(ConfigReader r, long outboxLeaseMs) {
    BrokerConfig c = from(r);
    if (c.enabled() && c.confirmTimeoutMs() >= outboxLeaseMs) {
      throw new ConfigException("triggers.broker.confirmTimeoutMs",
          "must be below outbox.leaseMs (" + outboxLeaseMs + "), or an unconfirmed publish outlives its claim");
    }
    return c;
  }

  public static BrokerConfig from(ConfigReader r) {
    r.object("triggers");
    r.object("triggers.broker");
    String uri = r.string("triggers.broker.uri", "amqp://guest:guest@127.0.0.1:5672/%2F");
    if (!uri.matches("amqps?://.+")) {
      throw new ConfigException("triggers.broker.uri", "must look like amqp://user:pass@host:5672/vhost");
    }
    String prefix = r.string("triggers.broker.prefix", "ordergate");
    if (!prefix.matches("[A-Za-z0-9_.-]{1,100}")) {
      throw new ConfigException("triggers.broker.prefix", "must be 1-100 of [A-Za-z0-9_.-], got " + prefix);
    }
    return new BrokerConfig(
        r.bool("triggers.broker.enabled", false),
        uri,
        tiers(r),
        r.intValue("triggers.broker.prefetch", 500, 1, 65_535),
        prefix,
        r.integer("triggers.broker.confirmTimeoutMs", 5_000, 10, 600_000),
        r.integer("triggers.broker.reconnectMs", 1_000, 10, 600_000),
        r.intValue("triggers.broker.maxDeliveries", 5, 1, 1_000));
  }

  private static List<Long> tiers(ConfigReader r) {
    String key = "triggers.broker.tiersMs";
    Object raw = r.raw(key);
    if (raw == null) {
      return DEFAULT_TIERS;
    }
    if (!(raw instanceof JsonArray arr) || arr.isEmpty()) {
      throw new ConfigException(key, "must be a non-empty list of delays in ms, e.g. [1000, 60000]");
    }
    TreeSet<Long> out = new TreeSet<>();
    for (Object v : arr) {
      if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < 10
          || ((Number) v).longValue() > 86_400_000L) {
        throw new ConfigException(key, "each delay must be a whole number of ms in 10..86400000, got " + v);
      }
      out.add(((Number) v).longValue());
    }
    return List.copyOf(new ArrayList<>(out));
  }
}
