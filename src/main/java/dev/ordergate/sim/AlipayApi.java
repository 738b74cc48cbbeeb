package dev.ordergate.sim;

import dev.ordergate.channel.alipay.AlipayProtocol;
import dev.ordergate.channel.alipay.Yuan;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Alipay's open-API gateway under {@code /alipay/gateway.do}: {@code alipay.trade.precreate},
 * {@code .query} and {@code .close}. The request's {@code sign} must verify with the app public key; each
 * answer is signed by the Alipay key over its node. As the real one: a precreated trade does not exist
 * for query and close ({@code ACQ.TRADE_NOT_EXIST}) until the buyer scans, and can be paid afterwards
 * unless its {@code time_expire} has passed; a close of a paid trade is {@code ACQ.TRADE_STATUS_ERROR}.
 * {@code alipay.trade.refund}: only of a paid trade ({@code ACQ.TRADE_NOT_EXIST}, {@code ACQ.TRADE_STATUS_ERROR},
 * {@code ACQ.REFUND_AMT_NOT_EQUAL_TOTAL} otherwise), one per out_request_no: a repeat answers 10000 with
 * {@code fund_change=N} and refunds nothing; {@code alipay.trade.fastpay.refund.query} reads it back.
 */
final class AlipayApi extends SimApi {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  final AlipayGateway gateway;
  final String appId;
  final PublicKey appKey;

  AlipayApi(Vertx vertx, TradeBook trades, Faults faults, AlipayGateway gateway, String appId, PublicKey appKey) {
    super(vertx, trades, faults);
    this.gateway = gateway;
    this.appId = appId;
    this.appKey = appKey;
  }

  @Override
  String kind() {
    return "alipay";
  }

  void mount(Router r) {
    r.post("/alipay/gateway.do").handler(ctx -> {
      Map<String, String> params = form(ctx.body().asString(StandardCharsets.UTF_8.name()));
      String method = params.getOrDefault("method", "");
      String op = switch (method) {
        case "alipay.trade.precreate" -> "open";
        case "alipay.trade.query" -> "query";
        case "alipay.trade.close" -> "close";
        case "alipay.trade.refund" -> "refund";
        case "alipay.trade.fastpay.refund.query" -> "refund_query";
        default -> "other";
      };
      guarded(ctx, op, () -> handle(ctx, method, params));
    });
  }

