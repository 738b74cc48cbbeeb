package dev.ordergate.channel.alipay;

import dev.ordergate.channel.GatewayBill;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.Charset;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

/**
 * Alipay's bill download: {@code alipay.data.dataservice.bill.downloadurl.query} ({@code bill_type}
 * trade, {@code bill_date} YYYY-MM-DD; signed, its answer's {@code sign} verified) answers
 * {@code bill_download_url}, a short-lived URL of a zip of GBK CSV files; the detail file
 * ({@code ..._业务明细.csv}) has comment lines starting with {@code #}, a header line and one line per
 * trade ({@code 业务类型} 交易) or refund (退款), amounts in yuan (a refund's negative), fields padded with
 * blanks. {@code isp.bill_not_exist} is an empty bill. Days are cut at midnight China time.
 */
public final class AlipayBill implements GatewayBill {

  public static final String METHOD = "alipay.data.dataservice.bill.downloadurl.query";
  static final Charset GBK = Charset.forName("GBK");
  private static final Pattern TOTAL = Pattern.compile("#(交易|退款)合计：(\\d+)笔");

  private final ChannelConfig config;
  private final AlipayClient signer;
  private final Outbound outbound;

  public AlipayBill(ChannelConfig config, Outbound outbound, Clock clock) {
    this.config = config;
    this.signer = new AlipayClient(config, outbound, clock);
    this.outbound = outbound;
  }

  @Override
  public ZoneId zone() {
    return ZoneOffset.ofHours(8);
  }

  @Override
  public Future<List<BillLine>> fetch(LocalDate day) {
    JsonObject biz = new JsonObject().put("bill_type", "trade").put("bill_date", day.toString());
    return outbound.call(config.name(), "bill", () -> signer.signedCall(METHOD, biz).compose(node -> {
      if ("isp.bill_not_exist".equals(node.getValue("sub_code"))) {
        return Future.succeededFuture(List.<BillLine>of());
      }
      if (!"10000".equals(node.getValue("code")) || !(node.getValue("bill_download_url") instanceof String url)) {
        Object code = node.getValue("sub_code") != null ? node.getValue("sub_code") : node.getValue("code");
        Object msg = node.getValue("sub_msg") != null ? node.getValue("sub_msg") : node.getValue("msg");
        throw GatewayFailure.answered(config.name(), String.valueOf(code), msg == null ? null : String.valueOf(msg));
      }
      return outbound.request(HttpMethod.GET, url).send().map(resp -> {
        Outbound.rejectServerError(config.name(), resp);
        if (resp.statusCode() != 200 || resp.body() == null) {
          throw GatewayFailure.answered(config.name(), "HTTP_" + resp.statusCode(), "the bill download was refused");
        }
        return parse(config.name(), detailFile(config.name(), resp.body().getBytes()), config.currency());
      });
    }));
  }

  /** The detail CSV of the bill zip (the entry named {@code ..._业务明细.csv}, not the summary), decoded from GBK. */
  public static String detailFile(String channel, byte[] zip) {
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(zip), GBK)) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        if (e.getName().endsWith("_业务明细.csv")) {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          in.transferTo(out);
          return out.toString(GBK);
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      throw GatewayBill.malformed(channel, "the bill is not a readable zip: " + e.getMessage());
    }
    throw GatewayBill.malformed(channel, "the bill zip has no _业务明细.csv");
  }

  /**
   * The lines of a detail file. Columns by their header names: {@code 支付宝交易号}, {@code 商户订单号},
   * {@code 业务类型}, {@code 订单金额（元）}, {@code 退款批次号/请求号}; the {@code #交易合计} and
   * {@code #退款合计} counts, when present, must match.
   */
  public static List<BillLine> parse(String channel, String csv, String currency) {
    List<String> header = null;
    List<BillLine> out = new ArrayList<>();
    long[] declared = {-1, -1};
    long[] seen = {0, 0};
    int n = 0;
    for (String raw : csv.replace("\r", "").split("\n")) {
      n++;
      String line = raw.replace("\uFEFF", "");
      if (line.isBlank()) {
        continue;
      }
      if (line.startsWith("#")) {
        Matcher m = TOTAL.matcher(line);
        if (m.find()) {
          declared[m.group(1).equals("交易") ? 0 : 1] = Long.parseLong(m.group(2));
        }
        continue;
      }
      String[] f = Arrays.stream(line.split(",", -1)).map(String::strip).toArray(String[]::new);
      if (header == null) {
        header = List.of(f);
        continue;
      }
      if (f.length < header.size()) {
        throw GatewayBill.malformed(channel, "bill line " + n + " has " + f.length + " fields, the header " + header.size());
      }
      String type = f[GatewayBill.column(channel, header, "业务类型")];
      String yuan = f[GatewayBill.column(channel, header, "订单金额（元）")];
      long cents;
      try {
        cents = Yuan.toCents(yuan.startsWith("-") ? yuan.substring(1) : yuan, "订单金额（元）");
      } catch (RuntimeException e) {
        throw GatewayBill.malformed(channel, "bill line " + n + ": " + e.getMessage());
      }
      String txn = f[GatewayBill.column(channel, header, "支付宝交易号")];
      String order = f[GatewayBill.column(channel, header, "商户订单号")];
      if (type.equals("交易")) {
        seen[0]++;
        out.add(BillLine.payment(txn, order, cents, currency, "TRADE_SUCCESS"));
      } else if (type.equals("退款")) {
        seen[1]++;
        int req = header.indexOf("退款批次号/请求号");
        String outRequestNo = req < 0 || f[req].isEmpty() ? null : f[req];
        out.add(new BillLine(txn, order, cents, currency, Kind.REFUND, outRequestNo, outRequestNo, "REFUND"));
      }
    }
    for (int k = 0; k < 2; k++) {
      if (declared[k] >= 0 && declared[k] != seen[k]) {
        throw GatewayBill.malformed(channel, "the bill's " + (k == 0 ? "交易" : "退款") + "合计 says " + declared[k]
            + ", it lists " + seen[k]);
      }
    }
    return List.copyOf(out);
  }
}
