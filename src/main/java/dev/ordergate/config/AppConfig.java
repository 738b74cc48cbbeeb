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
    String ordersCurrency,
    Map<String, ChannelConfig> channels,
    long autoRefundMaxCents,
    String adminToken,
    boolean adminTokenGenerated,
    CallbacksConfig callbacks,
    OutboxConfig outbox,
    SweepConfig sweep,
    ReconcileConfig reconcile) {

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
    String currency = r.string("orders.currency", "CNY");
    if (!currency.matches("[A-Z]{3}")) {
      throw new ConfigException("orders.currency", "must be an ISO 4217 code such as CNY, got " + currency);
    }
    return new AppConfig(
        r.string("http.host", "0.0.0.0"),
        port,
        dbUrl,
        poolSize,
        r.string("db.embeddedDataDir", "data/pg"),
        r.integer("orders.paymentTimeoutSeconds", 1800, 1, MAX_TIMEOUT_SECONDS),
        currency,
        channels(r, currency),
        r.integer("payments.autoRefundMaxCents", 10_000, 0, Long.MAX_VALUE),
        token,
        generated,
        CallbacksConfig.from(r, poolSize),
        OutboxConfig.from(r),
        SweepConfig.from(r),
        ReconcileConfig.from(r));
  }

  private static Map<String, ChannelConfig> channels(ConfigReader r, String ordersCurrency) {
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
      ChannelSettings settings = switch (kind) {
        case ORDERGATE -> OrdergateSettings.from(r, prefix);
        case WECHATPAY_V3 -> WechatPaySettings.from(r, prefix);
        case ALIPAY -> AlipaySettings.from(r, prefix);
        case STRIPE -> StripeSettings.from(r, prefix);
      };
      boolean devOnly = r.bool(prefix + "devOnly", false);
      if (settings.usesDevelopmentKeys() && !devOnly) {
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
