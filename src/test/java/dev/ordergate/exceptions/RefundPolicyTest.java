package dev.ordergate.exceptions;

import dev.ordergate.config.AppConfig;
import dev.ordergate.domain.ExceptionKind;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which channels refund automatically: a gateway channel with its outbound keys needs no refundUrl. */
class RefundPolicyTest {

  private static RefundPolicy policy(JsonObject config) {
    AppConfig c = AppConfig.from(config);
    return new RefundPolicy(1_000, c.channels());
  }

  @Test
  void aGatewayChannelWithItsKeysRefundsWithoutARefundUrlAndOneWithoutThemDoesNot() {
    JsonObject config = Sandbox.config();
    JsonObject channels = config.getJsonObject("payments").getJsonObject("channels");
    channels.getJsonObject(Sandbox.STRIPE).remove("secretKey");
    RefundPolicy p = policy(config);
    for (String gateway : new String[] {Sandbox.WECHATPAY, Sandbox.ALIPAY}) {
      assertEquals(ExceptionStatus.REFUND_PENDING, p.decide(ExceptionKind.LATE_AFTER_CANCEL, gateway, 500).status(), gateway);
      assertEquals(ExceptionStatus.MANUAL_REVIEW, p.decide(ExceptionKind.LATE_AFTER_CANCEL, gateway, 1_001).status());
      assertEquals(ExceptionStatus.MANUAL_REVIEW, p.decide(ExceptionKind.AMOUNT_MISMATCH, gateway, 500).status());
    }
    RefundPolicy.Decision noKeys = p.decide(ExceptionKind.DOUBLE_PAYMENT, Sandbox.STRIPE, 500);
    assertEquals(ExceptionStatus.MANUAL_REVIEW, noKeys.status());
    assertTrue(noKeys.reason().contains("outbound keys"), noKeys.reason());
    RefundPolicy.Decision ordergate = p.decide(ExceptionKind.LATE_AFTER_CANCEL, TestApp.CHANNEL, 500);
    assertEquals(ExceptionStatus.MANUAL_REVIEW, ordergate.status(), "the ordergate kind still needs its refundUrl");
    assertTrue(ordergate.reason().contains("refundUrl"), ordergate.reason());
    channels.getJsonObject(TestApp.CHANNEL).put("refundUrl", "http://127.0.0.1:9/refund");
    assertEquals(ExceptionStatus.REFUND_PENDING, policy(config).decide(ExceptionKind.LATE_AFTER_CANCEL, TestApp.CHANNEL, 500).status());
  }
}
