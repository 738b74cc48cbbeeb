package dev.ordergate.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The outbox relay's settings ({@code outbox.*}). {@code sinkUrls} maps an event type to its
 * webhook; a type without one goes to the log sink. Refund requests go to their channel's
 * {@code refundUrl} instead. Delivered events older than {@code retentionHours} (fractions allowed; 0
 * keeps them forever) are deleted every {@code pruneIntervalMs}, in batches; refund requests are kept
 * (reconcile proves each REFUNDED exception by its delivered request). {@code concurrency}: how many
 * log-sink statements one relay runs at once while it has a backlog (each takes a pool connection).
 * {@code sinkBatchMax}: per event type, the most events one POST to its sink carries (absent: one event
 * per POST, the body being the envelope itself). {@code maxInFlight}: webhook deliveries claimed and not yet
 * marked, per relay (see {@link #defaultMaxInFlight}). {@code lingerMs}: after a cycle that found less than a
 * full batch, the next one waits this long for more events to gather (a cycle costs the same few
 * statements for one event as for a hundred); full batches follow each other at once.
 */
public record OutboxConfig(
    boolean enabled,
    long pollMs,
    int batchSize,
    int maxAttempts,
    long baseDelayMs,
    long maxDelayMs,
    long leaseMs,
    long httpTimeoutMs,
    Map<String, String> sinkUrls,
    double retentionHours,
    long pruneIntervalMs,
    int concurrency,
    Map<String, Integer> sinkBatchMax,
    long lingerMs,
    int maxInFlight) {

  /**
   * The default {@code outbox.lingerMs}. 100 ms, not 20 (issue 13): with the log sink's cursor, an A/B of open loops at
   * 2,800 callbacks/s (seven rounds, order alternated) measured a median callback p99 of 38 ms against 51 and 20 µs
   * less PostgreSQL CPU per callback (the cursor moving 8 times a second against 30); it adds at most 80 ms to an
   * event's lag.
   */
  public static final long DEFAULT_LINGER_MS = 100;

  /** All settings but the linger and the in-flight bound, which take their defaults. */
  public OutboxConfig(boolean enabled, long pollMs, int batchSize, int maxAttempts, long baseDelayMs, long maxDelayMs,
                      long leaseMs, long httpTimeoutMs, Map<String, String> sinkUrls, double retentionHours,
                      long pruneIntervalMs, int concurrency, Map<String, Integer> sinkBatchMax) {
    this(enabled, pollMs, batchSize, maxAttempts, baseDelayMs, maxDelayMs, leaseMs, httpTimeoutMs, sinkUrls,
        retentionHours, pruneIntervalMs, concurrency, sinkBatchMax, DEFAULT_LINGER_MS,
        defaultMaxInFlight(batchSize, sinkBatchMax));
  }

  /**
   * Webhook deliveries one relay has claimed and not yet marked: {@code batchSize}, or ten times it when a
   * sink takes batches (an order's next event waits for the previous one's POST and mark, so with a
   * hundred in flight a batching sink received half-empty POSTs and the relay topped out near 5,000
   * events/s; issue 13). Single-event POSTs keep the old bound: the HTTP client's pool would only queue them.
   */
  static int defaultMaxInFlight(int batchSize, Map<String, Integer> sinkBatchMax) {
    return sinkBatchMax.isEmpty() ? batchSize : Math.min(10_000, batchSize * 10);
  }

  /** The relay's settings with the default retention (72 h, pruned every minute). */
  public OutboxConfig(boolean enabled, long pollMs, int batchSize, int maxAttempts, long baseDelayMs, long maxDelayMs,
                      long leaseMs, long httpTimeoutMs, Map<String, String> sinkUrls) {
    this(enabled, pollMs, batchSize, maxAttempts, baseDelayMs, maxDelayMs, leaseMs, httpTimeoutMs, sinkUrls, 72, 60_000, 2, Map.of());
  }

  /** The most events one POST to {@code type}'s sink carries: 1 unless {@code batchMax} says more. */
  public int batchMax(String type) {
    return sinkBatchMax.getOrDefault(type, 1);
  }

  /**
   * Whether this service writes its ORDER_PAID, ORDER_CANCELLED and NOTIFY_SMS events for the cursor (status
   * STREAM, V18): its relay runs and every sink type goes to the log or to a webhook that takes batches
   * ({@code batchMax} above 1). The cursor logs or POSTs each batch before it moves its position, and an event
   * whose POST failed leaves the cursor for the claim path's retries. With a one-event-per-POST webhook for any
   * type the events stay on the claim and mark path, whose per-event leases let a slow answer for one order
   * hold up no other. A service with its relay off writes PENDING events, for whichever relay takes them.
   */
  public boolean streams() {
    return enabled && SINK_TYPES.stream().allMatch(t -> !sinkUrls.containsKey(t) || batchMax(t) > 1);
  }

  /** Event types a sink may be configured for (REFUND_REQUESTED goes to the channel's refundUrl). */
  public static final Set<String> SINK_TYPES = Set.of("ORDER_PAID", "ORDER_CANCELLED", "NOTIFY_SMS");

  public static OutboxConfig from(ConfigReader r) {
    long leaseMs = r.integer("outbox.leaseMs", 60_000, 1_000, 3_600_000);
    long httpTimeoutMs = r.integer("outbox.httpTimeoutMs", 10_000, 100, 600_000);
    if (httpTimeoutMs > leaseMs - 1_000) {
      throw new ConfigException("outbox.httpTimeoutMs",
          "must be at least 1000 ms below outbox.leaseMs (" + leaseMs + "): a delivery must end inside its claim");
    }
    long baseDelayMs = r.integer("outbox.baseDelayMs", 1_000, 1, 3_600_000);
    Map<String, String> sinks = new LinkedHashMap<>();
    Map<String, Integer> batchMax = new LinkedHashMap<>();
    for (String type : r.object("outbox.sinks").fieldNames()) {
      if (type.startsWith("_")) {
        continue;
      }
      String key = "outbox.sinks." + type;
      if (!SINK_TYPES.contains(type)) {
        throw new ConfigException(key, "unknown event type; sinks exist for " + SINK_TYPES
            + " (refunds go to payments.channels.<name>.refundUrl)");
      }
      String url = r.string(key + ".url", null);
      if (url != null) {
        if (!url.matches("https?://.+")) {
          throw new ConfigException(key + ".url", "must be an http(s) URL, got " + Secrets.redactUrls(url));
        }
        sinks.put(type, url);
        int max = r.intValue(key + ".batchMax", 1, 1, 1_000);
        if (max > 1) {
          batchMax.put(type, max);
        }
      }
    }
    int batchSize = r.intValue("outbox.batchSize", 100, 1, 10_000);
    return new OutboxConfig(
        r.bool("outbox.enabled", true),
        r.integer("outbox.pollMs", 1_000, 10, 3_600_000),
        batchSize,
        r.intValue("outbox.maxAttempts", 10, 1, 100),
        baseDelayMs,
        r.integer("outbox.maxDelayMs", Math.max(600_000, baseDelayMs), baseDelayMs, 86_400_000),
        leaseMs,
        httpTimeoutMs,
        Map.copyOf(sinks),
        r.number("outbox.retentionHours", 72, 0, 24 * 3650),
        r.integer("outbox.pruneIntervalMs", 60_000, 100, 86_400_000),
        r.intValue("outbox.concurrency", 2, 1, 16),
        Map.copyOf(batchMax),
        r.integer("outbox.lingerMs", DEFAULT_LINGER_MS, 0, 1_000),
        r.intValue("outbox.maxInFlight", defaultMaxInFlight(batchSize, batchMax), 1, 100_000));
  }
}
