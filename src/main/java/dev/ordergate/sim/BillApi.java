package dev.ordergate.sim;

import dev.ordergate.channel.alipay.AlipayProtocol;
import dev.ordergate.channel.wechatpay.WechatPayBill;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The gateways' bill endpoints (issue 10), drawn from {@link SimBills}, each behind its gateway's own
 * authentication and fault injection (op {@code bill}):
 * <ul>
 *   <li>WeChat Pay: {@code GET /wechatpay/v3/bill/tradebill?bill_date&bill_type=ALL} (signed request, signed
 *       answer {@code hash_type, hash_value, download_url}; {@code 400 NO_STATEMENT_EXIST} for a day without
 *       trades) and {@code GET /wechatpay/v3/billdownload/file?token} (signed request; the file, unsigned);</li>
 *   <li>Alipay: {@code alipay.data.dataservice.bill.downloadurl.query} on {@code /alipay/gateway.do}
 *       ({@code bill_download_url}) and {@code GET /alipay/downloadBillFile.resource?token} (the zip);</li>
 *   <li>Stripe: {@code GET /stripe/v1/payment_intents} and {@code /stripe/v1/refunds} with {@code created[gte]},
 *       {@code created[lt]}, {@code limit} (1..100, default 10) and {@code starting_after}, newest first.</li>
 * </ul>
 */
final class BillApi {

  static final String ALIPAY_PID = "2088000000000001";
  static final String ALIPAY_METHOD = "alipay.data.dataservice.bill.downloadurl.query";

  private final SimBills bills;
  private final WechatPayApi wechatpay;
  private final String wechatAppId;
  private final AlipayApi alipay;
  private final StripeApi stripe;

  BillApi(SimBills bills, WechatPayApi wechatpay, String wechatAppId, AlipayApi alipay, StripeApi stripe) {
    this.bills = bills;
    this.wechatpay = wechatpay;
    this.wechatAppId = wechatAppId;
    this.alipay = alipay;
    this.stripe = stripe;
  }

  /** Mounted before the gateways' own routes (the Alipay bill method shares {@code /alipay/gateway.do}). */
  void mount(Router r) {
    if (wechatpay != null) {
      r.get("/wechatpay/v3/bill/tradebill").handler(ctx -> wechatpay.guarded(ctx, "bill", () -> tradeBill(ctx)));
      r.get("/wechatpay/v3/billdownload/file").handler(ctx -> wechatpay.guarded(ctx, "bill", () -> wechatFile(ctx)));
    }
    if (alipay != null) {
      r.post("/alipay/gateway.do").handler(ctx -> {
        // The gateway takes its parameters from the body and the query string alike (alipay-sdk-java sends the
        // common ones in the URL).
        Map<String, String> params = AlipayApi.form(ctx.body().asString(StandardCharsets.UTF_8.name()));
        ctx.queryParams().forEach(e -> params.putIfAbsent(e.getKey(), e.getValue()));
        if (!ALIPAY_METHOD.equals(params.get("method"))) {
          ctx.next();
          return;
        }
        alipay.guarded(ctx, "bill", () -> alipayUrl(ctx, params));
      });
      r.get("/alipay/downloadBillFile.resource").handler(ctx -> alipay.guarded(ctx, "bill", () -> {
        byte[] zip = bills.file(ctx.queryParams().get("token"));
        if (zip == null) {
          ctx.response().setStatusCode(404).end("file not found");
          return;
        }
        ctx.response().putHeader("Content-Type", "application/oct-stream")
            .putHeader("Content-Disposition", "attachment; filename=" + ALIPAY_PID + ".csv.zip").end(Buffer.buffer(zip));
      }));
    }
    if (stripe != null) {
      r.get("/stripe/v1/payment_intents").handler(ctx -> stripe.guarded(ctx, "bill", () -> stripeList(ctx, true)));
      r.get("/stripe/v1/refunds").handler(ctx -> stripe.guarded(ctx, "bill", () -> stripeList(ctx, false)));
    }
  }

  private static String base(RoutingContext ctx) {
    return ctx.request().scheme() + "://" + ctx.request().getHeader("Host");
  }

  // ---- WeChat Pay --------------------------------------------------------------------------------

  private void tradeBill(RoutingContext ctx) {
    if (!wechatpay.authorized(ctx)) {
      return;
    }
    LocalDate day;
    try {
      day = LocalDate.parse(String.valueOf(ctx.queryParams().get("bill_date")));
    } catch (DateTimeParseException e) {
      wechatpay.answer(ctx, 400, new JsonObject().put("code", "PARAM_ERROR").put("message", "bill_date must be YYYY-MM-DD"));
      return;
    }
    String type = ctx.queryParams().get("bill_type");
    if (type != null && !type.equals("ALL")) {
      wechatpay.answer(ctx, 400, new JsonObject().put("code", "PARAM_ERROR").put("message", "the simulator serves bill_type ALL"));
      return;
    }
    byte[] file = bills.wechatTradeBill(day, wechatpay.mchId, wechatAppId);
    if (file == null) {
      wechatpay.answer(ctx, 400, new JsonObject().put("code", "NO_STATEMENT_EXIST").put("message", "账单文件不存在"));
      return;
    }
    String token = bills.store(file);
    wechatpay.answer(ctx, 200, new JsonObject().put("hash_type", "SHA1").put("hash_value", WechatPayBill.sha1(file))
        .put("download_url", base(ctx) + "/wechatpay/v3/billdownload/file?token=" + token));
  }

