package dev.ordergate.config;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * The timeout sweep's settings ({@code sweep.*}). All but {@code configScanMs} can be changed while
 * the service runs by editing the config file; a bad value throws {@link ConfigException} naming
 * its key, so a live edit is rejected whole and the running settings stay.
 */
public record SweepConfig(
    boolean enabled,
    long periodMs,
    int batchSize,
    int maxBatchesPerRun,
    int batchesInFlight,
    long graceSeconds,
    boolean precise,
    long minDelayMs,
    int runLogRetentionDays,
    long configScanMs) {

  public static final SweepConfig DEFAULTS = from(new JsonObject());

  public static SweepConfig from(JsonObject root) {
    return from(new ConfigReader(root));
  }

  public static SweepConfig from(ConfigReader r) {
    r.object("sweep");
    return new SweepConfig(
        r.bool("sweep.enabled", true),
        r.integer("sweep.periodMs", 60_000, 100, 86_400_000),
        r.intValue("sweep.batchSize", 500, 1, 100_000),
        r.intValue("sweep.maxBatchesPerRun", 50, 1, 100_000),
        r.intValue("sweep.batchesInFlight", 2, 1, 16),
        r.integer("sweep.graceSeconds", 0, 0, 86_400),
        r.bool("sweep.precise", true),
        r.integer("sweep.minDelayMs", 200, 10, 600_000),
        r.intValue("sweep.runLogRetentionDays", 7, 1, 3650),
        r.integer("sweep.configScanMs", 2_000, 0, 600_000));
  }

  /** Keys whose values differ, as {@code key old -> new}, for the log line of a live change. */
  public List<String> changesTo(SweepConfig next) {
    List<String> out = new ArrayList<>();
    diff(out, "enabled", enabled, next.enabled);
    diff(out, "periodMs", periodMs, next.periodMs);
    diff(out, "batchSize", batchSize, next.batchSize);
    diff(out, "maxBatchesPerRun", maxBatchesPerRun, next.maxBatchesPerRun);
    diff(out, "batchesInFlight", batchesInFlight, next.batchesInFlight);
    diff(out, "graceSeconds", graceSeconds, next.graceSeconds);
    diff(out, "precise", precise, next.precise);
    diff(out, "minDelayMs", minDelayMs, next.minDelayMs);
    diff(out, "runLogRetentionDays", runLogRetentionDays, next.runLogRetentionDays);
    diff(out, "configScanMs", configScanMs, next.configScanMs);
    return out;
  }

  private static void diff(List<String> out, String key, Object old, Object now) {
    if (!old.equals(now)) {
      out.add("sweep." + key + " " + old + " -> " + now);
    }
  }

  public SweepConfig withConfigScanMs(long scanMs) {
    return new SweepConfig(enabled, periodMs, batchSize, maxBatchesPerRun, batchesInFlight, graceSeconds, precise,
        minDelayMs, runLogRetentionDays, scanMs);
  }
}
