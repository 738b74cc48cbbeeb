package dev.ordergate.sim;

import dev.ordergate.channel.wechatpay.WechatPayClient;
import dev.ordergate.channel.wechatpay.WechatPaySignature;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Map;

/**
 * WeChat Pay API v3's server side under {@code /wechatpay}: Native prepay, query by out_trade_no, close.
 * Requests must carry a WECHATPAY2-SHA256-RSA2048 Authorization that verifies with the merchant's public
 * key (else 401 SIGN_ERROR); every answer is signed by the platform key. As the real one: close answers
 * 204 even for an unknown trade; query of an unknown trade is 404 ORDER_NOT_EXIST; time_expire is enforced.
 * Refunds ({@code POST /v3/refund/domestic/refunds}, query by out_refund_no): only of a paid trade, one per
 * out_refund_no (the same number answers the same refund), never above the trade's amount; a settled
 * refund is notified (REFUND.SUCCESS / REFUND.ABNORMAL) to the request's notify_url.
 */
final class WechatPayApi extends SimApi {

  private final WechatPayGateway gateway;
  final String mchId;
  private final String merchantSerial;
  private final PublicKey merchantKey;

  WechatPayApi(Vertx vertx, TradeBook trades, Faults faults, WechatPayGateway gateway, String mchId,
               String merchantSerial, PublicKey merchantKey) {
    super(vertx, trades, faults);
    this.gateway = gateway;
    this.mchId = mchId;
    this.merchantSerial = merchantSerial;
    this.merchantKey = merchantKey;
  }

  @Override
  String kind() {
    return "wechatpay-v3";
  }

  void mount(Router r) {
    r.post("/wechatpay/v3/pay/transactions/native").handler(ctx -> guarded(ctx, "open", () -> open(ctx)));
    r.get("/wechatpay/v3/pay/transactions/out-trade-no/:no").handler(ctx -> guarded(ctx, "query", () -> query(ctx)));
    r.post("/wechatpay/v3/pay/transactions/out-trade-no/:no/close").handler(ctx -> guarded(ctx, "close", () -> close(ctx)));
    r.post("/wechatpay/v3/refund/domestic/refunds").handler(ctx -> guarded(ctx, "refund", () -> refund(ctx)));
    r.get("/wechatpay/v3/refund/domestic/refunds/:no").handler(ctx -> guarded(ctx, "refund_query", () -> queryRefund(ctx)));
  }

  private void refund(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    JsonObject req = ctx.body().asJsonObject();
    String refundNo = req.getString("out_refund_no");
    JsonObject amount = req.getJsonObject("amount");
    if (refundNo == null || amount == null || amount.getLong("refund") == null || amount.getLong("total") == null
        || (req.getString("transaction_id") == null && req.getString("out_trade_no") == null)) {
      answer(ctx, 400, error("PARAM_ERROR", "transaction_id or out_trade_no, out_refund_no and amount.refund/total are required"));
      return;
    }
    TradeBook.Trade t = req.getString("transaction_id") != null ? trades.byTxn(kind(), req.getString("transaction_id"))
        : trades.get(kind(), req.getString("out_trade_no"));
    if (t != null && t.amountCents != amount.getLong("total")) {
      answer(ctx, 400, error("INVALID_REQUEST", "amount.total does not match the order amount"));
      return;
    }
    TradeBook.RefundResult result = trades.refund(kind(), t, refundNo, amount.getLong("refund"),
        "50300" + WechatPayGateway.random(10), req.getString("notify_url"));
    if (result.refusal() != null) {
      switch (result.refusal()) {
        case UNKNOWN_TRADE -> answer(ctx, 404, error("RESOURCE_NOT_EXISTS", "订单不存在"));
        case NOT_PAID -> answer(ctx, 400, error("INVALID_REQUEST", "订单未支付，不能退款"));
        case EXCEEDS_AMOUNT -> answer(ctx, 400, error("INVALID_REQUEST", "申请退款金额超过订单可退金额"));
        case REFUND_ID_REUSED -> answer(ctx, 400, error("INVALID_REQUEST", "退款单号已用于其他退款"));
      }
      return;
    }
    answer(ctx, 200, refundObject(result.refund()));
    if (!result.replayed() && result.refund().state != TradeBook.RefundState.PENDING) {
      settled(result.refund());
    }
  }

  private void queryRefund(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    TradeBook.Refund r = trades.refundOf(kind(), ctx.pathParam("no"));
    if (r == null) {
      answer(ctx, 404, error("RESOURCE_NOT_EXISTS", "退款单不存在"));
      return;
    }
    answer(ctx, 200, refundObject(r));
  }

  private static String status(TradeBook.Refund r) {
    return switch (r.state) {
      case SUCCEEDED -> "SUCCESS";
      case PENDING -> "PROCESSING";
      case FAILED -> "ABNORMAL";
    };
  }

  /** The Refund object as the refund API and its query answer it. */
  private static JsonObject refundObject(TradeBook.Refund r) {
    JsonObject out = new JsonObject().put("refund_id", r.gatewayRefundId).put("out_refund_no", r.refundId)
        .put("transaction_id", r.txnId).put("out_trade_no", r.tradeRef).put("channel", "ORIGINAL")
        .put("user_received_account", "支付用户零钱").put("create_time", rfc3339(r.createdAt))
        .put("status", status(r)).put("funds_account", "AVAILABLE")
        .put("amount", new JsonObject().put("total", r.amountCents).put("refund", r.amountCents)
            .put("payer_total", r.amountCents).put("payer_refund", r.amountCents).put("settlement_refund", r.amountCents)
            .put("settlement_total", r.amountCents).put("discount_refund", 0).put("currency", r.currency));
    if (r.state == TradeBook.RefundState.SUCCEEDED) {
      out.put("success_time", rfc3339(r.settledAt));
    }
    return out;
  }

