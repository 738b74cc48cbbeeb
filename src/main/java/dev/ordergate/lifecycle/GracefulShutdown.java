package dev.ordergate.lifecycle;

import io.vertx.core.Future;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The shutdown sequence (SIGTERM: the JVM's shutdown hook closes Vert.x, which stops the service):
 * readiness answers 503 at once, the service goes on serving for {@code shutdown.drainDelayMs}
 * (0 by default: a load balancer that polls readiness stops sending meanwhile), then the listener
 * stops accepting connections and waits for the
 * requests in flight to be answered (a callback is answered once its batch committed), then the
 * background work finishes what it started (the sweep's batch in flight, the relay's deliveries),
 * each step within what is left of {@code shutdown.graceMs}.
 */
public final class GracefulShutdown {

  private static final Logger log = LoggerFactory.getLogger(GracefulShutdown.class);

  private final long graceMs;
  private final long drainDelayMs;
  private volatile boolean draining;

  public GracefulShutdown(long graceMs, long drainDelayMs) {
    this.graceMs = graceMs;
    this.drainDelayMs = drainDelayMs;
  }

  public boolean draining() {
    return draining;
  }

  /** Mounted on {@code /health/ready} in front of the real check: 503 once shutdown began. */
  public void readiness(RoutingContext ctx) {
    if (!draining) {
      ctx.next();
      return;
    }
    ctx.response().setStatusCode(503).putHeader("Content-Type", "application/json")
        .end(new JsonObject().put("status", "DRAINING").encode());
  }

  /**
   * Not ready, stop accepting, answer what is in flight, then run {@code then} one after another;
   * a step that fails or overruns is logged and the next one still runs.
   */
  public Future<Void> run(io.vertx.core.Vertx vertx, HttpServer server, List<Supplier<Future<?>>> then) {
    draining = true;
    long deadline = System.currentTimeMillis() + graceMs;
    log.info("shutting down: not ready, serving {} ms more, then draining requests in flight (grace {} ms)",
        drainDelayMs, graceMs);
    // The listener gets most of the budget; what follows it is short (the end of a batch).
    Future<Void> chain = (drainDelayMs > 0 ? vertx.timer(drainDelayMs).<Void>mapEmpty() : Future.<Void>succeededFuture())
        .compose(v -> server == null ? Future.succeededFuture() : tolerant(server.shutdown(
            Math.max(1, (graceMs - drainDelayMs) * 3 / 4), TimeUnit.MILLISECONDS)));
    for (Supplier<Future<?>> step : then) {
      chain = chain.compose(v -> tolerant(step.get()
          .timeout(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS)));
    }
    return chain.onComplete(v -> log.info("drained; stopping"));
  }

  private static Future<Void> tolerant(Future<?> step) {
    return step.<Void>mapEmpty().recover(err -> {
      log.warn("shutdown step did not finish cleanly: {}", err.toString());
      return Future.succeededFuture();
    });
  }
}
