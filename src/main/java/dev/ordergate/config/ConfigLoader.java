package dev.ordergate.config;

import io.vertx.config.ConfigRetriever;
import io.vertx.config.ConfigRetrieverOptions;
import io.vertx.config.ConfigStoreOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Builds the config retriever: {@code conf/config.json} (or {@code ORDERGATE_CONF}) first, then the
 * environment, so that environment overrides win. The default stores are off: vertx-config's own
 * default order would let the file win over the environment.
 */
public final class ConfigLoader {

  public static final String CONF_ENV = "ORDERGATE_CONF";
  public static final String DEFAULT_PATH = "conf/config.json";
  static final JsonArray ENV_KEYS = new JsonArray()
      .add("ORDERGATE_DB_URL").add("ORDERGATE_HTTP_PORT").add("ORDERGATE_ADMIN_TOKEN")
      .add("ORDERGATE_API_KEYS").add("ORDERGATE_MODE").add("ORDERGATE_MANAGEMENT_PORT");

  private ConfigLoader() {
  }

  public static String configPath() {
    String path = System.getenv(CONF_ENV);
    return path == null || path.isBlank() ? DEFAULT_PATH : path;
  }

  /** A retriever over the file and the environment; {@code scanPeriodMs} > 0 watches the file. */
  public static ConfigRetriever retriever(Vertx vertx, String path, long scanPeriodMs) {
    ConfigStoreOptions file = new ConfigStoreOptions()
        .setType("file").setFormat("json")
        .setConfig(new JsonObject().put("path", path));
    ConfigStoreOptions env = new ConfigStoreOptions()
        .setType("env")
        .setConfig(new JsonObject().put("keys", ENV_KEYS).put("raw-data", true));
    ConfigRetrieverOptions options = new ConfigRetrieverOptions()
        .setIncludeDefaultStores(false)
        .addStore(file)
        .addStore(env);
    if (scanPeriodMs > 0) {
      options.setScanPeriod(scanPeriodMs);
    }
    return ConfigRetriever.create(vertx, options);
  }
}
