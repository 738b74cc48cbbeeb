package dev.ordergate.channel.alipay;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Alipay, outbound: {@code alipay.trade.precreate} (a QR code, with {@code time_expire} = the order's
 * expiry, GMT+8), {@code alipay.trade.query} and {@code alipay.trade.close}, posted form-encoded to the
 * gateway with the signed common parameters ({@link AlipayProtocol}); every answer's {@code sign} must
 * verify with a configured Alipay public key. {@code ACQ.TRADE_NOT_EXIST} is NOT_FOUND: before the buyer
 * scans, the trade does not exist yet and could still be paid until its time_expire. Refunds:
 * {@code alipay.trade.refund} by trade_no with out_request_no = our refund id and refund_amount in yuan;
 * a 10000 answer with fund_change Y is the refund done; with N (this out_request_no refunded before, or
 * the refund is still being made) {@code alipay.trade.fastpay.refund.query} decides: refund_status
 * REFUND_SUCCESS is done, no refund_status is pending.
 */
public final class AlipayClient implements GatewayClient {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
  private static final ZoneOffset CHINA = ZoneOffset.ofHours(8);
  public static final String NOT_EXIST = "ACQ.TRADE_NOT_EXIST";
  /** Refusals that pass: retried with the same out_request_no (ACQ.SYSTEM_ERROR already is, as unreachable). */
  static final java.util.Set<String> RETRYABLE = java.util.Set.of("ACQ.SELLER_BALANCE_NOT_ENOUGH");

  private final ChannelConfig config;
  private final AlipaySettings settings;
  private final Outbound outbound;
  private final Clock clock;

  public AlipayClient(ChannelConfig config, Outbound outbound, Clock clock) {
    this.config = config;
    this.settings = (AlipaySettings) config.settings();
    this.outbound = outbound;
    this.clock = clock;
    if (settings.appPrivateKey() == null || settings.notifyUrl() == null) {
      throw new IllegalArgumentException("channel " + config.name() + " needs appPrivateKeyPem and notifyUrl to open payments");
    }
  }

  public static String time(Instant t) {
    return TIME.format(t.atOffset(CHINA));
  }

  @Override
  public Future<Opened> open(OpenRequest r) {
    JsonObject biz = new JsonObject().put("out_trade_no", r.orderNo()).put("total_amount", Yuan.of(r.amountCents()))
        .put("subject", r.description()).put("time_expire", time(r.expiresAt()));
    if (!"CNY".equals(r.currency())) {
      biz.put("trans_currency", r.currency());
    }
    return outbound.call(config.name(), "open", () -> call("alipay.trade.precreate", biz).map(node -> {
      if (!"10000".equals(node.getValue("code")) || !(node.getValue("qr_code") instanceof String qr)) {
        throw error(node);
      }
      return new Opened(r.orderNo(), "qr_code", qr);
    }));
  }

