package dev.ordergate.sweep;

import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigLoader;
import dev.ordergate.config.SweepConfig;
import io.vertx.config.ConfigRetriever;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live tuning: watches the config file (vertx-config scan) and hands the {@code sweep.*} settings
 * to the sweeper whenever the file changes. A value that does not validate rejects the change with
 * a log line naming the key, and the running settings stay. Keys outside {@code sweep.*} need a
 * restart; a change to them is logged as such.
 */
public final class SweepTuning {

  private static final Logger log = LoggerFactory.getLogger(SweepTuning.class);

  private final String path;
  private final ConfigRetriever retriever;
  private final Sweeper sweeper;

  private SweepTuning(String path, ConfigRetriever retriever, Sweeper sweeper) {
    this.path = path;
    this.retriever = retriever;
    this.sweeper = sweeper;
  }

  /** Starts watching {@code path} every {@code scanMs}; call on the verticle's context. */
  public static Future<SweepTuning> watch(Vertx vertx, String path, long scanMs, Sweeper sweeper) {
    SweepTuning tuning = new SweepTuning(path, ConfigLoader.retriever(vertx, path, scanMs), sweeper);
    return tuning.retriever.getConfig()
        .compose(tuning::apply)
        .recover(err -> {
          log.warn("live sweep tuning: cannot read {} now ({}); will keep watching it", path, err.getMessage());
          return Future.succeededFuture();
        })
        .map(v -> {
          tuning.retriever.listen(change -> tuning.changed(change.getPreviousConfiguration(),
              change.getNewConfiguration()));
          log.info("live sweep tuning: watching {} every {} ms", path, scanMs);
          return tuning;
        });
  }

  private void changed(JsonObject previous, JsonObject next) {
    if (!withoutSweep(previous).equals(withoutSweep(next))) {
      log.warn("{} changed outside sweep.*: those keys take effect after a restart", path);
    }
    apply(next);
  }

  private Future<Void> apply(JsonObject json) {
    SweepConfig next;
    try {
      next = SweepConfig.from(json);
    } catch (ConfigException e) {
      log.error("rejected the sweep settings in {}: {}; keeping {}", path, e.getMessage(), sweeper.config());
      return Future.succeededFuture();
    }
    return sweeper.reconfigure(next);
  }

  private static JsonObject withoutSweep(JsonObject json) {
    JsonObject copy = json == null ? new JsonObject() : json.copy();
    copy.remove("sweep");
    return copy;
  }

  public Future<Void> close() {
    return retriever.close();
  }
}
