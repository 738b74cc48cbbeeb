package dev.ordergate.tools;

import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Faults;
import dev.ordergate.sim.Payment;
import dev.ordergate.sim.Sender;
import dev.ordergate.sim.SimApis;
import dev.ordergate.sim.SimConfig;
import dev.ordergate.sim.StripeApi;
import dev.ordergate.sim.TradeBook;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.handler.BodyHandler;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code gateway-sim}: plays WeChat Pay v3, Alipay and Stripe locally with the DEVELOPMENT ONLY keys
 * of {@code conf/sandbox}. {@code pay} sends one payment's notifications to ordergate and retries on
 * the gateway's schedule until its success answer; {@code serve} offers the same over HTTP
 * ({@code POST /sim/pay}) for tests, the drill and load testers.
 */
public final class GatewaySimCommand {

  static final String HELP = """
      usage: scripts/gateway-sim pay --kind wechatpay-v3|alipay|stripe --order NO --amount CENTS [options]
             scripts/gateway-sim serve [--port 8090] [--host 127.0.0.1]
      pay: sends the gateway's signed (WeChat Pay: also encrypted) notification of a payment of the order
        --currency CNY        amount's currency (ISO 4217)       --txn ID   gateway transaction id (random)
        --statuses A,B        several notifications of the same payment, in this order, e.g. for alipay
                              WAIT_BUYER_PAY,TRADE_SUCCESS,TRADE_FINISHED; for stripe payment_intent.succeeded
                              (the default) or checkout.session.completed; wechatpay-v3: trade_state
        --out-of-order        deliver them in reverse order
        --duplicates N        deliver each notification N more times at once (same bytes)
        --delay-ms N          wait before the first delivery
        --service URL         ordergate (default http://127.0.0.1:8080); the channel is the sandbox one
        --channel NAME        of the kind (see conf/sandbox/gateway-sim.json), or --notify-url URL
        --retry-scale F       multiply the gateway's retry schedule (default 0.001: 15 s becomes 15 ms)
        --max-attempts N      per notification (default 16)   --config FILE  (conf/sandbox/gateway-sim.json)
      serve: POST /sim/pay with {"kind","orderNo","amountCents", and optionally "currency","txnId",
        "statuses","outOfOrder","duplicates","delayMs","notifyUrl"}; answers the attempts as JSON.
        Also the gateways' APIs with real trades (what ordergate's payment attempts call): /wechatpay/v3/...
        (Native prepay, query, close), /alipay/gateway.do (precreate, query, close), /stripe/v1/payment_intents,
        /stripe/v1/checkout/sessions (create, retrieve, expire); GET /sim/trades lists every trade;
        POST /sim/trades/KIND/REF/pay {"notify":true,"delayMs":0} (REF: out_trade_no, or the PaymentIntent id),
        POST /sim/trades/alipay/REF/scan, GET /sim/trades/KIND/REF, POST /sim/faults/KIND {"latencyMs","status",
        "count","hang","ops":["open","query","close","refund","refund_query"]}, POST /sim/faults/KIND/notifications
        {"dropShare","duplicateShare","maxDuplicates","delayMs","jitterMs","seed"} (for pays that do not say),
        DELETE /sim/faults (also resets GET /sim/stats/KIND:
        calls and the most in flight at once). --service URL: Stripe's webhook target.
        Bills (issue 10) from the paid trades: WeChat /wechatpay/v3/bill/tradebill, Alipay
        alipay.data.dataservice.bill.downloadurl.query, Stripe GET /stripe/v1/payment_intents and /v1/refunds;
        POST /sim/bills/KIND/REF {"amountCents":N} | {"omit":true} | {"refund":{"amountCents"}} injects a
        mismatch; DELETE /sim/bills drops them and leaves the trades made so far off later bills.
        Refunds: /wechatpay/v3/refund/domestic/refunds, alipay.trade.refund, /stripe/v1/refunds (one per refund id,
        only of a paid trade); GET /sim/refunds/KIND, POST /sim/refunds/KIND/outcome {"state":"PENDING|SUCCEEDED|FAILED"}
        (what new refunds start as), POST /sim/refunds/KIND/ID/settle {"state","notify"}, POST /sim/webhooks/KIND {"url"}.
      exit 0 when every notification got the gateway's success answer, 1 otherwise, 2 on usage errors.
      """;

  private final PrintStream out;

  GatewaySimCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("kind", "order", "amount", "currency", "txn", "statuses", "duplicates",
        "delay-ms", "service", "channel", "notify-url", "retry-scale", "max-attempts", "config", "port", "host"),
        Set.of("out-of-order"));
    if (args.help() || args.positional().isEmpty()) {
      out.print(HELP);
      return args.help() ? Tools.OK : Tools.FAILED;
    }
    SimConfig config = SimConfig.load(args.string("config", SimConfig.DEFAULT_PATH));
    Vertx vertx = Vertx.vertx();
    try {
      WebClient client = WebClient.create(vertx);
      Sender sender = new Sender(vertx, client, args.decimal("retry-scale", 0.001, 0, 10),
          args.intValue("max-attempts", 16, 1, 100));
      switch (args.positional().get(0)) {
        case "pay" -> {
          JsonObject spec = new JsonObject().put("kind", required(args, "kind")).put("orderNo", required(args, "order"))
              .put("amountCents", args.integer("amount", -1, 0, Long.MAX_VALUE))
              .put("currency", args.string("currency", "CNY")).put("txnId", args.string("txn", null))
              .put("outOfOrder", args.has("out-of-order")).put("duplicates", args.intValue("duplicates", 0, 0, 100))
              .put("delayMs", args.integer("delay-ms", 0, 0, 3_600_000))
              .put("notifyUrl", args.string("notify-url", null))
              .put("service", args.string("service", "http://127.0.0.1:8080")).put("channel", args.string("channel", null));
          if (spec.getLong("amountCents") < 0) {
            throw new Args.UsageException("--amount is required");
          }
          if (args.string("statuses", null) != null) {
            spec.put("statuses", new JsonArray(Arrays.asList((Object[]) args.string("statuses", "").split(","))));
          }
          JsonObject report = pay(vertx, config, sender, spec).await();
          print(report);
          return report.getBoolean("accepted") ? Tools.OK : Tools.ANOMALY;
        }
        case "serve" -> {
          String host = args.string("host", "127.0.0.1");
          SimApis apis = SimApis.load(vertx, args.string("config", SimConfig.DEFAULT_PATH), config,
              java.time.Clock.systemUTC());
          int bound = serve(vertx, config, apis, sender, host, args.intValue("port", 8090, 0, 65535),
              args.string("service", "http://127.0.0.1:8080")).await().actualPort();
          out.println("gateway-sim playing " + config.gateways().keySet() + " on http://" + host + ":" + bound
              + " (POST /sim/pay; gateway APIs under /wechatpay, /alipay, /stripe; /sim/trades, /sim/faults);"
              + " DEVELOPMENT ONLY keys from conf/sandbox");
          Thread.currentThread().join();
          return Tools.OK;
        }
        default -> throw new Args.UsageException("unknown subcommand " + args.positional().get(0));
      }
    } finally {
      vertx.close();
    }
  }

  private static String required(Args args, String name) {
    String v = args.string(name, null);
    if (v == null) {
      throw new Args.UsageException("--" + name + " is required");
    }
    return v;
  }

  private void print(JsonObject report) {
    for (Object o : report.getJsonArray("notifications")) {
      JsonObject n = (JsonObject) o;
      out.printf("%s %s -> %s%n", report.getString("kind"), n.getString("status"), report.getString("notifyUrl"));
      for (Object a : n.getJsonArray("attempts")) {
        JsonObject at = (JsonObject) a;
        out.printf("  HTTP %d %s%s%n", at.getInteger("status"), at.getString("body").replace("\n", " "),
            at.getString("outcome") == null ? "" : "  (ordergate: " + at.getString("outcome") + ")");
      }
    }
    out.println(report.getBoolean("accepted") ? "every notification got the gateway's success answer"
        : "some notification did NOT get the gateway's success answer");
  }

  /** Builds the notifications of {@code spec}, delivers them in order (each with its duplicates) and reports. */
  static Future<JsonObject> pay(Vertx vertx, SimConfig config, Sender sender, JsonObject spec) {
    SimConfig.Target target = config.target(spec.getString("kind"));
    String url = spec.getString("notifyUrl") != null ? spec.getString("notifyUrl")
        : spec.getString("service", "http://127.0.0.1:8080") + "/api/callbacks/"
            + (spec.getString("channel") != null ? spec.getString("channel") : target.channel());
    String txn = spec.getString("txnId") != null ? spec.getString("txnId") : defaultTxn(target.gateway().kind());
    Payment base = new Payment(spec.getString("orderNo"), txn, spec.getLong("amountCents"), spec.getString("currency", "CNY"), null);
    List<String> statuses = new ArrayList<>();
    JsonArray given = spec.getJsonArray("statuses");
    if (given == null || given.isEmpty()) {
      statuses.add(null);
    } else {
      given.forEach(s -> statuses.add((String) s));
    }
    if (spec.getBoolean("outOfOrder", false)) {
      Collections.reverse(statuses);
    }
    long now = System.currentTimeMillis() / 1000;
    List<Delivery> deliveries = statuses.stream().map(s -> target.gateway().notification(base.withStatus(s), now)).toList();
    int duplicates = spec.getInteger("duplicates", 0);
    JsonArray report = new JsonArray();
    Future<Boolean> chain = delay(vertx, spec.getLong("delayMs", 0L)).map(true);
    for (int i = 0; i < deliveries.size(); i++) {
      Delivery d = deliveries.get(i);
      String status = statuses.get(i) == null ? "(paid)" : statuses.get(i);
      chain = chain.compose(okSoFar -> {
        List<Future<Sender.Result>> copies = new ArrayList<>();
        for (int c = 0; c <= duplicates; c++) {
          copies.add(sender.deliver(url, d, target.gateway()));
        }
        return Future.all(copies).map(all -> {
          boolean ok = okSoFar;
          for (Future<Sender.Result> f : copies) {
            JsonArray attempts = new JsonArray();
            f.result().attempts().forEach(a -> attempts.add(new JsonObject().put("status", a.status())
                .put("body", a.body()).put("outcome", a.outcome())));
            report.add(new JsonObject().put("status", status).put("accepted", f.result().accepted()).put("attempts", attempts));
            ok &= f.result().accepted();
          }
          return ok;
        });
      });
    }
    return chain.map(ok -> new JsonObject().put("kind", target.gateway().kind()).put("notifyUrl", url)
        .put("txnId", txn).put("accepted", ok).put("notifications", report));
  }

  private static Future<Void> delay(Vertx vertx, long ms) {
    if (ms <= 0) {
      return Future.succeededFuture();
    }
    return Future.future(p -> vertx.setTimer(ms, id -> p.complete()));
  }

  private static String defaultTxn(String kind) {
    long n = ThreadLocalRandom.current().nextLong(1_000_000_000L, 9_999_999_999L);
    return switch (kind) {
      case "wechatpay-v3" -> "42000000" + n;
      case "alipay" -> "2026120122001" + n;
      default -> "pi_sim" + n;
    };
  }

  /** The simulator as an HTTP service: {@code POST /sim/pay} runs {@link #pay} and answers its report. */
  static Future<io.vertx.core.http.HttpServer> serve(Vertx vertx, SimConfig config, Sender sender, String host, int port) {
    return serve(vertx, config, null, sender, host, port, "http://127.0.0.1:8080");
  }

  /**
   * With {@code apis}, also the gateways' own APIs (open, query, close; issue 10) and their control:
   * {@code POST /sim/trades/{kind}/{ref}/scan} (Alipay: the buyer scans the QR code),
   * {@code POST /sim/trades/{kind}/{ref}/pay} ({"notify": true, "delayMs", "duplicates", "notifyUrl"}: the
   * buyer pays if the trade is payable, then the gateway notifies, unless notify is false: a dropped
   * notification), {@code GET /sim/trades/{kind}/{ref}}, {@code POST /sim/faults/{kind}} ({"latencyMs",
   * "status", "count", "hang", "ops"}) and {@code DELETE /sim/faults}.
   */
  public static Future<io.vertx.core.http.HttpServer> serve(Vertx vertx, SimConfig config, SimApis apis, Sender sender,
                                                            String host, int port, String service) {
    Router router = Router.router(vertx);
    router.route().handler(BodyHandler.create().setBodyLimit(64 * 1024));
    router.post("/sim/pay").handler(ctx -> {
      JsonObject spec;
      try {
        spec = ctx.body().asJsonObject();
        config.target(spec.getString("kind"));
      } catch (RuntimeException e) {
        badRequest(ctx, e);
        return;
      }
      pay(vertx, config, sender, spec).onComplete(ar -> answer(ctx, ar));
    });
    if (apis != null) {
      apis.notifier().start(sender, service);
      apis.mount(router);
      control(vertx, config, apis, sender, router, service);
    }
    return vertx.createHttpServer().requestHandler(router).listen(port, host);
  }

  private static void control(Vertx vertx, SimConfig config, SimApis apis, Sender sender, Router router, String service) {
    router.get("/sim/trades").handler(ctx -> {
      JsonArray list = new JsonArray();
      apis.trades().all().forEach(t -> list.add(trade(t)));
      json(ctx, 200, new JsonObject().put("trades", list));
    });
    router.get("/sim/trades/:kind/:ref").handler(ctx -> {
      TradeBook.Trade t = apis.trades().get(ctx.pathParam("kind"), ctx.pathParam("ref"));
      if (t == null) {
        json(ctx, 404, new JsonObject().put("error", "NOT_FOUND").put("message", "no such trade"));
      } else {
        json(ctx, 200, trade(t));
      }
    });
    router.post("/sim/trades/:kind/:ref/scan").handler(ctx -> {
      TradeBook.Trade t = apis.trades().scan(ctx.pathParam("kind"), ctx.pathParam("ref"));
      json(ctx, t == null ? 404 : 200, t == null ? new JsonObject().put("error", "NOT_FOUND") : trade(t));
    });
    router.post("/sim/trades/:kind/:ref/pay").handler(ctx -> {
      String kind = ctx.pathParam("kind");
      JsonObject spec = ctx.body() == null || ctx.body().length() == 0 ? new JsonObject() : ctx.body().asJsonObject();
      String ref = ctx.pathParam("ref");
      boolean session = kind.equals("stripe") && ref.startsWith("cs_");
      TradeBook.Trade t = apis.trades().pay(kind, ref,
          session ? StripeApi.sessionIntent(ref) : kind.equals("stripe") ? ref : defaultTxn(kind));
      if (t == null) {
        json(ctx, 404, new JsonObject().put("error", "NOT_FOUND").put("message", "no such trade"));
        return;
      }
      if (t.state != TradeBook.State.PAID) {
        json(ctx, 409, new JsonObject().put("error", "NOT_PAYABLE").put("message", "the trade is " + t.state)
            .put("trade", trade(t)));
        return;
      }
      Faults.NotificationVerdict fault = apis.faults().nextNotification(kind);
      if (fault != null) {
        // Injected notification faults, where the request does not say otherwise.
        spec = spec.copy();
        if (!spec.containsKey("notify")) {
          spec.put("notify", !fault.drop());
        }
        if (!spec.containsKey("duplicates")) {
          spec.put("duplicates", fault.duplicates());
        }
        if (!spec.containsKey("delayMs")) {
          spec.put("delayMs", fault.delayMs());
        }
      }
      if (!spec.getBoolean("notify", true)) {
        json(ctx, 200, trade(t).put("notified", false));
        return;
      }
      JsonObject pay = new JsonObject().put("kind", kind).put("orderNo", t.orderNo).put("amountCents", t.amountCents)
          .put("currency", t.currency).put("txnId", t.txnId).put("delayMs", spec.getLong("delayMs", 0L))
          .put("duplicates", spec.getInteger("duplicates", 0))
          .put("notifyUrl", spec.getString("notifyUrl", t.notifyUrl)).put("service", spec.getString("service", service));
      if (session) {
        // A Checkout Session's payment: Stripe sends both events, for the same PaymentIntent.
        pay.put("statuses", new JsonArray().add("checkout.session.completed").add("payment_intent.succeeded"));
      }
      pay(vertx, config, sender, pay).onComplete(ar -> answer(ctx, ar.map(report -> trade(t).put("notified", true)
          .put("report", report))));
    });
    router.post("/sim/faults/:kind/notifications").handler(ctx -> {
      apis.faults().setNotifications(ctx.pathParam("kind"), ctx.body().asJsonObject());
      json(ctx, 200, new JsonObject().put("kind", ctx.pathParam("kind")).put("notifications", ctx.body().asJsonObject()));
    });
    // Refunds (issue 10): list them, choose what new ones start as, settle a pending one, point notifications.
    router.get("/sim/refunds/:kind").handler(ctx -> {
      JsonArray out = new JsonArray();
      apis.trades().refunds(ctx.pathParam("kind")).forEach(r -> out.add(refund(r)));
      json(ctx, 200, new JsonObject().put("kind", ctx.pathParam("kind")).put("refunds", out));
    });
    router.post("/sim/refunds/:kind/outcome").handler(ctx -> {
      TradeBook.RefundState state = refundState(ctx);
      if (state != null) {
        apis.trades().refundOutcome(ctx.pathParam("kind"), state);
        json(ctx, 200, new JsonObject().put("kind", ctx.pathParam("kind")).put("state", state.name()));
      }
    });
    router.post("/sim/refunds/:kind/:refundId/settle").handler(ctx -> {
      TradeBook.RefundState state = refundState(ctx);
      if (state == null) {
        return;
      }
      boolean notify = ctx.body().length() == 0 || ctx.body().asJsonObject().getBoolean("notify", true);
      TradeBook.Refund r = apis.settle(ctx.pathParam("kind"), ctx.pathParam("refundId"), state, notify);
      json(ctx, r == null ? 404 : 200, r == null ? new JsonObject().put("error", "NOT_FOUND") : refund(r));
    });
    router.post("/sim/webhooks/:kind").handler(ctx -> {
      String url = ctx.body().length() == 0 ? null : ctx.body().asJsonObject().getString("url");
      apis.notifier().webhook(ctx.pathParam("kind"), url);
      json(ctx, 200, new JsonObject().put("kind", ctx.pathParam("kind")).put("url", url));
    });
    router.post("/sim/faults/:kind").handler(ctx -> {
      apis.faults().set(ctx.pathParam("kind"), ctx.body().asJsonObject());
      json(ctx, 200, new JsonObject().put("kind", ctx.pathParam("kind")).put("fault", ctx.body().asJsonObject()));
    });
    // Bills (issue 10): a trade billed with another amount, left off, or refunded at the gateway.
    router.post("/sim/bills/:kind/:ref").handler(ctx -> {
      JsonObject injected = apis.bills().inject(ctx.pathParam("kind"), ctx.pathParam("ref"), ctx.body().asJsonObject());
      json(ctx, injected == null ? 404 : 200, injected == null ? new JsonObject().put("error", "NOT_FOUND") : injected);
    });
    router.delete("/sim/bills").handler(ctx -> {
      apis.bills().clear();
      json(ctx, 200, new JsonObject().put("cleared", true));
    });
    router.get("/sim/stats/:kind").handler(ctx -> json(ctx, 200, apis.faults().stats(ctx.pathParam("kind"))));
    router.delete("/sim/faults").handler(ctx -> {
      apis.faults().clear();
      json(ctx, 200, new JsonObject().put("cleared", true));
    });
  }

  private static JsonObject trade(TradeBook.Trade t) {
    return new JsonObject().put("kind", t.kind).put("ref", t.ref).put("orderNo", t.orderNo).put("state", t.state.name())
        .put("txnId", t.txnId).put("amountCents", t.amountCents).put("currency", t.currency)
        .put("deadline", t.deadline == null ? null : t.deadline.toString());
  }

  private static JsonObject refund(TradeBook.Refund r) {
    return new JsonObject().put("kind", r.kind).put("refundId", r.refundId).put("gatewayRefundId", r.gatewayRefundId)
        .put("tradeRef", r.tradeRef).put("txnId", r.txnId).put("orderNo", r.orderNo).put("amountCents", r.amountCents)
        .put("currency", r.currency).put("state", r.state.name()).put("createdAt", r.createdAt.toString())
        .put("settledAt", r.settledAt == null ? null : r.settledAt.toString());
  }

  /** {@code {"state": "PENDING"|"SUCCEEDED"|"FAILED"}} of the request; null (answered 400) when missing or unknown. */
  private static TradeBook.RefundState refundState(io.vertx.ext.web.RoutingContext ctx) {
    try {
      return TradeBook.RefundState.valueOf(ctx.body().asJsonObject().getString("state"));
    } catch (RuntimeException e) {
      json(ctx, 400, new JsonObject().put("error", "BAD_REQUEST").put("message", "state must be PENDING, SUCCEEDED or FAILED"));
      return null;
    }
  }

  private static void badRequest(io.vertx.ext.web.RoutingContext ctx, RuntimeException e) {
    json(ctx, 400, new JsonObject().put("error", "BAD_REQUEST").put("message", String.valueOf(e.getMessage())));
  }

  private static void answer(io.vertx.ext.web.RoutingContext ctx, io.vertx.core.AsyncResult<JsonObject> ar) {
    json(ctx, ar.succeeded() ? 200 : 500, ar.succeeded() ? ar.result()
        : new JsonObject().put("error", "FAILED").put("message", ar.cause().toString()));
  }

  private static void json(io.vertx.ext.web.RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
  }
}
