package dev.ordergate.config;

/**
 * Payment reminders ({@code reminders.*}): one NOTIFY_SMS {@code payment_reminder} per pending
 * order, {@code beforeSeconds} before its expiry; 0 (the default) turns reminders off. The database
 * scan is the reliable trigger; Redis expiry events ({@code reminders.redis.*}) are an optional,
 * earlier one that the scan backs up.
 */
public record RemindersConfig(
    long beforeSeconds,
    long scanMs,
    int batchSize,
    boolean redisEnabled,
    String redisUrl,
    String redisKeyPrefix,
    long redisReconnectMs) {

  public static RemindersConfig from(ConfigReader r) {
    r.object("reminders");
    r.object("reminders.redis");
    String url = r.string("reminders.redis.url", "redis://127.0.0.1:6379/0");
    if (!url.matches("rediss?://.+")) {
      throw new ConfigException("reminders.redis.url", "must look like redis://host:6379/db, got " + url);
    }
    String prefix = r.string("reminders.redis.keyPrefix", "ordergate:remind:");
    if (prefix.contains("*") || prefix.contains("?") || prefix.contains(" ")) {
      throw new ConfigException("reminders.redis.keyPrefix", "must not contain spaces or glob characters");
    }
    return new RemindersConfig(
        r.integer("reminders.beforeSeconds", 0, 0, AppConfig.MAX_TIMEOUT_SECONDS),
        r.integer("reminders.scanMs", 1_000, 50, 3_600_000),
        r.intValue("reminders.batchSize", 500, 1, 100_000),
        r.bool("reminders.redis.enabled", false),
        url,
        prefix,
        r.integer("reminders.redis.reconnectMs", 1_000, 10, 600_000));
  }

  public boolean enabled() {
    return beforeSeconds > 0;
  }

  /** The Redis DB index the keys live in (the expired-event channel names it). */
  public int redisDb() {
    String path = redisUrl.replaceFirst("^rediss?://[^/]*", "");
    String db = path.startsWith("/") ? path.substring(1) : "";
    int q = db.indexOf('?');
    db = q >= 0 ? db.substring(0, q) : db;
    return db.matches("\\d{1,2}") ? Integer.parseInt(db) : 0;
  }
}
