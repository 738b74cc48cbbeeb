package dev.ordergate.payment;

import com.alipay.api.DefaultAlipayClient;
import com.alipay.api.request.AlipayDataDataserviceBillDownloadurlQueryRequest;
import com.alipay.api.response.AlipayDataDataserviceBillDownloadurlQueryResponse;
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.FieldNamingPolicy;
import com.stripe.model.PaymentIntent;
import com.stripe.param.PaymentIntentListParams;
import com.wechat.pay.java.service.billdownload.DigestBillEntity;
import com.wechat.pay.java.service.billdownload.model.HashType;
import com.wechat.pay.java.service.billdownload.model.QueryBillEntity;
import dev.ordergate.channel.GatewayBill.BillLine;
import dev.ordergate.channel.GatewayBill.Kind;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.Outbound;
import dev.ordergate.channel.alipay.AlipayBill;
import dev.ordergate.channel.alipay.AlipayClient;
import dev.ordergate.channel.stripe.StripeBill;
import dev.ordergate.channel.stripe.StripeClient;
import dev.ordergate.channel.wechatpay.WechatPayBill;
import dev.ordergate.channel.wechatpay.WechatPayClient;
import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.support.Sandbox;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The simulator's bills checked by the vendors' official SDKs (test scope only), and our bill sources
 * reading the same bills: wechatpay-java's {@code QueryBillEntity} reads the tradebill answer and its
 * {@code DigestBillEntity} verifies the downloaded file's SHA1; alipay-sdk-java's {@code DefaultAlipayClient}
 * runs {@code alipay.data.dataservice.bill.downloadurl.query} against the simulator (our request sign, its
 * answer's sign); stripe-java lists the day's PaymentIntents page by page (limit 2).
 */
class BillSdkInteropTest {

  private static GatewaySim sim;
  private static Map<String, ChannelConfig> channels;
  private static Outbound outbound;

  @BeforeAll
  static void load() {
    sim = new GatewaySim();
    channels = AppConfig.from(sim.serviceConfig(new JsonObject())).channels();
    outbound = new Outbound(WebClient.create(sim.vertx), 5000, new SimpleMeterRegistry());
  }

  @AfterAll
  static void stop() {
    sim.close();
  }

  @BeforeEach
  void fresh() {
    sim.http.deleteAbs(sim.url() + "/sim/bills").send().await();
  }

  /** Opens {@code n} trades through our client and pays the first {@code paid}; answers the paid trades' txn ids. */
  private static Set<String> trades(GatewayClient client, String kind, int n, int paid) {
    Set<String> txns = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      String no = "SDK" + UUID.randomUUID().toString().substring(0, 8);
      GatewayClient.Opened opened = client.open(new GatewayClient.OpenRequest(no, 100L + i, "CNY",
          Instant.now().plus(30, ChronoUnit.MINUTES), "order " + no)).await();
      if (i < paid) {
        JsonObject t = sim.http.postAbs(sim.url() + "/sim/trades/" + kind + "/" + opened.reference() + "/pay")
            .sendBuffer(Buffer.buffer(new JsonObject().put("notify", false).encode())).await().bodyAsJsonObject();
        assertEquals("PAID", t.getString("state"), t.encode());
        txns.add(t.getString("txnId"));
      }
    }
    return txns;
  }

  private static Set<String> payments(List<BillLine> lines) {
    return lines.stream().filter(l -> l.kind() == Kind.PAYMENT).map(BillLine::txnId).collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void wechatPaySdkReadsTheTradeBillAnswerAndVerifiesTheFilesHash() throws Exception {
    ChannelConfig config = channels.get(Sandbox.WECHATPAY);
    WechatPayClient client = new WechatPayClient(config, outbound, Clock.systemUTC());
    Set<String> paid = trades(client, "wechatpay-v3", 3, 2);
    LocalDate day = LocalDate.now(ZoneOffset.ofHours(8));

    JsonObject answer = signedGet(client, sim.url() + "/wechatpay/v3/bill/tradebill?bill_date=" + day + "&bill_type=ALL")
        .bodyAsJsonObject();
    Gson gson = new GsonBuilder().setFieldNamingPolicy(FieldNamingPolicy.LOWER_CASE_WITH_UNDERSCORES).create();
    QueryBillEntity entity = gson.fromJson(answer.encode(), QueryBillEntity.class);
    assertEquals(HashType.SHA1, entity.getHashType());
    byte[] file = signedGet(client, entity.getDownloadUrl()).body().getBytes();
    DigestBillEntity digest = new DigestBillEntity(new ByteArrayInputStream(file), entity.getHashValue(), entity.getHashType());
    digest.getInputStream().readAllBytes();
    assertTrue(digest.verifyHash(), "wechatpay-java verifies the bill's SHA1 against hash_value");
    DigestBillEntity tampered = new DigestBillEntity(new ByteArrayInputStream(
        new String(file, StandardCharsets.UTF_8).replace("`SUCCESS", "`REFUND").getBytes(StandardCharsets.UTF_8)),
        entity.getHashValue(), entity.getHashType());
    tampered.getInputStream().readAllBytes();
    assertFalse(tampered.verifyHash(), "and refuses a changed file");

    assertEquals(paid, payments(WechatPayBill.parse(config.name(), new String(file, StandardCharsets.UTF_8))));
    List<BillLine> fetched = new WechatPayBill(config, outbound, Clock.systemUTC()).fetch(day).await();
    assertEquals(paid, payments(fetched));
    assertTrue(fetched.stream().allMatch(l -> l.currency().equals("CNY") && l.amountCents() >= 100));
  }

  private static io.vertx.ext.web.client.HttpResponse<Buffer> signedGet(WechatPayClient client, String url) {
    URI uri = URI.create(url);
    String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String ts = Long.toString(Instant.now().getEpochSecond());
    var resp = sim.http.getAbs(url).putHeader("Authorization", client.authorization("GET", path, ts, "N" + ts, new byte[0]))
        .send().await();
    assertEquals(200, resp.statusCode(), resp.bodyAsString());
    return resp;
  }

  @Test
  void alipaySdkRunsTheBillUrlQueryAgainstTheSimulatorAndVerifiesItsAnswer() throws Exception {
    ChannelConfig config = channels.get(Sandbox.ALIPAY);
    Set<String> paid = trades(new AlipayClient(config, outbound, Clock.systemUTC()), "alipay", 3, 2);
    LocalDate day = LocalDate.now(ZoneOffset.ofHours(8));
    DefaultAlipayClient sdk = new DefaultAlipayClient(sim.url() + "/alipay/gateway.do", "2021000000000000",
        keyBase64("conf/sandbox/alipay-app-private.pem", "PRIVATE KEY"), "json", "utf-8",
        keyBase64("conf/sandbox/alipay-public.pem", "PUBLIC KEY"), "RSA2");
    AlipayDataDataserviceBillDownloadurlQueryRequest request = new AlipayDataDataserviceBillDownloadurlQueryRequest();
    request.setBizContent(new JsonObject().put("bill_type", "trade").put("bill_date", day.toString()).encode());
    AlipayDataDataserviceBillDownloadurlQueryResponse response = sdk.execute(request);
    assertTrue(response.isSuccess(), response.getBody());
    byte[] zip = sim.http.getAbs(response.getBillDownloadUrl()).send().await().body().getBytes();
    assertEquals(paid, payments(AlipayBill.parse(config.name(), AlipayBill.detailFile(config.name(), zip), "CNY")));
    assertEquals(paid, payments(new AlipayBill(config, outbound, Clock.systemUTC()).fetch(day).await()));
  }

  private static String keyBase64(String file, String type) throws Exception {
    return Files.readString(Path.of(file)).replaceAll("(?s).*-----BEGIN " + type + "-----", "")
        .replaceAll("(?s)-----END " + type + "-----.*", "").replaceAll("\\s", "");
  }

  @Test
  void stripeSdkPagesThroughTheDaysPaymentIntentsAsOurBillDoes() throws Exception {
    ChannelConfig config = channels.get(Sandbox.STRIPE);
    Set<String> paid = trades(new StripeClient(config, outbound), "stripe", 5, 3);
    LocalDate day = LocalDate.now(ZoneOffset.UTC);
    String secret = new JsonObject(Files.readString(Path.of("conf/sandbox/gateway-sim.json"))).getJsonObject("stripe")
        .getString("secretKey");
    com.stripe.StripeClient sdk = com.stripe.StripeClient.builder().setApiKey(secret).setApiBase(sim.url() + "/stripe").build();
    long from = day.atStartOfDay(ZoneOffset.UTC).toEpochSecond();
    PaymentIntentListParams params = PaymentIntentListParams.builder().setLimit(2L)
        .setCreated(PaymentIntentListParams.Created.builder().setGte(from).setLt(from + 86_400).build()).build();
    List<String> seen = new ArrayList<>();
    Set<String> succeeded = new TreeSet<>();
    for (PaymentIntent pi : sdk.paymentIntents().list(params).autoPagingIterable()) {
      seen.add(pi.getId());
      if ("succeeded".equals(pi.getStatus())) {
        succeeded.add(pi.getId());
        assertEquals(pi.getAmount(), pi.getAmountReceived());
        assertTrue(pi.getMetadata().get("orderNo").startsWith("SDK"));
      }
    }
    assertEquals(5, seen.size(), "stripe-java walked every page: " + seen);
    assertEquals(5, new TreeSet<>(seen).size(), "no object twice");
    assertEquals(paid, succeeded);
    assertEquals(paid, payments(new StripeBill(config, outbound, 2).fetch(day).await()), "our bill pages the same way");
    assertEquals(paid, payments(new StripeBill(config, outbound).fetch(day).await()));
  }
}
