package dev.ordergate.http;

import dev.ordergate.channel.GatewayFailure;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * A gateway's failure as an answer: 502 {@code GATEWAY_ERROR} when it answered with an error of its own (its
 * code in {@code gatewayCode}), 503 {@code GATEWAY_UNAVAILABLE} with {@code Retry-After} when it could not
 * be reached, timed out, answered 5xx or something unverifiable. Any other failure goes to the failure handler.
 */
final class GatewayErrors {

  private GatewayErrors() {
  }

  /** {@code what}: what the gateway did not do, e.g. "open the payment". */
  static void answer(RoutingContext ctx, Throwable err, String what) {
    if (!(err instanceof GatewayFailure g)) {
      ctx.fail(err);
      return;
    }
    if (!g.answered()) {
      ctx.response().putHeader("Retry-After", "1");
    }
    Json.send(ctx, g.answered() ? 502 : 503, new JsonObject()
        .put("error", g.answered() ? "GATEWAY_ERROR" : "GATEWAY_UNAVAILABLE")
        .put("message", "the gateway of channel " + g.channel() + " did not " + what + ": " + g.getMessage())
        .put("channel", g.channel()).put("gatewayCode", g.code()));
  }
}
