package dev.ordergate.channel.stripe;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StripeSignatureTest {

  private static final byte[] BODY = "{\n  \"id\": \"evt_1\"\n}".getBytes(StandardCharsets.UTF_8);
  private static final long NOW = 1_800_000_000L;
  private static final List<String> SECRETS = List.of("whsec_old", "whsec_new");

  @Test
  void anyV1OfAnySecretVerifiesAndV0IsIgnored() {
    String good = StripeSignature.header("whsec_new", NOW, BODY);
    assertTrue(StripeSignature.verify(good, BODY, SECRETS, NOW, 300));
    String v1 = good.substring(good.indexOf("v1="));
    assertTrue(StripeSignature.verify("t=" + NOW + ",v1=" + "b".repeat(64) + "," + v1 + ",v0=x", BODY, SECRETS, NOW, 300));
    assertFalse(StripeSignature.verify("t=" + NOW + "," + v1.replace("v1=", "v0="), BODY, SECRETS, NOW, 300));
    assertFalse(StripeSignature.verify(StripeSignature.header("whsec_other", NOW, BODY), BODY, SECRETS, NOW, 300));
  }

  @Test
  void theSignatureIsTheHexHmacOfTimestampDotRawBody() {
    // openssl: printf '1800000000.{\n  "id": "evt_1"\n}' | openssl dgst -sha256 -hmac whsec_new
    assertEquals("t=1800000000,v1=" + Vectors.STRIPE, StripeSignature.header("whsec_new", NOW, BODY));
  }

  @Test
  void staleAndFutureTimestampsFailAndATamperedBodyFails() {
    assertFalse(StripeSignature.verify(StripeSignature.header("whsec_new", NOW - 301, BODY), BODY, SECRETS, NOW, 300));
    assertFalse(StripeSignature.verify(StripeSignature.header("whsec_new", NOW + 301, BODY), BODY, SECRETS, NOW, 300));
    String good = StripeSignature.header("whsec_new", NOW, BODY);
    assertFalse(StripeSignature.verify(good, "{\"id\": \"evt_1\"}".getBytes(StandardCharsets.UTF_8), SECRETS, NOW, 300));
    assertFalse(StripeSignature.verify(null, BODY, SECRETS, NOW, 300));
    assertFalse(StripeSignature.verify("v1=" + "a".repeat(64), BODY, SECRETS, NOW, 300));
  }
}
