package dev.ordergate.config;

import dev.ordergate.auth.OperatorAccount;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The operator console's settings: accounts ({@code admin.operators.<name>.passwordHash}, made by
 * {@code scripts/hash-password}), session timeouts ({@code admin.session.*}) and the login throttle
 * ({@code admin.login.*}). An account with {@code "devOnly": true} is refused outside dev mode, like
 * a development-only payment channel, and so is any account whose password is the published
 * development password {@link #DEV_PASSWORD} (checked once per account at startup).
 */
public record ConsoleConfig(
    Map<String, OperatorAccount> operators,
    long idleTimeoutSeconds,
    long absoluteTimeoutSeconds,
    long failureDelayMs,
    int maxFailures,
    long lockoutMaxSeconds) {

  /** The password of the development account in conf/config.json: public, so refused outside dev mode. */
  public static final String DEV_PASSWORD = "ordergate-dev-console";

  public static ConsoleConfig from(ConfigReader r, boolean devMode) {
    Map<String, OperatorAccount> operators = new LinkedHashMap<>();
    for (String name : r.object("admin.operators").fieldNames()) {
      if (name.startsWith("_")) {
        continue;
      }
      String prefix = "admin.operators." + name + ".";
      if (!name.matches("[a-z][a-z0-9._-]{0,31}")) {
        throw new ConfigException("admin.operators." + name, "operator names are 1-32 of [a-z0-9._-], starting with a letter");
      }
      String stored = r.string(prefix + "passwordHash", null);
      boolean devOnly = r.bool(prefix + "devOnly", false);
      if (devOnly && !devMode) {
        throw new ConfigException("admin.operators." + name,
            "is a development-only account (devOnly: true) and the service is not in dev mode; remove it");
      }
      OperatorAccount account;
      try {
        account = OperatorAccount.of(name, stored, devOnly);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(prefix + "passwordHash", e.getMessage());
      }
      if (!devMode && account.hash().matches(DEV_PASSWORD.toCharArray())) {
        throw new ConfigException(prefix + "passwordHash",
            "is the published development password; it is refused outside dev mode (make one with scripts/hash-password)");
      }
      operators.put(name, account);
    }
    long idle = r.integer("admin.session.idleMinutes", 30, 1, 24 * 60) * 60;
    long absolute = r.integer("admin.session.absoluteHours", 8, 1, 7 * 24) * 3600;
    if (absolute < idle) {
      throw new ConfigException("admin.session.absoluteHours", "must not be shorter than admin.session.idleMinutes");
    }
    return new ConsoleConfig(Map.copyOf(operators), idle, absolute,
        r.integer("admin.login.failureDelayMs", 1000, 0, 60_000),
        r.intValue("admin.login.maxFailures", 5, 1, 1000),
        r.integer("admin.login.lockoutMaxSeconds", 900, 1, 86_400));
  }
}
