package dev.ordergate.config;

import io.vertx.core.json.JsonObject;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.channel.alipay.AlipaySettings;
import dev.ordergate.channel.ordergate.OrdergateSettings;
import dev.ordergate.channel.stripe.StripeSettings;
import dev.ordergate.channel.wechatpay.WechatPaySettings;

import java.security.SecureRandom;
import java.util.HashMap;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The service's typed configuration, validated once: a bad value throws {@link ConfigException}
 * naming its key (never echoing a secret). Environment overrides ({@code ORDERGATE_DB_URL},
 * {@code ORDERGATE_HTTP_PORT}, {@code ORDERGATE_ADMIN_TOKEN}, {@code ORDERGATE_API_KEYS},
 * {@code ORDERGATE_MODE}, {@code ORDERGATE_MANAGEMENT_PORT}) arrive as top-level keys of the merged
 * config and win over the file.
 *
 * <p>{@code devMode}: {@code mode} is {@code dev}, or unset with no {@code db.url} (the embedded-database
 * default). Development-only channels and keys (a channel with {@code devOnly: true}, any secret or key
 * carrying {@value #DEV_MARKER}) are refused at startup outside dev mode.
 */
public record AppConfig(
    String httpHost,
    int httpPort,
    String dbUrl,
    int dbPoolSize,
    String embeddedDataDir,
    long paymentTimeoutSeconds,
    String ordersCurrency,
    Map<String, ChannelConfig> channels,
    long autoRefundMaxCents,
    String adminToken,
    boolean adminTokenGenerated,
    boolean devMode,
    List<String> apiKeys,
    boolean apiKeyGenerated,
    String managementHost,
    int managementPort,
    long dbLockTimeoutMs,
    long dbStatementTimeoutMs,
    CallbacksConfig callbacks,
    OutboxConfig outbox,
    SweepConfig sweep,
    ReconcileConfig reconcile,
    RemindersConfig reminders,
    BrokerConfig broker,
    ConsoleConfig console,
    GatewayOpsConfig gatewayOps,
    ServerConfig server) {

  public static final long MAX_TIMEOUT_SECONDS = 7L * 24 * 3600;
  /** Every secret or key this repository publishes carries this marker; none is accepted outside dev mode. */
  public static final String DEV_MARKER = "DEVELOPMENT-ONLY";

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
      token = randomHex();
    } else {
      Secrets.requireStrong(r.raw("ORDERGATE_ADMIN_TOKEN") != null ? "ORDERGATE_ADMIN_TOKEN" : "admin.token", token);
    }
    int poolSize = r.intValue("db.poolSize", 10, 1, 200);
    String currency = r.string("orders.currency", "CNY");
    if (!currency.matches("[A-Z]{3}")) {
      throw new ConfigException("orders.currency", "must be an ISO 4217 code such as CNY, got " + currency);
    }
    boolean dev = devMode(r, dbUrl);
    List<String> apiKeys = apiKeys(r, dev);
    boolean apiKeyGenerated = apiKeys.isEmpty();
    if (apiKeyGenerated) {
      apiKeys = List.of(randomHex());
    }
    int managementPort = r.raw("ORDERGATE_MANAGEMENT_PORT") != null
        ? r.intValue("ORDERGATE_MANAGEMENT_PORT", 8081, 0, 65535)
        : r.intValue("management.port", 8081, 0, 65535);
    return new AppConfig(
        r.string("http.host", "0.0.0.0"),
        port,
        dbUrl,
        poolSize,
        r.string("db.embeddedDataDir", "data/pg"),
        r.integer("orders.paymentTimeoutSeconds", 1800, 1, MAX_TIMEOUT_SECONDS),
        currency,
        channels(r, currency, dev),
        r.integer("payments.autoRefundMaxCents", 10_000, 0, Long.MAX_VALUE),
        token,
        generated,
        dev,
        apiKeys,
        apiKeyGenerated,
        r.string("management.host", "127.0.0.1"),
        managementPort,
        r.integer("db.lockTimeoutMs", 3_000, 1, 600_000),
        r.integer("db.statementTimeoutMs", 30_000, 1, 3_600_000),
        CallbacksConfig.from(r, poolSize),
        OutboxConfig.from(r),
        SweepConfig.from(r),
        ReconcileConfig.from(r),
        RemindersConfig.from(r),
        BrokerConfig.from(r, r.integer("outbox.leaseMs", 60_000, 1_000, 3_600_000)),
        ConsoleConfig.from(r, dev),
        GatewayOpsConfig.from(r),
        ServerConfig.from(r));
  }

  private static String randomHex() {
    byte[] bytes = new byte[24];
    new SecureRandom().nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  private static boolean devMode(ConfigReader r, String dbUrl) {
    String key = r.raw("ORDERGATE_MODE") != null ? "ORDERGATE_MODE" : "mode";
    String mode = r.string(key, null);
    if (mode == null) {
      return dbUrl == null;
    }
    return switch (mode) {
      case "dev" -> true;
      case "production" -> false;
      default -> throw new ConfigException(key, "must be \"dev\" or \"production\"");
    };
  }

  /**
   * The service credentials for {@code /api/orders}, {@code /api/inventory} and {@code /api/coupons}:
   * {@code ORDERGATE_API_KEYS} (comma-separated) or {@code api.keys}. Outside dev mode at least one is
   * needed, and the published development key is refused. Empty: dev mode generates one for the run.
   */
  private static List<String> apiKeys(ConfigReader r, boolean dev) {
    String key;
    List<String> keys;
    Object env = r.raw("ORDERGATE_API_KEYS");
    if (env != null) {
      key = "ORDERGATE_API_KEYS";
      keys = new ArrayList<>();
      for (String k : String.valueOf(env).split(",")) {
        if (!k.isBlank()) {
          keys.add(k.trim());
        }
      }
    } else {
      key = "api.keys";
      keys = r.strings(key);
    }
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      if (k.length() < 16 || k.length() > 256 || !k.matches("[\\x21-\\x7e]+")) {
        throw new ConfigException(key + "[" + i + "]", "must be 16-256 printable characters without spaces");
      }
      if (k.chars().distinct().count() < 8) {
        throw new ConfigException(key + "[" + i + "]", "is too uniform to be a secret (fewer than 8 distinct characters)");
      }
      if (!dev && k.contains(DEV_MARKER)) {
        throw new ConfigException(key + "[" + i + "]", "is the published development key; it is refused outside dev mode");
      }
    }
    if (keys.isEmpty() && !dev) {
      throw new ConfigException(key, "needs at least one key outside dev mode (or set ORDERGATE_API_KEYS)");
    }
    return List.copyOf(keys);
  }

  private static Map<String, ChannelConfig> channels(ConfigReader r, String ordersCurrency, boolean dev) {
    Map<String, ChannelConfig> out = new LinkedHashMap<>();
    Map<String, String> secretOwners = new HashMap<>();
    for (String name : r.object("payments.channels").fieldNames()) {
      if (!name.matches("[A-Za-z0-9_-]{1,32}")) {
        throw new ConfigException("payments.channels." + name, "channel names are 1-32 of [A-Za-z0-9_-]");
      }
      String prefix = "payments.channels." + name + ".";
      String kindId = r.string(prefix + "kind", ChannelKind.ORDERGATE.id());
      ChannelKind kind = ChannelKind.of(kindId);
      if (kind == null) {
        throw new ConfigException(prefix + "kind", "must be one of " + ChannelKind.ids() + ", got " + kindId);
      }
      boolean flagged = r.bool(prefix + "devOnly", false);
      if (flagged && !dev) {
        throw devOnlyOutsideDevMode(name);
      }
      ChannelSettings settings = switch (kind) {
        case ORDERGATE -> OrdergateSettings.from(r, prefix);
        case WECHATPAY_V3 -> WechatPaySettings.from(r, prefix);
        case ALIPAY -> AlipaySettings.from(r, prefix);
        case STRIPE -> StripeSettings.from(r, prefix);
      };
      boolean devOnly = flagged || settings.usesDevelopmentKeys();
      if (devOnly && !dev) {
        throw devOnlyOutsideDevMode(name);
      }
      if (settings.usesDevelopmentKeys() && !flagged) {
        throw new ConfigException(prefix + "devOnly",
            "must be true: the channel uses development-only keys (conf/sandbox), which are public");
      }
      String currency = r.string(prefix + "currency", ordersCurrency);
      if (!currency.matches("[A-Z]{3}")) {
        throw new ConfigException(prefix + "currency", "must be an ISO 4217 code such as CNY, got " + currency);
      }
      claimSecrets(secretOwners, prefix, settings);
      String refundUrl = r.url(prefix + "refundUrl");
      out.put(name, new ChannelConfig(name, kind, devOnly, currency,
          r.integer(prefix + "toleranceSeconds", 300, 1, 86_400), refundUrl, settings));
    }
    return Map.copyOf(out);
  }

  private static ConfigException devOnlyOutsideDevMode(String name) {
    return new ConfigException("payments.channels." + name, "is development-only (devOnly, or a published "
        + "development secret or key) and the service is not in dev mode: remove the channel, or set mode to "
        + "\"dev\" on a machine that takes no real money");
  }

  /**
   * A secret that verifies two channels lets a request for one be accepted by the other: refused,
   * naming both keys and never the secret.
   */
  private static void claimSecrets(Map<String, String> owners, String prefix, ChannelSettings settings) {
    Map<String, String> mine = new LinkedHashMap<>();
    if (settings instanceof OrdergateSettings o) {
      for (int i = 0; i < o.secrets().size(); i++) {
        mine.putIfAbsent(o.secrets().get(i), prefix + "secrets[" + i + "]");
      }
    } else if (settings instanceof StripeSettings st) {
      for (int i = 0; i < st.webhookSecrets().size(); i++) {
        mine.putIfAbsent(st.webhookSecrets().get(i), prefix + "webhookSecrets[" + i + "]");
      }
    } else if (settings instanceof WechatPaySettings w) {
      mine.put(new String(w.apiV3Key(), java.nio.charset.StandardCharsets.UTF_8), prefix + "apiV3Key");
    }
    for (var e : mine.entrySet()) {
      String other = owners.putIfAbsent(e.getKey(), e.getValue());
      if (other != null) {
        throw new ConfigException(e.getValue(), "holds the same secret as " + other
            + "; every channel needs its own secret");
      }
    }
  }
}
