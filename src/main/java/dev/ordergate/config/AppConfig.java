package dev.ordergate.config;

import io.vertx.core.json.JsonObject;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The service's typed configuration, validated once: a bad value throws {@link ConfigException}
 * naming its key. Environment overrides ({@code ORDERGATE_DB_URL}, {@code ORDERGATE_HTTP_PORT},
 * {@code ORDERGATE_ADMIN_TOKEN}) arrive as top-level keys of the merged config and win over the file.
 */
public record AppConfig(
    String httpHost,
    int httpPort,
    String dbUrl,
    int dbPoolSize,
    String embeddedDataDir,
    long paymentTimeoutSeconds,
    Map<String, ChannelConfig> channels,
    long autoRefundMaxCents,
    String adminToken,
    boolean adminTokenGenerated,
    CallbacksConfig callbacks,
    OutboxConfig outbox,
    SweepConfig sweep,
    ReconcileConfig reconcile,
    ServerConfig server) {

  public static final long MAX_TIMEOUT_SECONDS = 7L * 24 * 3600;

  public static AppConfig from(JsonObject json) {
    ConfigReader r = new ConfigReader(json);
    int port = r.raw("ORDERGATE_HTTP_PORT") != null
        ? r.intValue("ORDERGATE_HTTP_PORT", 8080, 0, 65535)
        : r.intValue("http.port", 8080, 0, 65535);
    String dbUrl = r.string("ORDERGATE_DB_URL", r.string("db.url", null));
    if (dbUrl != null && !dbUrl.startsWith("postgresql://") && !dbUrl.startsWith("postgres://")) {
      throw new ConfigException(r.raw("ORDERGATE_DB_URL") != null ? "ORDERGATE_DB_URL" : "db.url",
          "must look like postgresql://user@host:5432/database");
    }
    String token = r.string("ORDERGATE_ADMIN_TOKEN", r.string("admin.token", null));
    boolean generated = token == null;
    if (generated) {
      byte[] bytes = new byte[24];
      new SecureRandom().nextBytes(bytes);
      token = HexFormat.of().formatHex(bytes);
    } else if (token.length() < 16) {
      throw new ConfigException("admin.token", "must be at least 16 characters");
    }
    int poolSize = r.intValue("db.poolSize", 10, 1, 200);
    return new AppConfig(
        r.string("http.host", "0.0.0.0"),
        port,
        dbUrl,
        poolSize,
        r.string("db.embeddedDataDir", "data/pg"),
        r.integer("orders.paymentTimeoutSeconds", 1800, 1, MAX_TIMEOUT_SECONDS),
        channels(r),
        r.integer("payments.autoRefundMaxCents", 10_000, 0, Long.MAX_VALUE),
        token,
        generated,
        CallbacksConfig.from(r, poolSize),
        OutboxConfig.from(r),
        SweepConfig.from(r),
        ReconcileConfig.from(r),
        ServerConfig.from(r));
  }

  private static Map<String, ChannelConfig> channels(ConfigReader r) {
    Map<String, ChannelConfig> out = new LinkedHashMap<>();
    for (String name : r.object("payments.channels").fieldNames()) {
      if (!name.matches("[A-Za-z0-9_-]{1,32}")) {
        throw new ConfigException("payments.channels." + name, "channel names are 1-32 of [A-Za-z0-9_-]");
      }
      String prefix = "payments.channels." + name + ".";
      var secrets = r.strings(prefix + "secrets");
      if (secrets.isEmpty()) {
        throw new ConfigException(prefix + "secrets", "needs at least one secret");
      }
      String refundUrl = r.string(prefix + "refundUrl", null);
      if (refundUrl != null && !refundUrl.matches("https?://.+")) {
        throw new ConfigException(prefix + "refundUrl", "must be an http(s) URL, got " + refundUrl);
      }
      out.put(name, new ChannelConfig(name, secrets,
          r.integer(prefix + "toleranceSeconds", 300, 1, 86_400), refundUrl));
    }
    return Map.copyOf(out);
  }
}
