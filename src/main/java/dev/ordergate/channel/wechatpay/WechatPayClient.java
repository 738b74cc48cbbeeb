package dev.ordergate.channel.wechatpay;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.Set;

/**
 * WeChat Pay API v3, outbound: Native prepay ({@code POST /v3/pay/transactions/native}, with
 * {@code time_expire} = the order's expiry), query by out_trade_no and close. Each request carries
 * {@code Authorization: WECHATPAY2-SHA256-RSA2048 mchid,nonce_str,timestamp,serial_no,signature}
 * (merchant private key over {@code METHOD\nPATH?QUERY\ntimestamp\nnonce\nbody\n}); each answer we act
 * on must carry a Wechatpay-Signature that verifies with a configured platform key within the time
 * tolerance ({@link WechatPaySignature}). out_trade_no is our order number, as the notifications read it.
 * Refunds: {@code POST /v3/refund/domestic/refunds} by transaction_id with out_refund_no = our refund id
 * (the same number never refunds twice), amount in fen and our notify_url (REFUND.* notifications);
 * queried by {@code GET /v3/refund/domestic/refunds/{out_refund_no}}.
 */
public final class WechatPayClient implements GatewayClient {

  public static final String AUTH_SCHEME = "WECHATPAY2-SHA256-RSA2048";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ISO_OFFSET_DATE_TIME;

  /** Refusals that pass (rate limit, balance short, busy): retried with the same out_refund_no. */
  static final Set<String> RETRYABLE = Set.of("FREQUENCY_LIMITED", "NOT_ENOUGH", "SYSTEM_ERROR");

  private final ChannelConfig config;
  private final WechatPaySettings settings;
  private final Outbound outbound;
  private final Clock clock;

  public WechatPayClient(ChannelConfig config, Outbound outbound, Clock clock) {
    this.config = config;
    this.settings = (WechatPaySettings) config.settings();
    this.outbound = outbound;
    this.clock = clock;
    if (settings.merchantPrivateKey() == null || settings.merchantSerialNo() == null || settings.notifyUrl() == null) {
      throw new IllegalArgumentException("channel " + config.name()
          + " needs merchantPrivateKeyPem, merchantSerialNo and notifyUrl to open payments");
    }
  }

  @Override
  public Future<Opened> open(OpenRequest r) {
    JsonObject body = new JsonObject()
        .put("appid", settings.appId()).put("mchid", settings.mchId())
        .put("description", r.description()).put("out_trade_no", r.orderNo())
        .put("time_expire", RFC3339.format(r.expiresAt().truncatedTo(ChronoUnit.SECONDS).atOffset(ZoneOffset.ofHours(8))))
        .put("notify_url", settings.notifyUrl())
        .put("amount", new JsonObject().put("total", r.amountCents()).put("currency", r.currency()));
    return outbound.call(config.name(), "open", () -> send(HttpMethod.POST, "/v3/pay/transactions/native", body.encode())
        .map(resp -> {
          JsonObject answer = verified(resp, true);
          if (resp.statusCode() != 200 || !(answer.getValue("code_url") instanceof String url)) {
            throw error(resp, answer);
          }
          return new Opened(r.orderNo(), "code_url", url);
        }));
  }

  @Override
  public Future<Trade> query(String reference, String orderNo) {
    String path = "/v3/pay/transactions/out-trade-no/" + encode(reference) + "?mchid=" + encode(settings.mchId());
    return outbound.call(config.name(), "query", () -> send(HttpMethod.GET, path, null).map(resp -> {
      JsonObject answer = verified(resp, true);
      if (resp.statusCode() == 404 && "ORDER_NOT_EXIST".equals(answer.getValue("code"))) {
        return Trade.of(TradeState.NOT_FOUND, "ORDER_NOT_EXIST");
      }
      if (resp.statusCode() != 200 || !(answer.getValue("trade_state") instanceof String state)) {
        throw error(resp, answer);
      }
      return switch (state) {
        case "SUCCESS", "REFUND" -> paid(answer, state);
        case "NOTPAY", "USERPAYING", "ACCEPT" -> Trade.of(TradeState.OPEN, state);
        default -> Trade.of(TradeState.CLOSED, state);
      };
    }));
  }

