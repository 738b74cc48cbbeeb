package dev.ordergate.sim;

import dev.ordergate.channel.alipay.Yuan;
import io.vertx.core.json.JsonObject;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * The simulated gateways' bills, drawn from the real trade state ({@link TradeBook}): the PAID trades of the
 * day (WeChat Pay and Alipay by payment time, China days; Stripe by the PaymentIntent's creation, UTC days,
 * as its list filters) and the day's refunds (succeeded, by when they succeeded). Unlike the real gateways (which publish a day's bill the next
 * morning), any day can be asked for, today included. Injections for tests ({@code POST /sim/bills/KIND/REF}):
 * a trade billed with another amount, a paid trade left off the bill, a refund at the gateway.
 */
public final class SimBills {

  static final ZoneId CHINA = ZoneOffset.ofHours(8);
  static final Charset GBK = Charset.forName("GBK");
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  /** A billed payment: the trade as the bill shows it. */
  record Paid(TradeBook.Trade trade, long amountCents, Instant at) {}

  /** A refund at the gateway. {@code outRefundNo}: the merchant's refund number (may be null). */
  record Refund(String kind, String ref, String txnId, String orderNo, String refundId, String outRefundNo,
                long amountCents, String currency, Instant at) {}

  private final TradeBook trades;
  private final Clock clock;
  private final Map<String, Long> amounts = new ConcurrentHashMap<>();
  private final Map<String, Boolean> omitted = new ConcurrentHashMap<>();
  private final List<Refund> refunds = new ArrayList<>();
  private final Map<String, byte[]> files = new ConcurrentHashMap<>();
  /** Trades that existed at the last {@link #clear}: left off every bill, so a test starts from an empty day. */
  private final java.util.Set<TradeBook.Trade> forgotten = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());

  SimBills(TradeBook trades, Clock clock) {
    this.trades = trades;
    this.clock = clock;
  }

  /**
   * An injection for the trade {@code ref} of {@code kind}: {@code {"amountCents": N}} bills it with another
   * amount, {@code {"omit": true}} leaves it off the bill, {@code {"refund": {"amountCents", "refundId",
   * "outRefundNo"}}} records a refund of it at the gateway. Null when there is no such trade.
   */
  public synchronized JsonObject inject(String kind, String ref, JsonObject spec) {
    TradeBook.Trade t = trades.get(kind, ref);
    if (t == null) {
      return null;
    }
    if (spec.getValue("amountCents") instanceof Number n) {
      amounts.put(kind + "/" + ref, n.longValue());
    }
    if (spec.getBoolean("omit", false)) {
      omitted.put(kind + "/" + ref, true);
    }
    if (spec.getValue("refund") instanceof JsonObject r) {
      refunds.add(new Refund(kind, ref, t.txnId, t.orderNo,
          r.getString("refundId", refundId(kind)), r.getString("outRefundNo"), r.getLong("amountCents", t.amountCents),
          t.currency, clock.instant()));
    }
    return new JsonObject().put("kind", kind).put("ref", ref).put("injected", spec);
  }

  /** Drops the injections and leaves every trade that exists now off the bills from now on. */
  public synchronized void clear() {
    for (String kind : List.of("wechatpay-v3", "alipay", "stripe")) {
      forgotten.addAll(trades.list(kind));
    }
    amounts.clear();
    omitted.clear();
    refunds.clear();
    files.clear();
  }

  /** The paid trades of kind billed in [from, to): by payment time, or for Stripe by creation. */
  synchronized List<Paid> payments(String kind, Instant from, Instant to) {
    List<Paid> out = new ArrayList<>();
    for (TradeBook.Trade t : trades.list(kind)) {
      Instant at = kind.equals("stripe") ? t.createdAt : t.paidAt;
      if (t.state != TradeBook.State.PAID || at == null || forgotten.contains(t) || at.isBefore(from) || !at.isBefore(to)
          || omitted.containsKey(kind + "/" + t.ref)) {
        continue;
      }
      out.add(new Paid(t, amounts.getOrDefault(kind + "/" + t.ref, t.amountCents), at));
    }
    out.sort(Comparator.comparing(Paid::at).thenComparing(p -> p.trade().ref));
    return out;
  }

  /** Stripe's list: every PaymentIntent created in [from, to), whatever its status (the paid ones as billed). */
  synchronized List<Paid> intents(Instant from, Instant to) {
    List<Paid> out = new ArrayList<>();
    for (TradeBook.Trade t : trades.list("stripe")) {
      if (t.createdAt == null || t.createdAt.isBefore(from) || !t.createdAt.isBefore(to) || forgotten.contains(t)
          || omitted.containsKey("stripe/" + t.ref)) {
        continue;
      }
      out.add(new Paid(t, amounts.getOrDefault("stripe/" + t.ref, t.amountCents), t.createdAt));
    }
    return out;
  }

  /**
   * The refunds of kind billed in [from, to): the gateway's own (TradeBook's SUCCEEDED refunds, by the time
   * they succeeded; the merchant's refund id is out_refund_no / out_request_no / the refund's metadata) and
   * the injected ones.
   */
  synchronized List<Refund> refunds(String kind, Instant from, Instant to) {
    List<Refund> out = new ArrayList<>();
    for (TradeBook.Refund r : trades.refunds(kind)) {
      TradeBook.Trade t = trades.get(kind, r.tradeRef);
      if (r.state == TradeBook.RefundState.SUCCEEDED && r.settledAt != null && !forgotten.contains(t)) {
        out.add(new Refund(kind, r.tradeRef, r.txnId, r.orderNo,
            r.gatewayRefundId == null ? r.refundId : r.gatewayRefundId, r.refundId, r.amountCents, r.currency, r.settledAt));
      }
    }
    out.addAll(refunds);
    return out.stream().filter(r -> r.kind().equals(kind) && !r.at().isBefore(from) && r.at().isBefore(to))
        .sorted(Comparator.comparing(Refund::at)).toList();
  }

  /** Keeps a bill file for its download URL; answers the URL's token. */
  String store(byte[] file) {
    String token = WechatPayGateway.random(12).toLowerCase();
    files.put(token, file);
    return token;
  }

  byte[] file(String token) {
    return token == null ? null : files.get(token);
  }

  static Instant start(LocalDate day, ZoneId zone) {
    return day.atStartOfDay(zone).toInstant();
  }

  // ---- WeChat Pay: the ALL trade bill ------------------------------------------------------------

  static final String WECHAT_HEADER = "交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,"
      + "交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,"
      + "商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注";
  static final String WECHAT_SUMMARY = "总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额";

  /** The day's ALL bill as WeChat Pay serves it (UTF-8), or null when the day had no trade (NO_STATEMENT_EXIST). */
  byte[] wechatTradeBill(LocalDate day, String mchId, String appId) {
    Instant from = start(day, CHINA);
    Instant to = start(day.plusDays(1), CHINA);
    List<Paid> paid = payments("wechatpay-v3", from, to);
    List<Refund> back = refunds("wechatpay-v3", from, to);
    if (paid.isEmpty() && back.isEmpty()) {
      return null;
    }
    StringBuilder sb = new StringBuilder(WECHAT_HEADER).append("\r\n");
    long settled = 0;
    long refunded = 0;
    long fees = 0;
    for (Paid p : paid) {
      long fee = feeMilli(p.amountCents());
      fees += fee;
      settled += p.amountCents();
      row(sb, TIME.format(p.at().atZone(CHINA)), appId, mchId, "0", "", p.trade().txnId, p.trade().orderNo,
          "oSandboxPayer0000000000000000", "NATIVE", "SUCCESS", "OTHERS", p.trade().currency, Yuan.of(p.amountCents()),
          "0.00", "0", "0", "0.00", "0.00", "", "", "ordergate 沙箱订单 " + p.trade().orderNo, "", milli(fee), "0.60%",
          Yuan.of(p.amountCents()), "0.00", "");
    }
    for (Refund r : back) {
      refunded += r.amountCents();
      row(sb, TIME.format(r.at().atZone(CHINA)), appId, mchId, "0", "", r.txnId(), r.orderNo(),
          "oSandboxPayer0000000000000000", "NATIVE", "REFUND", "OTHERS", r.currency(), "0.00", "0.00", r.refundId(),
          r.outRefundNo() == null ? "" : r.outRefundNo(), Yuan.of(r.amountCents()), "0.00", "ORIGINAL", "SUCCESS",
          "ordergate 沙箱订单 " + r.orderNo(), "", "0.00000", "0.60%", "0.00", Yuan.of(r.amountCents()), "");
    }
    sb.append(WECHAT_SUMMARY).append("\r\n");
    row(sb, Integer.toString(paid.size() + back.size()), Yuan.of(settled), Yuan.of(refunded), "0.00", milli(fees),
        Yuan.of(settled), Yuan.of(refunded));
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** A data line: every field prefixed by a backtick (WeChat Pay's guard against spreadsheet number formats). */
  private static void row(StringBuilder sb, String... fields) {
    for (int i = 0; i < fields.length; i++) {
      sb.append(i == 0 ? "" : ",").append('`').append(fields[i]);
    }
    sb.append("\r\n");
  }

  /** The 0.6% fee in thousandths of a fen (the bill shows five decimals of yuan). */
  private static long feeMilli(long cents) {
    return Math.round(cents * 6.0);
  }

  private static String milli(long thousandthsOfFen) {
    return String.format("%d.%05d", thousandthsOfFen / 100_000, thousandthsOfFen % 100_000);
  }

  // ---- Alipay: the trade bill zip ----------------------------------------------------------------

  static final String ALIPAY_HEADER = "支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,"
      + "对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,"
      + "商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注";

  /** The day's trade bill as Alipay serves it: a zip of the detail and the summary CSV, in GBK. */
  byte[] alipayTradeBill(LocalDate day, String pid) {
    Instant from = start(day, CHINA);
    Instant to = start(day.plusDays(1), CHINA);
    List<Paid> paid = payments("alipay", from, to);
    List<Refund> back = refunds("alipay", from, to);
    DateTimeFormatter cn = DateTimeFormatter.ofPattern("yyyy年MM月dd日 HH:mm:ss");
    StringBuilder d = new StringBuilder("#支付宝业务明细查询\r\n#账号：[" + pid + "0156]\r\n")
        .append("#起始日期：[").append(cn.format(from.atZone(CHINA))).append("]   终止日期：[")
        .append(cn.format(to.atZone(CHINA))).append("]\r\n")
        .append("#-----------------------------------------业务明细列表----------------------------------------\r\n")
        .append(ALIPAY_HEADER).append("\r\n");
    long got = 0;
    long back1 = 0;
    for (Paid p : paid) {
      got += p.amountCents();
      String yuan = Yuan.of(p.amountCents());
      alipayRow(d, p.trade().txnId, p.trade().orderNo, "交易", "ordergate 沙箱订单 " + p.trade().orderNo,
          TIME.format(p.trade().createdAt.atZone(CHINA)), TIME.format(p.at().atZone(CHINA)), "", "", "", "",
          "buyer***@sandbox.com", yuan, yuan, "0.00", "0.00", "0.00", "0.00", "0.00", "", "0.00", "0.00", "",
          "-" + Yuan.of(Math.round(p.amountCents() * 0.006)), "0.00", "");
    }
    for (Refund r : back) {
      back1 += r.amountCents();
      String yuan = "-" + Yuan.of(r.amountCents());
      alipayRow(d, r.txnId(), r.orderNo(), "退款", "ordergate 沙箱订单 " + r.orderNo(), TIME.format(r.at().atZone(CHINA)),
          TIME.format(r.at().atZone(CHINA)), "", "", "", "", "buyer***@sandbox.com", yuan, yuan, "0.00", "0.00", "0.00",
          "0.00", "0.00", "", "0.00", "0.00", r.outRefundNo() == null ? r.refundId() : r.outRefundNo(), "0.00", "0.00", "");
    }
    d.append("#-----------------------------------------业务明细列表结束------------------------------------\r\n")
        .append("#交易合计：").append(paid.size()).append("笔，商家实收共").append(Yuan.of(got)).append("元，商家优惠共0.00元\r\n")
        .append("#退款合计：").append(back.size()).append("笔，商家实收退款共").append(Yuan.of(back1)).append("元，商家优惠退款共0.00元\r\n")
        .append("#导出时间：[").append(cn.format(clock.instant().atZone(CHINA))).append("]\r\n");
    String s = "#支付宝业务汇总查询\r\n#账号：[" + pid + "0156]\r\n门店编号,门店名称,交易订单总笔数,退款订单总笔数,订单金额（元）,商家实收（元）\r\n"
        + "合计,," + paid.size() + "," + back.size() + "," + Yuan.of(got) + "," + Yuan.of(got) + "\r\n";
    String base = pid + "_" + DateTimeFormatter.BASIC_ISO_DATE.format(day);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out, GBK)) {
      zip.putNextEntry(new ZipEntry(base + "_业务明细.csv"));
      zip.write(d.toString().getBytes(GBK));
      zip.closeEntry();
      zip.putNextEntry(new ZipEntry(base + "_业务明细(汇总).csv"));
      zip.write(s.getBytes(GBK));
      zip.closeEntry();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** Alipay pads its fields with a tab. */
  private static void alipayRow(StringBuilder sb, String... fields) {
    for (int i = 0; i < fields.length; i++) {
      sb.append(i == 0 ? "" : ",").append(fields[i]).append('\t');
    }
    sb.append("\r\n");
  }

  // ---- Stripe: lists ---------------------------------------------------------------------------------

  /** A page of objects, newest first, as Stripe's list endpoints answer it. */
  static JsonObject page(String url, List<JsonObject> newestFirst, String startingAfter, int limit) {
    int from = 0;
    if (startingAfter != null) {
      for (int i = 0; i < newestFirst.size(); i++) {
        if (startingAfter.equals(newestFirst.get(i).getString("id"))) {
          from = i + 1;
        }
      }
    }
    int to = Math.min(newestFirst.size(), from + limit);
    return new JsonObject().put("object", "list").put("url", url).put("has_more", to < newestFirst.size())
        .put("data", new io.vertx.core.json.JsonArray(new ArrayList<>(newestFirst.subList(from, to))));
  }

  static String refundId(String kind) {
    return switch (kind) {
      case "wechatpay-v3" -> "50300" + WechatPayGateway.random(10);
      case "stripe" -> "re_sim" + WechatPayGateway.random(8).toLowerCase();
      default -> "sim-refund-" + WechatPayGateway.random(6).toLowerCase();
    };
  }

  static Map<String, String> query(String rawQuery) {
    return new LinkedHashMap<>(AlipayApi.form(rawQuery));
  }
}