  static Map<String, String> form(String body) {
    Map<String, String> out = new HashMap<>();
    if (body == null || body.isEmpty()) {
      return out;
    }
    for (String pair : body.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private void handle(RoutingContext ctx, String method, Map<String, String> params) {
    String key = AlipayProtocol.responseKey(method);
    if (!appId.equals(params.get("app_id")) || !"RSA2".equals(params.get("sign_type"))
        || !AlipayProtocol.verify(AlipayProtocol.requestContent(params), params.get("sign"), List.of(appKey))) {
      answer(ctx, key, fail("40002", "Invalid Arguments", "isv.invalid-signature", "sign does not verify"));
      return;
    }
    JsonObject biz = new JsonObject(params.getOrDefault("biz_content", "{}"));
    String no = biz.getString("out_trade_no");
    switch (method) {
      case "alipay.trade.precreate" -> {
        String expire = biz.getString("time_expire");
        TradeBook.Trade t = trades.create(kind(), no, no, Yuan.toCents(biz.getString("total_amount"), "total_amount"),
            "CNY", expire == null ? null : LocalDateTime.parse(expire, TIME).toInstant(ZoneOffset.ofHours(8)),
            params.get("notify_url"), "https://qr.alipay.com/sim" + WechatPayGateway.random(8).toLowerCase(),
            TradeBook.State.CREATED);
        answer(ctx, key, ok().put("out_trade_no", no).put("qr_code", t.clientValue));
      }
      case "alipay.trade.query" -> {
        TradeBook.Trade t = trades.get(kind(), no);
        if (t == null || t.state == TradeBook.State.CREATED) {
          answer(ctx, key, fail("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在"));
          return;
        }
        JsonObject out = ok().put("out_trade_no", no).put("total_amount", Yuan.of(t.amountCents))
            .put("trade_status", switch (t.state) {
              case PAID -> "TRADE_SUCCESS";
              case CLOSED -> "TRADE_CLOSED";
              default -> "WAIT_BUYER_PAY";
            });
        if (t.txnId != null) {
          out.put("trade_no", t.txnId);
        }
        answer(ctx, key, out);
      }
      case "alipay.trade.close" -> {
        TradeBook.Trade t = trades.get(kind(), no);
        if (t == null || t.state == TradeBook.State.CREATED) {
          // The trap: not scanned yet, so "does not exist", and it stays payable until its time_expire.
          answer(ctx, key, fail("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在"));
          return;
        }
        t = trades.close(kind(), no);
        if (t.state == TradeBook.State.PAID) {
          answer(ctx, key, fail("40004", "Business Failed", "ACQ.TRADE_STATUS_ERROR", "交易状态不合法"));
          return;
        }
        answer(ctx, key, ok().put("out_trade_no", no));
      }
      case "alipay.trade.refund" -> refund(ctx, key, biz);
      case "alipay.trade.fastpay.refund.query" -> {
        TradeBook.Refund r = trades.refundOf(kind(), biz.getString("out_request_no"));
        TradeBook.Trade t = trade(biz);
        if (t == null) {
          answer(ctx, key, fail("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在"));
          return;
        }
        JsonObject out = ok().put("trade_no", t.txnId).put("out_trade_no", t.ref);
        // A refund not made (or not yet done) is an answer without refund_status.
        if (r != null && r.tradeRef.equals(t.ref) && r.state == TradeBook.RefundState.SUCCEEDED) {
          out.put("out_request_no", r.refundId).put("total_amount", Yuan.of(t.amountCents))
              .put("refund_amount", Yuan.of(r.amountCents)).put("refund_status", "REFUND_SUCCESS")
              .put("gmt_refund_pay", TIME.format(r.settledAt.atOffset(ZoneOffset.ofHours(8))));
        }
        answer(ctx, key, out);
      }
      default -> answer(ctx, key, fail("40004", "Business Failed", "isv.invalid-method", "unknown method"));
    }
  }

  /** The trade a refund names: trade_no first (Alipay prefers it), else out_trade_no; not scanned = not there. */
  private TradeBook.Trade trade(JsonObject biz) {
    TradeBook.Trade t = biz.getString("trade_no") != null ? trades.byTxn(kind(), biz.getString("trade_no"))
        : trades.get(kind(), biz.getString("out_trade_no"));
    return t == null || t.state == TradeBook.State.CREATED ? null : t;
  }

  private void refund(RoutingContext ctx, String key, JsonObject biz) {
    TradeBook.Trade t = trade(biz);
    String requestNo = biz.getString("out_request_no", t == null ? biz.getString("out_trade_no") : t.ref);
    TradeBook.RefundResult result = trades.refund(kind(), t, requestNo,
        Yuan.toCents(biz.getString("refund_amount"), "refund_amount"), null, null);
    if (result.refusal() != null) {
      answer(ctx, key, switch (result.refusal()) {
        case UNKNOWN_TRADE -> fail("40004", "Business Failed", "ACQ.TRADE_NOT_EXIST", "交易不存在");
        case NOT_PAID -> fail("40004", "Business Failed", "ACQ.TRADE_STATUS_ERROR", "交易状态不合法");
        case EXCEEDS_AMOUNT, REFUND_ID_REUSED -> fail("40004", "Business Failed", "ACQ.REFUND_AMT_NOT_EQUAL_TOTAL", "退款金额超限");
      });
      return;
    }
    TradeBook.Refund r = result.refund();
    if (r.state == TradeBook.RefundState.FAILED) {
      answer(ctx, key, fail("40004", "Business Failed", "ACQ.TRADE_HAS_FINISHED", "交易已完结"));
      return;
    }
    long refunded = trades.refunds(kind()).stream().filter(x -> x.tradeRef.equals(r.tradeRef)
        && x.state == TradeBook.RefundState.SUCCEEDED).mapToLong(x -> x.amountCents).sum();
    // fund_change Y only when this call moved the money; a repeat (or a refund still being processed) is N.
    boolean moved = !result.replayed() && r.state == TradeBook.RefundState.SUCCEEDED;
    answer(ctx, key, ok().put("trade_no", r.txnId).put("out_trade_no", r.tradeRef)
        .put("buyer_logon_id", "sim***@example.com").put("fund_change", moved ? "Y" : "N")
        .put("refund_fee", Yuan.of(refunded)).put("gmt_refund_pay", TIME.format(r.createdAt.atOffset(ZoneOffset.ofHours(8)))));
  }

  /** A refund made: the trade_status_sync notify with out_biz_no and refund_fee, to the trade's notify_url. */
  @Override
  void settled(TradeBook.Refund r) {
    if (r.state != TradeBook.RefundState.SUCCEEDED) {
      return;
    }
    TradeBook.Trade t = trades.get(kind(), r.tradeRef);
    long refunded = trades.refunds(kind()).stream().filter(x -> x.tradeRef.equals(r.tradeRef)
        && x.state == TradeBook.RefundState.SUCCEEDED).mapToLong(x -> x.amountCents).sum();
    notifier.send(kind(), t.notifyUrl, gateway.refundNotification(r, t.amountCents, refunded));
  }

  static JsonObject ok() {
    return new JsonObject().put("code", "10000").put("msg", "Success");
  }

  static JsonObject fail(String code, String msg, String subCode, String subMsg) {
    return new JsonObject().put("code", code).put("msg", msg).put("sub_code", subCode).put("sub_msg", subMsg);
  }

  void answer(RoutingContext ctx, String key, JsonObject node) {
    ctx.response().putHeader("Content-Type", "application/json;charset=utf-8").end(gateway.answer(key, node));
  }
}
