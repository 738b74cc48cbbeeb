package dev.ordergate.channel.wechatpay;

import dev.ordergate.channel.GatewayBill;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.channel.alipay.Yuan;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * WeChat Pay API v3's trade bill: {@code GET /v3/bill/tradebill?bill_date=YYYY-MM-DD&bill_type=ALL}
 * (signed like every v3 call, its answer's Wechatpay-Signature verified) answers {@code download_url},
 * {@code hash_type} (SHA1) and {@code hash_value}; the file is fetched with a signed GET of that URL (the
 * file itself carries no signature: its SHA1 must equal the signed answer's {@code hash_value}). The file
 * is CSV: a header line, one line per payment or refund with every field prefixed by a backtick, then a
 * summary header ({@code 总交易单数,...}) and its line. Amounts are yuan. {@code 400 NO_STATEMENT_EXIST}
 * (no trade that day) is an empty bill. Days are cut at midnight China time.
 */
public final class WechatPayBill implements GatewayBill {

  public static final ZoneId CHINA = ZoneOffset.ofHours(8);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ChannelConfig config;
  private final WechatPaySettings settings;
  private final WechatPayClient signer;
  private final Outbound outbound;
  private final Clock clock;

  public WechatPayBill(ChannelConfig config, Outbound outbound, Clock clock) {
    this.config = config;
    this.settings = (WechatPaySettings) config.settings();
    this.signer = new WechatPayClient(config, outbound, clock);
    this.outbound = outbound;
    this.clock = clock;
  }

  @Override
  public ZoneId zone() {
    return CHINA;
  }

  @Override
  public Future<List<BillLine>> fetch(LocalDate day) {
    String url = settings.baseUrl() + "/v3/bill/tradebill?bill_date=" + day + "&bill_type=ALL";
    return outbound.call(config.name(), "bill", () -> get(url).compose(resp -> {
      JsonObject answer = signer.verifiedJson(resp);
      if (resp.statusCode() == 400 && "NO_STATEMENT_EXIST".equals(answer.getValue("code"))) {
        return Future.succeededFuture(List.<BillLine>of());
      }
      if (resp.statusCode() != 200 || !(answer.getValue("download_url") instanceof String download)
          || !(answer.getValue("hash_value") instanceof String hash)) {
        String code = answer.getValue("code") instanceof String c ? c : "HTTP_" + resp.statusCode();
        throw GatewayFailure.answered(config.name(), code, answer.getValue("message") instanceof String m ? m : null);
      }
      if (!"SHA1".equals(answer.getValue("hash_type", "SHA1"))) {
        throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "unsupported hash_type " + answer.getValue("hash_type"));
      }
      return get(download).map(file -> {
        Outbound.rejectServerError(config.name(), file);
        byte[] bytes = file.body() == null ? new byte[0] : file.body().getBytes();
        if (file.statusCode() != 200) {
          throw GatewayFailure.answered(config.name(), "HTTP_" + file.statusCode(), "the bill download was refused");
        }
        if (!sha1(bytes).equalsIgnoreCase(hash)) {
          throw GatewayFailure.unreachable(config.name(), "BILL_HASH_MISMATCH",
              "the downloaded bill's SHA1 differs from the signed hash_value");
        }
        return parse(config.name(), new String(bytes, StandardCharsets.UTF_8));
      });
    }));
  }

  private Future<HttpResponse<Buffer>> get(String url) {
    URI uri = URI.create(url);
    String signedPath = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String ts = Long.toString(clock.instant().getEpochSecond());
    byte[] n = new byte[16];
    RANDOM.nextBytes(n);
    String nonce = HexFormat.of().formatHex(n).toUpperCase();
    return outbound.request(HttpMethod.GET, url).putHeader("Accept", "application/json")
        .putHeader("Authorization", signer.authorization("GET", signedPath, ts, nonce, new byte[0])).send();
  }

  /** Lower-case hex SHA-1, as {@code hash_value} carries it. */
  public static String sha1(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The lines of an ALL trade bill. Columns are found by their header names (the order is not promised);
   * a payment line ({@code 交易状态} SUCCESS, REVOKED counts as not paid) has {@code 订单金额} as the amount the
   * notification's {@code amount.total} carries; a refund line ({@code REFUND}) has {@code 申请退款金额} (else
   * {@code 退款金额}), {@code 微信退款单号} and {@code 商户退款单号}. The summary's count must match.
   */
  public static List<BillLine> parse(String channel, String csv) {
    String[] lines = csv.replace("\r", "").split("\n");
    if (lines.length == 0 || lines[0].isBlank()) {
      return List.of();
    }
    List<String> header = List.of(lines[0].replace("\uFEFF", "").split(",", -1));
    int txn = GatewayBill.column(channel, header, "微信订单号");
    int order = GatewayBill.column(channel, header, "商户订单号");
    int state = GatewayBill.column(channel, header, "交易状态");
    int currency = GatewayBill.column(channel, header, "货币种类");
    int total = GatewayBill.column(channel, header, "订单金额");
    int refundId = header.indexOf("微信退款单号");
    int outRefund = header.indexOf("商户退款单号");
    int refundAmount = header.contains("申请退款金额") ? header.indexOf("申请退款金额") : header.indexOf("退款金额");
    List<BillLine> out = new ArrayList<>();
    int i = 1;
    for (; i < lines.length; i++) {
      String line = lines[i];
      if (line.isBlank()) {
        continue;
      }
      if (line.startsWith("总交易单数")) {
        break;
      }
      String[] f = fields(line);
      if (f.length < header.size()) {
        throw GatewayBill.malformed(channel, "bill line " + (i + 1) + " has " + f.length + " fields, the header " + header.size());
      }
      String status = f[state];
      String cur = f[currency].isEmpty() ? "CNY" : f[currency];
      try {
        if (status.equals("REFUND")) {
          if (refundAmount < 0) {
            throw GatewayBill.malformed(channel, "a REFUND line but no refund amount column");
          }
          out.add(new BillLine(f[txn], f[order], cents(f[refundAmount]), cur, Kind.REFUND,
              refundId < 0 || f[refundId].isEmpty() ? null : f[refundId],
              outRefund < 0 || f[outRefund].isEmpty() ? null : f[outRefund], status));
        } else if (status.equals("SUCCESS")) {
          out.add(BillLine.payment(f[txn], f[order], cents(f[total]), cur, status));
        }
      } catch (RuntimeException e) {
        if (e instanceof GatewayFailure g) {
          throw g;
        }
        throw GatewayBill.malformed(channel, "bill line " + (i + 1) + ": " + e.getMessage());
      }
    }
    if (i + 1 < lines.length) {
      String[] summary = fields(lines[i + 1]);
      if (summary.length > 0 && !summary[0].isEmpty()) {
        long count;
        try {
          count = Long.parseLong(summary[0]);
        } catch (NumberFormatException e) {
          throw GatewayBill.malformed(channel, "the summary's 总交易单数 is not a number");
        }
        long detail = i - 1 - countBlank(lines, 1, i);
        if (count != detail) {
          throw GatewayBill.malformed(channel, "the summary counts " + count + " lines, the bill has " + detail);
        }
      }
    }
    return List.copyOf(out);
  }

  private static long countBlank(String[] lines, int from, int to) {
    long n = 0;
    for (int k = from; k < to; k++) {
      if (lines[k].isBlank()) {
        n++;
      }
    }
    return n;
  }

  /** A data line's fields without their leading backtick. */
  private static String[] fields(String line) {
    String[] f = line.split(",", -1);
    for (int k = 0; k < f.length; k++) {
      String v = f[k].trim();
      f[k] = v.startsWith("`") ? v.substring(1) : v;
    }
    return f;
  }

  private static long cents(String yuan) {
    return Yuan.toCents(yuan.startsWith("-") ? yuan.substring(1) : yuan, "amount");
  }
}
