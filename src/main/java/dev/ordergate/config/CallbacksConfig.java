package dev.ordergate.config;

/**
 * Group commit of payment callbacks: at most {@code maxInFlight} transactions at once, each with
 * at most {@code maxBatch} callbacks.
 */
public record CallbacksConfig(int maxBatch, int maxInFlight) {

  static CallbacksConfig from(ConfigReader r, int poolSize) {
    return new CallbacksConfig(
        r.intValue("callbacks.maxBatch", 256, 1, 10_000),
        r.intValue("callbacks.maxInFlight", Math.max(1, Math.min(4, poolSize / 2)), 1, 200));
  }
}