  private Trade paid(JsonObject answer, String state) {
    JsonObject amount = answer.getValue("amount") instanceof JsonObject a ? a : new JsonObject();
    if (!(answer.getValue("transaction_id") instanceof String txn) || !(amount.getValue("total") instanceof Number total)) {
      throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "a paid trade without transaction_id or amount.total");
    }
    return new Trade(TradeState.PAID, txn, total.longValue(),
        amount.getValue("currency") instanceof String c ? c : null, state);
  }

  @Override
  public Future<Void> close(String reference, String orderNo) {
    String path = "/v3/pay/transactions/out-trade-no/" + encode(reference) + "/close";
    return outbound.call(config.name(), "close", () -> send(HttpMethod.POST, path,
        new JsonObject().put("mchid", settings.mchId()).encode()).map(resp -> {
          if (resp.statusCode() == 204 || resp.statusCode() == 200) {
            verified(resp, false);
            return (Void) null;
          }
          throw error(resp, verified(resp, false));
        }));
  }

  @Override
  public Future<Refund> refund(RefundRequest r) {
    JsonObject body = new JsonObject()
        .put("transaction_id", r.txnId()).put("out_refund_no", r.refundId()).put("reason", r.reason())
        .put("notify_url", settings.notifyUrl())
        .put("amount", new JsonObject().put("refund", r.amountCents()).put("total", r.amountCents())
            .put("currency", r.currency()));
    return outbound.call(config.name(), "refund", () -> send(HttpMethod.POST, "/v3/refund/domestic/refunds", body.encode())
        .map(this::refundAnswer));
  }

  @Override
  public Future<Refund> queryRefund(RefundRequest r) {
    return outbound.call(config.name(), "refund_query", () -> send(HttpMethod.GET,
        "/v3/refund/domestic/refunds/" + encode(r.refundId()), null).map(this::refundAnswer));
  }

  /** A Refund object's status: SUCCESS, PROCESSING, or ABNORMAL/CLOSED (failed); an error answer is failed unless it passes. */
  private Refund refundAnswer(HttpResponse<Buffer> resp) {
    JsonObject answer = verified(resp, true);
    if (resp.statusCode() == 200 && answer.getValue("status") instanceof String status) {
      String id = answer.getValue("refund_id") instanceof String s ? s : null;
      return switch (status) {
        case "SUCCESS" -> new Refund(RefundState.REFUNDED, id, status);
        case "PROCESSING" -> new Refund(RefundState.PENDING, id, status);
        default -> new Refund(RefundState.FAILED, id, status);
      };
    }
    GatewayFailure error = error(resp, answer);
    if (resp.statusCode() == 429 || RETRYABLE.contains(error.code())) {
      throw GatewayFailure.unreachable(config.name(), error.code(), error.getMessage());
    }
    throw error;
  }

  private Future<HttpResponse<Buffer>> send(HttpMethod method, String pathAndQuery, String body) {
    String url = settings.baseUrl() + pathAndQuery;
    String signedPath = URI.create(url).getRawPath() + (URI.create(url).getRawQuery() == null ? "" : "?" + URI.create(url).getRawQuery());
    String ts = Long.toString(clock.instant().getEpochSecond());
    String nonce = HexFormat.of().formatHex(randomBytes(16)).toUpperCase();
    byte[] bytes = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    var req = outbound.request(method, url)
        .putHeader("Accept", "application/json")
        .putHeader("Authorization", authorization(method.name(), signedPath, ts, nonce, bytes));
    if (body == null) {
      return req.send();
    }
    return req.putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(bytes));
  }

  /** The Authorization header's value for one request. */
  public String authorization(String method, String pathAndQuery, String ts, String nonce, byte[] body) {
    String signature = WechatPaySignature.signRequest(settings.merchantPrivateKey(), method, pathAndQuery, ts, nonce, body);
    return AUTH_SCHEME + " mchid=\"" + settings.mchId() + "\",nonce_str=\"" + nonce + "\",signature=\"" + signature
        + "\",timestamp=\"" + ts + "\",serial_no=\"" + settings.merchantSerialNo() + "\"";
  }

  /** The answer's JSON once its Wechatpay-Signature verified (a 5xx is unreachable); for the bill download. */
  public JsonObject verifiedJson(HttpResponse<Buffer> resp) {
    return verified(resp, true);
  }

  /**
   * The answer's JSON after its signature verified (an empty body reads as {}); a 5xx is the gateway
   * being unavailable. {@code required}: an answer without a signature is refused (a 2xx always is).
   */
  private JsonObject verified(HttpResponse<Buffer> resp, boolean required) {
    Outbound.rejectServerError(config.name(), resp);
    byte[] body = resp.body() == null ? new byte[0] : resp.body().getBytes();
    String signature = resp.getHeader(WechatPaySignature.SIGNATURE);
    if (signature == null && !required && resp.statusCode() / 100 != 2) {
      return parse(body);
    }
    String serial = resp.getHeader(WechatPaySignature.SERIAL);
    String ts = resp.getHeader(WechatPaySignature.TIMESTAMP);
    String nonce = resp.getHeader(WechatPaySignature.NONCE);
    PublicKey key = serial == null ? null : settings.platformKeys().get(serial);
    if (signature == null || key == null || nonce == null
        || !WechatPaySignature.fresh(ts, clock.instant().getEpochSecond(), config.toleranceSeconds())
        || !WechatPaySignature.verify(key, ts, nonce, body, signature)) {
      throw GatewayFailure.unreachable(config.name(), "BAD_RESPONSE_SIGNATURE",
          "the answer's Wechatpay-Signature is missing, stale or does not verify with a configured platform key");
    }
    return parse(body);
  }

  private JsonObject parse(byte[] body) {
    if (body.length == 0) {
      return new JsonObject();
    }
    try {
      return new JsonObject(Buffer.buffer(body));
    } catch (DecodeException | ClassCastException e) {
      throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "answer is not a JSON object");
    }
  }

  private GatewayFailure error(HttpResponse<Buffer> resp, JsonObject answer) {
    String code = answer.getValue("code") instanceof String c ? c : "HTTP_" + resp.statusCode();
    return GatewayFailure.answered(config.name(), code, answer.getValue("message") instanceof String m ? m : null);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }
}