  private static String rfc3339(java.time.Instant t) {
    return java.time.format.DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(
        t.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).atOffset(java.time.ZoneOffset.ofHours(8)));
  }

  @Override
  void settled(TradeBook.Refund r) {
    notifier.send(kind(), r.notifyUrl, gateway.refundNotification(r, status(r), System.currentTimeMillis() / 1000));
  }

  private static JsonObject error(String code, String message) {
    return new JsonObject().put("code", code).put("message", message);
  }

  boolean authorized(RoutingContext ctx) {
    String auth = ctx.request().getHeader("Authorization");
    byte[] body = ctx.body() == null || ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes();
    Map<String, String> parts = new HashMap<>();
    if (auth != null && auth.startsWith(WechatPayClient.AUTH_SCHEME + " ")) {
      for (String p : auth.substring(WechatPayClient.AUTH_SCHEME.length() + 1).split(",")) {
        int eq = p.indexOf('=');
        if (eq > 0) {
          parts.put(p.substring(0, eq).trim(), p.substring(eq + 1).trim().replace("\"", ""));
        }
      }
    }
    boolean ok = mchId.equals(parts.get("mchid")) && merchantSerial.equals(parts.get("serial_no"))
        && parts.get("nonce_str") != null && parts.get("signature") != null
        && WechatPaySignature.fresh(parts.get("timestamp"), System.currentTimeMillis() / 1000, 300)
        && WechatPaySignature.verifyRequest(merchantKey, ctx.request().method().name(), ctx.request().uri(),
            parts.get("timestamp"), parts.get("nonce_str"), body, parts.get("signature"));
    if (!ok) {
      answer(ctx, 401, new JsonObject().put("code", "SIGN_ERROR").put("message", "Authorization does not verify"));
    }
    return ok;
  }

  private void open(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    JsonObject req = ctx.body().asJsonObject();
    String no = req.getString("out_trade_no");
    JsonObject amount = req.getJsonObject("amount");
    if (!mchId.equals(req.getString("mchid")) || no == null || amount == null || amount.getLong("total") == null) {
      answer(ctx, 400, new JsonObject().put("code", "PARAM_ERROR").put("message", "mchid, out_trade_no and amount.total are required"));
      return;
    }
    String timeExpire = req.getString("time_expire");
    TradeBook.Trade t = trades.create(kind(), no, no, amount.getLong("total"), amount.getString("currency", "CNY"),
        timeExpire == null ? null : OffsetDateTime.parse(timeExpire).toInstant(), req.getString("notify_url"),
        "weixin://wxpay/bizpayurl?pr=" + WechatPayGateway.random(6), TradeBook.State.OPEN);
    if (t.amountCents != amount.getLong("total")) {
      answer(ctx, 400, new JsonObject().put("code", "INVALID_REQUEST").put("message", "out_trade_no already used with other parameters"));
      return;
    }
    if (t.state == TradeBook.State.PAID) {
      answer(ctx, 400, new JsonObject().put("code", "ORDERPAID").put("message", "order already paid"));
      return;
    }
    answer(ctx, 200, new JsonObject().put("code_url", t.clientValue));
  }

  private void query(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    TradeBook.Trade t = trades.get(kind(), ctx.pathParam("no"));
    if (t == null) {
      answer(ctx, 404, new JsonObject().put("code", "ORDER_NOT_EXIST").put("message", "order does not exist"));
      return;
    }
    String state = switch (t.state) {
      case PAID -> "SUCCESS";
      case CLOSED -> "CLOSED";
      default -> "NOTPAY";
    };
    JsonObject out = new JsonObject().put("appid", "sim").put("mchid", mchId).put("out_trade_no", t.ref)
        .put("trade_state", state).put("trade_state_desc", state)
        .put("amount", new JsonObject().put("total", t.amountCents).put("currency", t.currency));
    if (t.txnId != null) {
      out.put("transaction_id", t.txnId);
    }
    answer(ctx, 200, out);
  }

  private void close(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    TradeBook.Trade t = trades.close(kind(), ctx.pathParam("no"));
    if (t != null && t.state == TradeBook.State.PAID) {
      answer(ctx, 400, new JsonObject().put("code", "ORDERPAID").put("message", "order already paid"));
      return;
    }
    // The trap: 204 for a closed, an unknown and a never-created trade alike.
    answer(ctx, 204, null);
  }

  void answer(RoutingContext ctx, int status, JsonObject body) {
    byte[] bytes = body == null ? new byte[0] : body.encode().getBytes(StandardCharsets.UTF_8);
    Delivery signed = gateway.signed(bytes, System.currentTimeMillis() / 1000);
    var resp = ctx.response().setStatusCode(status);
    signed.headers().forEach((k, v) -> {
      if (body != null || !k.equals("Content-Type")) {
        resp.putHeader(k, v);
      }
    });
    resp.end(io.vertx.core.buffer.Buffer.buffer(bytes));
  }
}
