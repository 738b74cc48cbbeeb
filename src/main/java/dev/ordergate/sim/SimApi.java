package dev.ordergate.sim;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;

/** What the three simulated gateway APIs share: fault injection before a call is handled. */
abstract class SimApi {

  protected final Vertx vertx;
  protected final TradeBook trades;
  protected final Faults faults;
  /** Sends refund notifications (set by {@link SimApis}). */
  RefundNotifier notifier;

  SimApi(Vertx vertx, TradeBook trades, Faults faults) {
    this.vertx = vertx;
    this.trades = trades;
    this.faults = faults;
  }

  abstract String kind();

  /** A pending refund was settled ({@code POST /sim/refunds/KIND/ID/settle}): notify as the gateway does. */
  void settled(TradeBook.Refund refund) {
  }

  /** Runs {@code handler} after the injected latency, unless a fault answers (5xx) or hangs instead. */
  protected void guarded(RoutingContext ctx, String op, Runnable handler) {
    faults.started(kind());
    ctx.addEndHandler(v -> faults.finished(kind()));
    Faults.apply(vertx, faults.next(kind(), op)).onSuccess(v -> {
      if (v.status() > 0) {
        ctx.response().setStatusCode(v.status()).putHeader("Content-Type", "application/json")
            .end("{\"code\":\"SYSTEM_ERROR\",\"message\":\"injected fault\"}");
        return;
      }
      try {
        handler.run();
      } catch (RuntimeException e) {
        ctx.response().setStatusCode(400).putHeader("Content-Type", "application/json")
            .end("{\"code\":\"PARAM_ERROR\",\"message\":\"" + String.valueOf(e.getMessage()).replace("\"", "'") + "\"}");
      }
    });
  }

  static Future<Void> none() {
    return Future.succeededFuture();
  }
}
