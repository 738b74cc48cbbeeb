package dev.ordergate.config;

/**
 * Group commit of payment callbacks: at most {@code maxInFlight} transactions at once, each with
 * at most {@code maxBatch} callbacks; at most {@code maxQueued} callbacks wait (beyond it: 503 at once),
 * none longer than {@code queueTimeoutMs}. Readiness reports not ready while a callback that could run
 * has waited for a slot longer than {@code readyMaxWaitMs} (every slot is stuck).
 */
public record CallbacksConfig(int maxBatch, int maxInFlight, int maxQueued, long queueTimeoutMs, long readyMaxWaitMs) {

  static CallbacksConfig from(ConfigReader r, int poolSize) {
    int maxInFlight = r.intValue("callbacks.maxInFlight", Math.max(1, Math.min(4, poolSize / 2)), 1, 200);
    if (maxInFlight > Math.max(1, poolSize - 1)) {
      throw new ConfigException("callbacks.maxInFlight", "is " + maxInFlight + " but must be below db.poolSize ("
          + poolSize + "): the sweep, the outbox relay and the API need connections too");
    }
    return new CallbacksConfig(
        r.intValue("callbacks.maxBatch", 256, 1, 10_000),
        maxInFlight,
        r.intValue("callbacks.maxQueued", 2_000, 1, 1_000_000),
        r.integer("callbacks.queueTimeoutMs", 10_000, 100, 600_000),
        r.integer("callbacks.readyMaxWaitMs", 5_000, 100, 600_000));
  }
}
