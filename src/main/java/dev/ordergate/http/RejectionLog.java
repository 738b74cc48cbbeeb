package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every 4xx answer is counted ({@code ordergate_http_rejections_total{status,code}}, in full), but
 * at most {@code perSecond} of them are logged each second; the lines dropped are summed up in the
 * next line logged, so a flood of forged or malformed requests cannot fill the disk. Wraps
 * {@link Failures#handle} where it is mounted.
 */
public final class RejectionLog {

  private static final Logger log = LoggerFactory.getLogger(RejectionLog.class);

  private final MeterRegistry registry;
  private final int perSecond;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private long windowStart;
  private int loggedInWindow;
  private long suppressed;

  public RejectionLog(MeterRegistry registry, int perSecond) {
    this.registry = registry;
    this.perSecond = perSecond;
  }

  /** Where {@link InputGuard} leaves this log for routes that answer a refusal themselves. */
  static final String KEY = "ordergate.rejectionLog";

  /**
   * For a route that answers a refusal itself, in its own dialect (a payment channel's rejection):
   * counted and logged sampled like the others.
   */
  static void record(RoutingContext ctx, int status, String code, String message) {
    RejectionLog log = ctx.get(KEY);
    if (log != null) {
      log.record(ctx.request(), status, code, message);
    }
  }

  /** {@code answer} (the failure or error handler) preceded by recording a client mistake. */
  public Handler<RoutingContext> before(Handler<RoutingContext> answer) {
    return ctx -> {
      Throwable failure = ctx.failure();
      if (failure instanceof Rejection r) {
        record(ctx.request(), r.status(), r.code(), r.getMessage());
      } else if (failure == null && ctx.statusCode() >= 400 && ctx.statusCode() < 500) {
        record(ctx.request(), ctx.statusCode(), "HTTP_" + ctx.statusCode(), "");
      }
      answer.handle(ctx);
    };
  }

  void record(HttpServerRequest req, int status, String code, String message) {
    // Codes are the service's own constants (and HTTP_4xx): a fixed, small label set.
    counters.computeIfAbsent(status + " " + code, k -> Counter.builder("ordergate.http.rejections")
        .description("Requests answered 4xx, by status and error code")
        .tag("status", Integer.toString(status)).tag("code", code)
        .register(registry)).increment();
    long dropped = admit(System.currentTimeMillis());
    if (dropped < 0) {
      return;
    }
    String path = req.path();
    log.info("rejected {} {} -> {} {}: {}{}", req.method(),
        path.length() > 200 ? path.substring(0, 200) + "..." : path, status, code, message,
        dropped > 0 ? " (" + dropped + " more rejections not logged)" : "");
  }

  /** -1: do not log this one; else the number of lines dropped since the last one logged. */
  synchronized long admit(long now) {
    if (now - windowStart >= 1000) {
      windowStart = now;
      loggedInWindow = 0;
    }
    if (loggedInWindow >= perSecond) {
      suppressed++;
      return -1;
    }
    loggedInWindow++;
    long dropped = suppressed;
    suppressed = 0;
    return dropped;
  }
}
