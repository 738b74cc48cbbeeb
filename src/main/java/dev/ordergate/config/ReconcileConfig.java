package dev.ordergate.config;

/**
 * {@code reconcile.periodMs}: how often the service checks its own invariants (0 = off, the
 * default). Each run is re-armed after the previous one finished, so runs never overlap.
 */
public record ReconcileConfig(long periodMs) {

  public static final long MAX_PERIOD_MS = 24L * 3600 * 1000;

  static ReconcileConfig from(ConfigReader r) {
    long period = r.integer("reconcile.periodMs", 0, 0, MAX_PERIOD_MS);
    if (period > 0 && period < 1000) {
      throw new ConfigException("reconcile.periodMs", "must be 0 (off) or at least 1000, got " + period);
    }
    return new ReconcileConfig(period);
  }
}
