package dev.ordergate.sweep;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Editing the config file changes the sweep of a running service; a bad value is rejected. */
class SweepLiveTuningTest {

  private static TestApp app;
  private static Path file;
  private static final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeAll
  static void start() throws IOException {
    logs.start();
    ((Logger) LoggerFactory.getLogger(Sweeper.class)).addAppender(logs);
    ((Logger) LoggerFactory.getLogger(SweepTuning.class)).addAppender(logs);
    file = Files.createTempFile("ordergate-sweep-", ".json");
    JsonObject config = config(60_000);
    Files.writeString(file, config.encodePrettily());
    app = TestApp.start(config, TestDatabase.freshDatabase(), file.toString());
  }

  @AfterAll
  static void stop() throws IOException {
    app.close();
    Files.deleteIfExists(file);
    ((Logger) LoggerFactory.getLogger(Sweeper.class)).detachAppender(logs);
    ((Logger) LoggerFactory.getLogger(SweepTuning.class)).detachAppender(logs);
  }

  private static JsonObject config(Object periodMs) {
    return TestApp.baseConfig().put("sweep", new JsonObject()
        .put("enabled", true).put("periodMs", periodMs).put("precise", false)
        .put("minDelayMs", 100).put("configScanMs", 200));
  }

  private static long runs() {
    return app.count("SELECT count(*) FROM sweep_runs WHERE finished_at IS NOT NULL");
  }

  private static boolean logged(String text) {
    return logs.list.stream().anyMatch(e -> e.getFormattedMessage().contains(text));
  }

  @Test
  void aConfigEditChangesThePeriodOfARunningServiceAndABadValueIsRejected() throws IOException {
    Sweeper sweeper = app.verticle.sweeper();
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20), () -> runs() >= 1), "the first run follows startup");
    assertEquals(60_000, sweeper.config().periodMs());

    Files.writeString(file, config(300).encodePrettily());
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20), () -> sweeper.config().periodMs() == 300),
        "the edit is applied within a few seconds");
    assertTrue(logged("sweep.periodMs 60000 -> 300"), "old and new values are logged");
    long after = runs();
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(30), () -> runs() >= after + 3),
        "with a 60 s period there would be no further run for a minute");

    Files.writeString(file, config(5).encodePrettily());
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20), () -> logged("rejected the sweep settings")),
        "a bad value is rejected with a log line");
    assertTrue(logged("sweep.periodMs: must be between 100"), "the log line names the key");
    assertEquals(300, sweeper.config().periodMs(), "the old value stays");

    Files.writeString(file, config(60_000).put("sweep", config(60_000).getJsonObject("sweep").put("enabled", false))
        .encodePrettily());
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(20), () -> !sweeper.config().enabled()));
    long stopped = runs();
    assertTrue(SweepFixtures.eventually(Duration.ofSeconds(2), () -> runs() > stopped + 1) == false,
        "a disabled sweep does not run on its own");
  }
}
