package dev.ordergate.channel.ordergate;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OrdergateSignatureTest {

  private static final byte[] BODY = "{\"txnId\":\"T1\"}".getBytes(StandardCharsets.UTF_8);
  private static final List<String> SECRETS = List.of("old-secret", "new-secret");
  private static final long NOW = 1_800_000_000L;

  @Test
  void v2SignsTheChannelNameSoASignatureForOneChannelFailsOnAnother() {
    String h = OrdergateSignature.header("new-secret", NOW, "shop-a", BODY);
    assertTrue(OrdergateSignature.verify(h, BODY, "shop-a", SECRETS, NOW, 300, false));
    assertFalse(OrdergateSignature.verify(h, BODY, "shop-b", SECRETS, NOW, 300, false));
  }

  @Test
  void theDocumentedV2VectorMatches() {
    // HMAC-SHA256("new-secret", "1800000000.shop-a.{\"txnId\":\"T1\"}"), computed with openssl.
    assertEquals("t=1800000000,v2=" + Vectors.V2, OrdergateSignature.header("new-secret", NOW, "shop-a", BODY));
  }

  @Test
  void theLegacyV1FormVerifiesOnlyDuringTheTransition() {
    String h = OrdergateSignature.legacyHeader("old-secret", NOW, BODY);
    assertTrue(OrdergateSignature.verify(h, BODY, "shop-a", SECRETS, NOW, 300, true));
    assertFalse(OrdergateSignature.verify(h, BODY, "shop-a", SECRETS, NOW, 300, false));
  }

  @Test
  void timestampsOutsideTheToleranceFailBothWays() {
    assertFalse(OrdergateSignature.verify(OrdergateSignature.header("new-secret", NOW - 301, "a", BODY), BODY, "a", SECRETS, NOW, 300, false));
    assertFalse(OrdergateSignature.verify(OrdergateSignature.header("new-secret", NOW + 301, "a", BODY), BODY, "a", SECRETS, NOW, 300, false));
    assertTrue(OrdergateSignature.verify(OrdergateSignature.header("new-secret", NOW + 300, "a", BODY), BODY, "a", SECRETS, NOW, 300, false));
  }

  @Test
  void aTamperedBodyOrAnUnknownSecretFails() {
    String h = OrdergateSignature.header("new-secret", NOW, "a", BODY);
    assertFalse(OrdergateSignature.verify(h, "{\"txnId\":\"T2\"}".getBytes(StandardCharsets.UTF_8), "a", SECRETS, NOW, 300, false));
    assertFalse(OrdergateSignature.verify(OrdergateSignature.header("other", NOW, "a", BODY), BODY, "a", SECRETS, NOW, 300, false));
    assertFalse(OrdergateSignature.verify(null, BODY, "a", SECRETS, NOW, 300, false));
    assertFalse(OrdergateSignature.verify("t=1800000000,v2=zz", BODY, "a", SECRETS, NOW, 300, false));
  }
}
