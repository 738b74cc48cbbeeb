package dev.ordergate.config;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The listener limits and shutdown keys: defaults, and bad values named. */
class ServerConfigTest {

  @Test
  void defaultsAreBounded() {
    ServerConfig c = ServerConfig.from(new ConfigReader(new JsonObject()));
    assertEquals(8192, c.maxHeaderBytes());
    assertEquals(10_000, c.headerTimeoutMs());
    assertEquals(1000, c.maxConnections());
    assertEquals(20_000, c.shutdownGraceMs());
    assertEquals(0, c.shutdownDrainDelayMs());
  }

  @Test
  void badValuesNameTheirKey() {
    ConfigException tooSmall = assertThrows(ConfigException.class, () -> ServerConfig.from(new ConfigReader(
        new JsonObject().put("http", new JsonObject().put("headerTimeoutMs", 5)))));
    assertTrue(tooSmall.getMessage().contains("http.headerTimeoutMs"), tooSmall.getMessage());
    ConfigException delay = assertThrows(ConfigException.class, () -> ServerConfig.from(new ConfigReader(
        new JsonObject().put("shutdown", new JsonObject().put("graceMs", 1000).put("drainDelayMs", 1000)))));
    assertTrue(delay.getMessage().contains("shutdown.drainDelayMs"), delay.getMessage());
  }
}
