package dev.ordergate.sim;

import dev.ordergate.channel.Pem;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;

/**
 * The simulated gateways' APIs (issue 10: open, query, close with real per-trade state and fault
 * injection), configured from the same {@code gateway-sim.json}: the merchant-side public keys and the
 * Stripe secret key they check requests with. DEVELOPMENT ONLY keys.
 */
public final class SimApis {

  private final TradeBook trades;
  private final Faults faults;
  private final WechatPayApi wechatpay;
  private final AlipayApi alipay;
  private final StripeApi stripe;
  private final SimBills bills;
  private final BillApi billApi;
  private final RefundNotifier notifier;

  private SimApis(TradeBook trades, Faults faults, WechatPayApi wechatpay, AlipayApi alipay, StripeApi stripe,
                  SimBills bills, String wechatAppId, RefundNotifier notifier) {
    this.trades = trades;
    this.faults = faults;
    this.wechatpay = wechatpay;
    this.alipay = alipay;
    this.stripe = stripe;
    this.bills = bills;
    this.billApi = new BillApi(bills, wechatpay, wechatAppId, alipay, stripe);
    this.notifier = notifier;
    for (SimApi api : new SimApi[] {wechatpay, alipay, stripe}) {
      if (api != null) {
        api.notifier = notifier;
      }
    }
  }

  public static SimApis load(Vertx vertx, String path, SimConfig sim, Clock clock) throws IOException {
    Path file = Path.of(path).toAbsolutePath();
    JsonObject json = new JsonObject(Files.readString(file, StandardCharsets.UTF_8));
    Path dir = file.getParent();
    TradeBook trades = new TradeBook(clock);
    Faults faults = new Faults();
    JsonObject w = json.getJsonObject("wechatpay-v3", new JsonObject());
    JsonObject a = json.getJsonObject("alipay", new JsonObject());
    JsonObject s = json.getJsonObject("stripe", new JsonObject());
    WechatPayApi wechatpay = w.getString("merchantPublicKeyPem") == null ? null
        : new WechatPayApi(vertx, trades, faults, (WechatPayGateway) sim.target("wechatpay-v3").gateway(),
            w.getString("mchId"), w.getString("merchantSerialNo"),
            Pem.publicKey(dir.resolve(w.getString("merchantPublicKeyPem")).toString(), "wechatpay-v3.merchantPublicKeyPem"));
    AlipayApi alipay = a.getString("appPublicKeyPem") == null ? null
        : new AlipayApi(vertx, trades, faults, (AlipayGateway) sim.target("alipay").gateway(), a.getString("appId"),
            Pem.publicKey(dir.resolve(a.getString("appPublicKeyPem")).toString(), "alipay.appPublicKeyPem"));
    StripeApi stripe = s.getString("secretKey") == null ? null : new StripeApi(vertx, trades, faults, s.getString("secretKey"),
        (StripeGateway) sim.target("stripe").gateway());
    return new SimApis(trades, faults, wechatpay, alipay, stripe, new SimBills(trades, clock), w.getString("appId"),
        new RefundNotifier(sim));
  }

  public TradeBook trades() {
    return trades;
  }

  public Faults faults() {
    return faults;
  }

  /** The bills' state and injections (issue 10, reconciliation). */
  public SimBills bills() {
    return bills;
  }

  /** Where refund notifications go (WeChat Pay REFUND.*, Stripe refund.updated / charge.refunded). */
  public RefundNotifier notifier() {
    return notifier;
  }

  /**
   * Settles a pending refund ({@code SUCCEEDED} or {@code FAILED}) and, with {@code notify}, sends the
   * gateway's notification of it. Null: no such refund; a refund settled before is answered unchanged.
   */
  public TradeBook.Refund settle(String kind, String refundId, TradeBook.RefundState to, boolean notify) {
    TradeBook.Refund before = trades.refundOf(kind, refundId);
    boolean wasPending = before != null && before.state == TradeBook.RefundState.PENDING;
    TradeBook.Refund r = trades.settle(kind, refundId, to);
    SimApi api = switch (kind) {
      case "wechatpay-v3" -> wechatpay;
      case "alipay" -> alipay;
      case "stripe" -> stripe;
      default -> null;
    };
    if (r != null && wasPending && notify && api != null) {
      api.settled(r);
    }
    return r;
  }

  /** Mounts {@code /wechatpay/v3/...}, {@code /alipay/gateway.do} and {@code /stripe/v1/...}. */
  public void mount(Router router) {
    billApi.mount(router);
    if (wechatpay != null) {
      wechatpay.mount(router);
    }
    if (alipay != null) {
      alipay.mount(router);
    }
    if (stripe != null) {
      stripe.mount(router);
    }
  }
}
