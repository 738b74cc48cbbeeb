package dev.ordergate.sim;

import dev.ordergate.channel.alipay.AlipaySignature;
import dev.ordergate.channel.alipay.Yuan;

import java.net.URLEncoder;
import java.nio.charset.Charset;
import java.security.PrivateKey;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Alipay's asynchronous notify (gateway protocol): form-encoded parameters in {@code charset},
 * {@code sign} = SHA256withRSA by the Alipay private key over the sorted parameters without
 * {@code sign}/{@code sign_type}. The answer must be the body {@code success}.
 */
public final class AlipayGateway implements Gateway {

  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  private final String appId;
  private final PrivateKey alipayKey;
  private final Charset charset;

  public AlipayGateway(String appId, PrivateKey alipayKey, Charset charset) {
    this.appId = appId;
    this.alipayKey = alipayKey;
    this.charset = charset;
  }

  @Override
  public String kind() {
    return "alipay";
  }

  /** The parameters of a trade_status_sync notify ({@code trade_status} = status or TRADE_SUCCESS). */
  public Map<String, String> params(Payment p) {
    String now = TIME.format(Instant.now().atOffset(ZoneOffset.ofHours(8)));
    Map<String, String> m = new TreeMap<>();
    m.put("notify_time", now);
    m.put("notify_type", "trade_status_sync");
    m.put("notify_id", "sim" + WechatPayGateway.random(12).toLowerCase());
    m.put("app_id", appId);
    m.put("charset", charset.name().toLowerCase());
    m.put("version", "1.0");
    m.put("trade_no", p.txnId());
    m.put("out_trade_no", p.orderNo());
    m.put("trade_status", p.status() == null ? "TRADE_SUCCESS" : p.status());
    m.put("total_amount", Yuan.of(p.amountCents()));
    m.put("receipt_amount", Yuan.of(p.amountCents()));
    m.put("buyer_id", "2088000000000000");
    m.put("seller_id", "2088000000000001");
    m.put("subject", "ordergate 沙箱订单 " + p.orderNo());
    m.put("gmt_create", now);
    m.put("gmt_payment", now);
    return m;
  }

  /**
   * The notify of a refund made ({@code out_biz_no} = the refund's out_request_no, {@code refund_fee} = all
   * refunded on the trade, {@code gmt_refund}): {@code TRADE_CLOSED} once refunded in full, else
   * {@code TRADE_SUCCESS}.
   */
  public Delivery refundNotification(TradeBook.Refund r, long tradeCents, long refundedCents) {
    Map<String, String> m = params(new Payment(r.tradeRef, r.txnId, tradeCents, r.currency,
        refundedCents >= tradeCents ? "TRADE_CLOSED" : "TRADE_SUCCESS"));
    String at = TIME.format((r.settledAt == null ? Instant.now() : r.settledAt).atOffset(ZoneOffset.ofHours(8)));
    m.put("out_biz_no", r.refundId);
    m.put("refund_fee", Yuan.of(refundedCents));
    m.put("gmt_refund", at);
    if (refundedCents >= tradeCents) {
      m.put("gmt_close", at);
    }
    return notification(m);
  }

  @Override
  public Delivery notification(Payment p, long nowSeconds) {
    return notification(params(p));
  }

  /** Signs {@code params} (adding sign_type RSA2) and form-encodes them in this gateway's charset. */
  public Delivery notification(Map<String, String> params) {
    Map<String, String> m = new LinkedHashMap<>(params);
    m.put("sign_type", "RSA2");
    m.put("sign", AlipaySignature.sign(m, charset, alipayKey));
    return new Delivery(Map.of("Content-Type", "application/x-www-form-urlencoded; charset=" + charset.name().toLowerCase()),
        encode(m, charset).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  public static String encode(Map<String, String> params, Charset charset) {
    StringBuilder sb = new StringBuilder();
    params.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : "&").append(URLEncoder.encode(k, charset))
        .append('=').append(URLEncoder.encode(v, charset)));
    return sb.toString();
  }

  @Override
  public boolean accepted(int status, String body) {
    return "success".equals(body);
  }

  /** 4m,10m,10m,1h,2h,6h,15h (Alipay's documented schedule: 8 deliveries in about 25 hours). */
  @Override
  public List<Duration> retrySchedule() {
    return List.of(Duration.ofMinutes(4), Duration.ofMinutes(10), Duration.ofMinutes(10), Duration.ofHours(1),
        Duration.ofHours(2), Duration.ofHours(6), Duration.ofHours(15));
  }

  /** An open-API answer: {@code {"<key>":<node>,"sign":...}}, signed over the node's exact text (issue 10). */
  public String answer(String key, io.vertx.core.json.JsonObject node) {
    String text = node.encode();
    return "{\"" + key + "\":" + text + ",\"sign\":\""
        + dev.ordergate.channel.alipay.AlipayProtocol.sign(text, alipayKey) + "\"}";
  }
}
