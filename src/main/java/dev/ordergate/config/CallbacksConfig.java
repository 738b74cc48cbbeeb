package dev.ordergate.config;

/**
 * Group commit of payment callbacks: at most {@code maxInFlight} transactions at once, each with
 * at most {@code maxBatch} callbacks; at most {@code maxQueued} callbacks wait (beyond it: 503 at once),
 * none longer than {@code queueTimeoutMs}. Readiness reports not ready while a callback that could run
 * has waited for a slot longer than {@code readyMaxWaitMs} (every slot is stuck). A transaction beyond
 * the first starts only for at least {@code spareSlotMinBatch} waiting callbacks, or once the oldest
 * has waited {@code spareSlotAfterMs} (see {@link dev.ordergate.gate.CallbackCoalescer}).
 */
public record CallbacksConfig(int maxBatch, int maxInFlight, int maxQueued, long queueTimeoutMs, long readyMaxWaitMs,
                              int spareSlotMinBatch, long spareSlotAfterMs) {

  /** The default {@code callbacks.maxInFlight} (at most half of {@code db.poolSize}). */
  public static final int DEFAULT_MAX_IN_FLIGHT = 2;

  static CallbacksConfig from(ConfigReader r, int poolSize) {
    // 2 by default: on the 2-core bench machine, 2 against 4 halved the callback p99 of an open load of
    // 2,400/s with the relay on and cut PostgreSQL CPU per callback by 9 %, at the same closed-loop
    // maximum (issue 13). A database with more cores may take more.
    int maxInFlight = r.intValue("callbacks.maxInFlight", Math.max(1, Math.min(DEFAULT_MAX_IN_FLIGHT, poolSize / 2)), 1, 200);
    if (maxInFlight > Math.max(1, poolSize - 1)) {
      throw new ConfigException("callbacks.maxInFlight", "is " + maxInFlight + " but must be below db.poolSize ("
          + poolSize + "): the sweep, the outbox relay and the API need connections too");
    }
    return new CallbacksConfig(
        r.intValue("callbacks.maxBatch", 256, 1, 10_000),
        maxInFlight,
        r.intValue("callbacks.maxQueued", 2_000, 1, 1_000_000),
        r.integer("callbacks.queueTimeoutMs", 10_000, 100, 600_000),
        r.integer("callbacks.readyMaxWaitMs", 5_000, 100, 600_000),
        // Off (1) by default. With 16, at a moderate load the waiting callbacks join the next batch of the one
        // slot instead of starting a second transaction for one or two of them: on the 2-core bench machine 15 %
        // less PostgreSQL CPU per callback at 3,000/s and 1,200/s with the relay on, the same closed-loop
        // maximum, but a p50 0.5 ms higher and a p99 no better (issue 13, A/B in two rounds), so the latency
        // target keeps every slot open. For a database short of CPU, not of time.
        r.intValue("callbacks.spareSlotMinBatch", 1, 1, 10_000),
        r.integer("callbacks.spareSlotAfterMs", 10, 1, 60_000));
  }
}
