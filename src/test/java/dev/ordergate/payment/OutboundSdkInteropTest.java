package dev.ordergate.payment;

import com.alipay.api.internal.util.AlipaySignature;
import com.wechat.pay.java.core.auth.WechatPay2Credential;
import com.wechat.pay.java.core.auth.WechatPay2Validator;
import com.wechat.pay.java.core.cipher.RSASigner;
import com.wechat.pay.java.core.cipher.RSAVerifier;
import com.wechat.pay.java.core.http.HttpHeaders;
import dev.ordergate.channel.Pem;
import dev.ordergate.channel.alipay.AlipayClient;
import dev.ordergate.channel.alipay.AlipayProtocol;
import dev.ordergate.channel.wechatpay.WechatPayClient;
import dev.ordergate.channel.wechatpay.WechatPaySettings;
import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.support.Sandbox;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Our outbound signatures checked by the vendors' official SDKs (test scope only): wechatpay-java
 * builds the same WECHATPAY2-SHA256-RSA2048 Authorization for the same request, and its validator
 * accepts the simulator's signed answers; alipay-sdk-java builds the same sign content and verifies our
 * request {@code sign} and the simulator's response {@code sign}.
 */
class OutboundSdkInteropTest {

  private static final Pattern FIELD = Pattern.compile("(\\w+)=\"([^\"]*)\"");
  private static Map<String, ChannelConfig> channels;
  private static GatewaySim sim;

  @BeforeAll
  static void load() {
    sim = new GatewaySim();
    channels = AppConfig.from(sim.serviceConfig(new JsonObject())).channels();
  }

  @AfterAll
  static void stop() {
    sim.close();
  }

  private static Map<String, String> fields(String authorization) {
    Map<String, String> out = new HashMap<>();
    Matcher m = FIELD.matcher(authorization);
    while (m.find()) {
      out.put(m.group(1), m.group(2));
    }
    return out;
  }

  @Test
  void wechatPaySdkBuildsTheSameAuthorizationAndAcceptsTheSimulatorsSignedAnswers() {
    ChannelConfig config = channels.get(Sandbox.WECHATPAY);
    WechatPaySettings s = (WechatPaySettings) config.settings();
    WechatPayClient ours = new WechatPayClient(config, null, Clock.systemUTC());
    WechatPay2Credential sdk = new WechatPay2Credential(s.mchId(), new RSASigner(s.merchantSerialNo(), s.merchantPrivateKey()));
    String[][] requests = {
        {"POST", "https://api.mch.weixin.qq.com/v3/pay/transactions/native",
            "{\"appid\":\"wxd678efh567hg6787\",\"mchid\":\"1900000109\",\"description\":\"订单 X1\",\"out_trade_no\":\"X1\"}"},
        {"GET", "https://api.mch.weixin.qq.com/v3/pay/transactions/out-trade-no/X1?mchid=1900000109", ""},
        {"POST", "https://api.mch.weixin.qq.com/v3/pay/transactions/out-trade-no/X1/close", "{\"mchid\":\"1900000109\"}"}};
    for (String[] r : requests) {
      URI uri = URI.create(r[1]);
      Map<String, String> theirs = fields(sdk.getAuthorization(uri, r[0], r[2]));
      String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
      Map<String, String> mine = fields(ours.authorization(r[0], path, theirs.get("timestamp"), theirs.get("nonce_str"),
          r[2].getBytes(StandardCharsets.UTF_8)));
      assertEquals(theirs, mine, r[0] + " " + path + ": same mchid, serial_no, nonce, timestamp and signature");
    }
    // The simulator accepts the SDK's Authorization, and the SDK's validator accepts the simulator's answer.
    String url = sim.url() + "/wechatpay/v3/pay/transactions/out-trade-no/UNKNOWN1?mchid=1900000109";
    var resp = sim.http.getAbs(url).putHeader("Authorization", sdk.getAuthorization(URI.create(url), "GET", "")).send().await();
    assertEquals(404, resp.statusCode(), resp.bodyAsString());
    assertEquals("ORDER_NOT_EXIST", resp.bodyAsJsonObject().getString("code"));
    HttpHeaders headers = new HttpHeaders();
    resp.headers().forEach(h -> headers.addHeader(h.getKey(), h.getValue()));
    WechatPay2Validator validator = new WechatPay2Validator(new RSAVerifier(
        Pem.publicKey("conf/sandbox/wechatpay-platform-public.pem", "platform"), "PUB_KEY_ID_0000000000000000000000000000DEVONLY"));
    assertTrue(validator.validate(headers, resp.bodyAsString()), "wechatpay-java validates the simulator's signed answer");
    assertFalse(validator.validate(headers, resp.bodyAsString().replace("ORDER", "0RDER")), "and refuses a tampered one");
  }

  private static String publicKeyBase64(String file) throws Exception {
    return Files.readString(Path.of(file)).replaceAll("(?s).*-----BEGIN PUBLIC KEY-----", "")
        .replaceAll("(?s)-----END PUBLIC KEY-----.*", "").replaceAll("\\s", "");
  }

  @Test
  void alipaySdkVerifiesOurRequestSignAndTheSimulatorsResponseSign() throws Exception {
    AlipayClient ours = new AlipayClient(channels.get(Sandbox.ALIPAY), null, Clock.systemUTC());
    Map<String, String> params = ours.signedParams("alipay.trade.precreate", new JsonObject()
        .put("out_trade_no", "X1").put("total_amount", "12.30").put("subject", "订单 X1").put("time_expire", "2026-12-01 18:30:00"));
    Map<String, String> unsigned = new HashMap<>(params);
    String sign = unsigned.remove("sign");
    assertEquals(AlipaySignature.getSignContent(unsigned), AlipayProtocol.requestContent(params));
    assertTrue(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned), sign,
        publicKeyBase64("conf/sandbox/alipay-app-public.pem"), "utf-8", "RSA2"), "alipay-sdk-java verifies our request sign");
    assertFalse(AlipaySignature.rsaCheck(AlipaySignature.getSignContent(unsigned).replace("12.30", "12.31"), sign,
        publicKeyBase64("conf/sandbox/alipay-app-public.pem"), "utf-8", "RSA2"));
    String answer = Sandbox.alipay().answer("alipay_trade_query_response",
        new JsonObject().put("code", "10000").put("msg", "Success").put("trade_status", "WAIT_BUYER_PAY"));
    String node = AlipayProtocol.responseNode(answer, "alipay_trade_query_response");
    assertTrue(AlipaySignature.rsaCheck(node, new JsonObject(answer).getString("sign"),
        publicKeyBase64("conf/sandbox/alipay-public.pem"), "utf-8", "RSA2"), "alipay-sdk-java verifies the simulator's answer");
  }
}
