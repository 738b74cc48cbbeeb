package dev.ordergate.http;

import dev.ordergate.channel.Answer;
import dev.ordergate.channel.ChannelRejection;
import dev.ordergate.channel.Inbound;
import dev.ordergate.channel.Notification;
import dev.ordergate.channel.PaymentChannel;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import dev.ordergate.domain.Rejection;
import dev.ordergate.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;

/**
 * {@code POST /api/callbacks/{channel}}: unknown channel 404; otherwise the channel of that name
 * verifies the raw request in its gateway's format. A payment goes through the gate; a verified
 * notification that is not a payment is recorded and changes no order. The success answer is written
 * only after the commit; a refused request gets the channel's failure answer (nothing changed), our
 * own failure its retry answer. Every answer is in the gateway's dialect, and carries
 * {@code X-Ordergate-Outcome} for people and tools reading it.
 */
public final class CallbackRoutes {

  public static final String OUTCOME_HEADER = "X-Ordergate-Outcome";

  private final Map<String, PaymentChannel> channels;
  /** The gate's queue: a callback, and whether its client has gone (then it is dropped unrun). */
  private final BiFunction<PaymentCallback, BooleanSupplier, Future<CallbackResult>> gate;
  private final BiFunction<String, Notification, Future<CallbackResult>> record;
  private final Metrics metrics;

  /** {@code record} stores a verified non-payment notification of a channel and answers IGNORED. */
  public CallbackRoutes(Map<String, PaymentChannel> channels,
                        BiFunction<PaymentCallback, BooleanSupplier, Future<CallbackResult>> gate,
                        BiFunction<String, Notification, Future<CallbackResult>> record, Metrics metrics) {
    this.channels = channels;
    this.gate = gate;
    this.record = record;
    this.metrics = metrics;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.post("/callbacks/:channel").handler(this::callback);
    return r;
  }

  private void callback(RoutingContext ctx) {
    String name = ctx.pathParam("channel");
    PaymentChannel channel = channels.get(name);
    if (channel == null) {
      throw new Rejection(404, "UNKNOWN_CHANNEL", "no payment channel " + name);
    }
    byte[] raw = RawBody.of(ctx).getBytes();
    Notification n;
    try {
      n = channel.receive(new Inbound(raw, ctx.request()::getHeader));
    } catch (ChannelRejection r) {
      metrics.callback(name, r.code(), false);
      // Counted here and in RejectionLog, logged sampled: a line per forged request would amplify a flood.
      Answer answer = channel.rejected(r);
      RejectionLog.record(ctx, answer.status(), r.code(), "channel " + name + " (" + channel.kind().id() + "): "
          + r.getMessage());
      send(ctx, answer, r.code());
      return;
    }
    AtomicBoolean gone = new AtomicBoolean();
    ctx.response().closeHandler(v -> gone.set(true));
    Future<CallbackResult> done = n.callback() != null ? gate.apply(n.callback(), gone::get) : record.apply(name, n);
    done.onSuccess(result -> send(ctx, channel.processed(result),
            result.outcome().name() + (result.duplicate() ? ",DUPLICATE" : "")))
        .onFailure(err -> {
          Failures.Ours ours = Failures.ours(ctx, err);
          send(ctx, channel.retry(ours.status(), ours.code(), ours.message()), "RETRY");
        });
  }

  private static void send(RoutingContext ctx, Answer answer, String outcome) {
    if (ctx.response().ended()) {
      return;
    }
    var resp = ctx.response().setStatusCode(answer.status()).putHeader(OUTCOME_HEADER, outcome);
    if (answer.status() == 503) {
      resp.putHeader("Retry-After", "1");
    }
    if (answer.contentType() != null) {
      resp.putHeader("Content-Type", answer.contentType());
    }
    if (answer.body() == null) {
      resp.end();
    } else {
      resp.end(answer.body());
    }
  }
}