  private void wechatFile(RoutingContext ctx) {
    if (!wechatpay.authorized(ctx)) {
      return;
    }
    byte[] file = bills.file(ctx.queryParams().get("token"));
    if (file == null) {
      wechatpay.answer(ctx, 400, new JsonObject().put("code", "INVALID_REQUEST").put("message", "token is invalid or expired"));
      return;
    }
    ctx.response().putHeader("Content-Type", "application/octet-stream").end(Buffer.buffer(file));
  }

  // ---- Alipay ------------------------------------------------------------------------------------

  private void alipayUrl(RoutingContext ctx, Map<String, String> params) {
    String key = AlipayProtocol.responseKey(ALIPAY_METHOD);
    if (!alipay.appId.equals(params.get("app_id")) || !"RSA2".equals(params.get("sign_type"))
        || !AlipayProtocol.verify(AlipayProtocol.requestContent(params), params.get("sign"), List.of(alipay.appKey))) {
      alipay.answer(ctx, key, AlipayApi.fail("40002", "Invalid Arguments", "isv.invalid-signature", "sign does not verify"));
      return;
    }
    JsonObject biz = new JsonObject(params.getOrDefault("biz_content", "{}"));
    LocalDate day;
    try {
      day = LocalDate.parse(String.valueOf(biz.getValue("bill_date")));
    } catch (DateTimeParseException e) {
      alipay.answer(ctx, key, AlipayApi.fail("40004", "Business Failed", "isv.invalid-arguments",
          "the simulator serves daily bills: bill_date yyyy-MM-dd"));
      return;
    }
    if (!"trade".equals(biz.getValue("bill_type"))) {
      alipay.answer(ctx, key, AlipayApi.fail("40004", "Business Failed", "isv.invalid-arguments",
          "the simulator serves bill_type trade"));
      return;
    }
    String token = bills.store(bills.alipayTradeBill(day, ALIPAY_PID));
    alipay.answer(ctx, key, AlipayApi.ok().put("bill_download_url", base(ctx) + "/alipay/downloadBillFile.resource?bizType=trade"
        + "&userId=" + ALIPAY_PID + "&fileType=csv.zip&bizDates=" + DateTimeFormatter.BASIC_ISO_DATE.format(day)
        + "&token=" + token));
  }

  // ---- Stripe ------------------------------------------------------------------------------------

  private void stripeList(RoutingContext ctx, boolean intents) {
    if (!stripe.authorized(ctx)) {
      return;
    }
    Map<String, String> q = SimBills.query(URI.create(ctx.request().uri()).getRawQuery());
    long gte;
    long lt;
    int limit;
    try {
      gte = Long.parseLong(q.getOrDefault("created[gte]", "0"));
      lt = Long.parseLong(q.getOrDefault("created[lt]", Long.toString(Long.MAX_VALUE / 1000)));
      limit = Integer.parseInt(q.getOrDefault("limit", "10"));
    } catch (NumberFormatException e) {
      StripeApi.error(ctx, 400, "invalid_request_error", "parameter_invalid_integer", "created and limit must be integers");
      return;
    }
    if (limit < 1 || limit > 100) {
      StripeApi.error(ctx, 400, "invalid_request_error", "parameter_invalid_integer", "limit must be between 1 and 100");
      return;
    }
    Instant from = Instant.ofEpochSecond(gte);
    Instant to = Instant.ofEpochSecond(lt);
    List<JsonObject> objects = new ArrayList<>();
    if (intents) {
      for (SimBills.Paid p : bills.intents(from, to)) {
        JsonObject pi = StripeApi.intent(p.trade()).put("created", p.at().getEpochSecond());
        if (p.trade().state == TradeBook.State.PAID) {
          pi.put("amount_received", p.amountCents()).put("latest_charge", "ch_" + p.trade().ref.substring(3));
        }
        objects.add(pi);
      }
    } else {
      for (SimBills.Refund r : bills.refunds("stripe", from, to)) {
        objects.add(new JsonObject().put("id", r.refundId()).put("object", "refund").put("amount", r.amountCents())
            .put("currency", r.currency().toLowerCase(Locale.ROOT)).put("payment_intent", r.txnId())
            .put("charge", "ch_" + r.txnId().substring(3)).put("status", "succeeded").put("created", r.at().getEpochSecond())
            .put("metadata", r.outRefundNo() == null ? new JsonObject() : new JsonObject().put("refundId", r.outRefundNo())));
      }
    }
    objects.sort(Comparator.<JsonObject>comparingLong(o -> o.getLong("created")).reversed()
        .thenComparing(o -> o.getString("id")));
    StripeApi.send(ctx, 200, SimBills.page(intents ? "/v1/payment_intents" : "/v1/refunds", objects,
        q.get("starting_after"), limit));
  }
}