  @Override
  public Future<Trade> query(String reference, String orderNo) {
    return outbound.call(config.name(), "query", () -> call("alipay.trade.query",
        new JsonObject().put("out_trade_no", reference)).map(node -> {
          if (NOT_EXIST.equals(node.getValue("sub_code"))) {
            return Trade.of(TradeState.NOT_FOUND, NOT_EXIST);
          }
          if (!"10000".equals(node.getValue("code")) || !(node.getValue("trade_status") instanceof String status)) {
            throw error(node);
          }
          return switch (status) {
            case "TRADE_SUCCESS", "TRADE_FINISHED" -> {
              if (!(node.getValue("trade_no") instanceof String txn) || !(node.getValue("total_amount") instanceof String yuan)) {
                throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "a paid trade without trade_no or total_amount");
              }
              long cents;
              try {
                cents = Yuan.toCents(yuan, "total_amount");
              } catch (RuntimeException e) {
                throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "total_amount is not yuan");
              }
              yield new Trade(TradeState.PAID, txn, cents, null, status);
            }
            case "WAIT_BUYER_PAY" -> Trade.of(TradeState.OPEN, status);
            default -> Trade.of(TradeState.CLOSED, status);
          };
        }));
  }

  @Override
  public Future<Void> close(String reference, String orderNo) {
    return outbound.call(config.name(), "close", () -> call("alipay.trade.close",
        new JsonObject().put("out_trade_no", reference)).map(node -> {
          // TRADE_NOT_EXIST: nothing to close (yet); the query that follows says so.
          if ("10000".equals(node.getValue("code")) || NOT_EXIST.equals(node.getValue("sub_code"))) {
            return (Void) null;
          }
          throw error(node);
        }));
  }

  @Override
  public Future<Refund> refund(RefundRequest r) {
    JsonObject biz = new JsonObject().put("trade_no", r.txnId()).put("refund_amount", Yuan.of(r.amountCents()))
        .put("out_request_no", r.refundId()).put("refund_reason", r.reason());
    return outbound.call(config.name(), "refund", () -> call("alipay.trade.refund", biz).map(node -> {
      if ("10000".equals(node.getValue("code"))) {
        return node.getValue("fund_change");
      }
      throw refundError(node);
    })).compose(fundChange -> "Y".equals(fundChange)
        ? Future.succeededFuture(new Refund(RefundState.REFUNDED, null, "fund_change=Y"))
        // N: this out_request_no refunded before, or the refund is still being made; the query says which.
        : queryRefund(r).map(q -> q.state() == RefundState.REFUNDED ? q
            : new Refund(RefundState.PENDING, null, "fund_change=" + fundChange)));
  }

  @Override
  public Future<Refund> queryRefund(RefundRequest r) {
    JsonObject biz = new JsonObject().put("trade_no", r.txnId()).put("out_request_no", r.refundId());
    return outbound.call(config.name(), "refund_query", () -> call("alipay.trade.fastpay.refund.query", biz).map(node -> {
      if (!"10000".equals(node.getValue("code"))) {
        throw refundError(node);
      }
      // No refund_status: Alipay did not receive this out_request_no, or the refund failed.
      return "REFUND_SUCCESS".equals(node.getValue("refund_status"))
          ? new Refund(RefundState.REFUNDED, null, "REFUND_SUCCESS")
          : new Refund(RefundState.FAILED, null, "NOT_REFUNDED");
    }));
  }

  private GatewayFailure refundError(JsonObject node) {
    GatewayFailure e = error(node);
    return RETRYABLE.contains(e.code()) ? GatewayFailure.unreachable(config.name(), e.code(), e.getMessage()) : e;
  }

  /** Posts one signed request and answers its verified response node. */
  private Future<JsonObject> call(String method, JsonObject biz) {
    Map<String, String> params = signedParams(method, biz);
    StringBuilder form = new StringBuilder();
    params.forEach((k, v) -> form.append(form.length() == 0 ? "" : "&").append(k).append('=')
        .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
    return post(method, form.toString());
  }

  /** One signed call of {@code method}, answered as its verified response node (for the bill download). */
  public Future<JsonObject> signedCall(String method, JsonObject biz) {
    return call(method, biz);
  }

  /** The common parameters, {@code biz_content} and the {@code sign} over them, as posted. */
  public Map<String, String> signedParams(String method, JsonObject biz) {
    Map<String, String> params = new LinkedHashMap<>();
    params.put("app_id", settings.appId());
    params.put("method", method);
    params.put("format", "JSON");
    params.put("charset", "utf-8");
    params.put("sign_type", "RSA2");
    params.put("timestamp", time(clock.instant()));
    params.put("version", "1.0");
    if (method.equals("alipay.trade.precreate")) {
      params.put("notify_url", settings.notifyUrl());
    }
    params.put("biz_content", biz.encode());
    params.put("sign", AlipayProtocol.sign(AlipayProtocol.requestContent(params), settings.appPrivateKey()));
    return params;
  }

  private Future<JsonObject> post(String method, String form) {
    return outbound.request(HttpMethod.POST, settings.gatewayUrl())
        .putHeader("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
        .sendBuffer(Buffer.buffer(form))
        .map(resp -> {
          Outbound.rejectServerError(config.name(), resp);
          String body = resp.bodyAsString(StandardCharsets.UTF_8.name());
          if (body == null) {
            throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "empty answer");
          }
          String key = AlipayProtocol.responseKey(method);
          String node = AlipayProtocol.responseNode(body, key);
          if (node == null) {
            node = AlipayProtocol.responseNode(body, "error_response");
          }
          JsonObject whole;
          try {
            whole = new JsonObject(body);
          } catch (DecodeException | ClassCastException e) {
            throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "answer is not a JSON object");
          }
          if (node == null || !AlipayProtocol.verify(node, whole.getValue("sign") instanceof String s ? s : null,
              settings.alipayPublicKeys())) {
            throw GatewayFailure.unreachable(config.name(), "BAD_RESPONSE_SIGNATURE",
                "the answer's sign is missing or does not verify with a configured Alipay public key");
          }
          JsonObject parsed = new JsonObject(node);
          // 20000 / ACQ.SYSTEM_ERROR: the outcome is unknown; the call is to be retried, like a timeout.
          if ("20000".equals(parsed.getValue("code")) || "ACQ.SYSTEM_ERROR".equals(parsed.getValue("sub_code"))) {
            throw GatewayFailure.unreachable(config.name(), String.valueOf(parsed.getValue("sub_code", parsed.getValue("code"))),
                parsed.getValue("sub_msg") instanceof String m ? m : null);
          }
          return parsed;
        });
  }

  private GatewayFailure error(JsonObject node) {
    Object code = node.getValue("sub_code") != null ? node.getValue("sub_code") : node.getValue("code");
    Object msg = node.getValue("sub_msg") != null ? node.getValue("sub_msg") : node.getValue("msg");
    return GatewayFailure.answered(config.name(), String.valueOf(code), msg == null ? null : String.valueOf(msg));
  }
}
