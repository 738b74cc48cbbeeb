package dev.ordergate.config;

/**
 * The HTTP listener's limits and the shutdown budget (keys in the README, section Limits):
 * {@code http.maxHeaderBytes} and {@code http.maxInitialLineBytes} (431/414 above them),
 * {@code http.headerTimeoutMs} (a request head must be complete this long after the connection
 * opened or the previous answer ended, so a client trickling a header byte a second is cut off;
 * it is also the keep-alive idle limit), {@code http.idleTimeoutMs} (no byte either way),
 * {@code http.requestTimeoutMs} (head to complete body, else 408), {@code http.maxConnections}
 * (one over it is closed at once), {@code log.rejectionsPerSecond} (rejection lines logged per
 * second; every rejection is counted in metrics), {@code shutdown.graceMs} (SIGTERM to exit) and
 * {@code shutdown.drainDelayMs} (how long the service still serves while reporting not ready, so a
 * load balancer stops sending first; part of the grace period).
 */
public record ServerConfig(int maxHeaderBytes, int maxInitialLineBytes, long headerTimeoutMs, long idleTimeoutMs,
                           long requestTimeoutMs, int maxConnections, int rejectionLogPerSecond, long shutdownGraceMs,
                           long shutdownDrainDelayMs) {

  static ServerConfig from(ConfigReader r) {
    return new ServerConfig(
        r.intValue("http.maxHeaderBytes", 8192, 1024, 65_536),
        r.intValue("http.maxInitialLineBytes", 4096, 256, 65_536),
        r.integer("http.headerTimeoutMs", 10_000, 100, 600_000),
        r.integer("http.idleTimeoutMs", 30_000, 100, 3_600_000),
        r.integer("http.requestTimeoutMs", 30_000, 100, 3_600_000),
        r.intValue("http.maxConnections", 1000, 1, 100_000),
        r.intValue("log.rejectionsPerSecond", 5, 0, 10_000),
        r.integer("shutdown.graceMs", 20_000, 100, 600_000),
        drainDelay(r));
  }

  private static long drainDelay(ConfigReader r) {
    long grace = r.integer("shutdown.graceMs", 20_000, 100, 600_000);
    long delay = r.integer("shutdown.drainDelayMs", 0, 0, 600_000);
    if (delay >= grace) {
      throw new ConfigException("shutdown.drainDelayMs", "must be below shutdown.graceMs (" + grace + ")");
    }
    return delay;
  }
}
