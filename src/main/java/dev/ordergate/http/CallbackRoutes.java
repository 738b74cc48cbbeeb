package dev.ordergate.http;

import dev.ordergate.config.ChannelConfig;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.Rejection;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.payment.SignatureVerifier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;

/**
 * {@code POST /api/callbacks/{channel}}: unknown channel 404, bad signature 401 (checked over the
 * raw bytes before parsing), malformed body 400; a verified callback goes through the gate and is
 * answered 200 with its outcome. Only our own failure answers 5xx, so the gateway retries.
 */
public final class CallbackRoutes {

  private final Map<String, ChannelConfig> channels;
  private final SignatureVerifier verifier;
  /** The gate's queue: a callback, and whether its client has gone (then it is dropped unrun). */
  private final BiFunction<PaymentCallback, BooleanSupplier, Future<CallbackResult>> gate;
  private final Metrics metrics;

  public CallbackRoutes(Map<String, ChannelConfig> channels, SignatureVerifier verifier,
                        BiFunction<PaymentCallback, BooleanSupplier, Future<CallbackResult>> gate, Metrics metrics) {
    this.channels = channels;
    this.verifier = verifier;
    this.gate = gate;
    this.metrics = metrics;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.post("/callbacks/:channel").handler(this::callback);
    return r;
  }

  private void callback(RoutingContext ctx) {
    String name = ctx.pathParam("channel");
    ChannelConfig channel = channels.get(name);
    if (channel == null) {
      throw new Rejection(404, "UNKNOWN_CHANNEL", "no payment channel " + name);
    }
    byte[] raw = RawBody.of(ctx).getBytes();
    if (!verifier.verify(channel, ctx.request().getHeader(SignatureVerifier.HEADER), raw)) {
      // Counted here and logged (sampled) by RejectionLog: one warning per forged request would amplify a flood.
      metrics.callback(name, "BAD_SIGNATURE", false);
      throw new Rejection(401, "BAD_SIGNATURE", "signature missing, invalid or outside the time tolerance");
    }
    PaymentCallback cb;
    try {
      cb = parse(name, Json.body(ctx), new String(raw, StandardCharsets.UTF_8));
    } catch (Rejection malformed) {
      metrics.callback(name, "MALFORMED", false);
      throw malformed;
    }
    AtomicBoolean gone = new AtomicBoolean();
    ctx.response().closeHandler(v -> gone.set(true));
    gate.apply(cb, gone::get)
        .onSuccess(result -> Json.send(ctx, 200, new JsonObject()
            .put("outcome", result.outcome().name())
            .put("orderNo", result.orderNo())
            .put("orderStatus", result.orderStatus() == null ? null : result.orderStatus().name())
            .put("duplicate", result.duplicate())))
        .onFailure(ctx::fail);
  }

  static PaymentCallback parse(String channel, JsonObject body, String payload) {
    return new PaymentCallback(channel,
        Json.id(body, "txnId", true),
        Json.id(body, "orderNo", true),
        Json.integer(body, "amountCents", 0, 10_000_000_000_000L, true),
        Json.string(body, "status", 32, true),
        null, payload);
  }
}
