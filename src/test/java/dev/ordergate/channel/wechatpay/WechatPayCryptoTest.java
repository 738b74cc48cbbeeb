package dev.ordergate.channel.wechatpay;

import dev.ordergate.support.Sandbox;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PublicKey;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WechatPayCryptoTest {

  private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
  private static final byte[] BODY = "{\"id\":\"EV-1\"}".getBytes(StandardCharsets.UTF_8);
  private static final PublicKey PLATFORM = dev.ordergate.channel.Pem.publicKey(Sandbox.publicKeyPath("wechatpay-platform"), "k");

  @Test
  void signatureOverTimestampNonceAndRawBodyVerifiesAndNothingElseDoes() {
    String sig = WechatPaySignature.sign(Sandbox.privateKey("wechatpay-platform"), "1700000000", "N1", BODY);
    assertTrue(WechatPaySignature.verify(PLATFORM, "1700000000", "N1", BODY, sig));
    assertFalse(WechatPaySignature.verify(PLATFORM, "1700000001", "N1", BODY, sig));
    assertFalse(WechatPaySignature.verify(PLATFORM, "1700000000", "N2", BODY, sig));
    assertFalse(WechatPaySignature.verify(PLATFORM, "1700000000", "N1", "{\"id\":\"EV-2\"}".getBytes(StandardCharsets.UTF_8), sig));
    String other = WechatPaySignature.sign(Sandbox.privateKey("wechatpay-merchant"), "1700000000", "N1", BODY);
    assertFalse(WechatPaySignature.verify(PLATFORM, "1700000000", "N1", BODY, other), "wrong key");
  }

  @Test
  void aSignatureProbeDoesNotVerify() {
    assertFalse(WechatPaySignature.verify(PLATFORM, "1700000000", "N1", BODY, "WECHATPAY/SIGNTEST/abc"));
  }

  @Test
  void theSignedMessageHasATrailingNewlineEvenForAnEmptyBody() {
    assertArrayEquals("1\nn\n\n".getBytes(StandardCharsets.UTF_8), WechatPaySignature.message("1", "n", new byte[0]));
  }

  @Test
  void timestampToleranceIsBothWays() {
    assertTrue(WechatPaySignature.fresh("1000", 1300, 300));
    assertFalse(WechatPaySignature.fresh("1000", 1301, 300));
    assertFalse(WechatPaySignature.fresh("1301", 1000, 300));
    assertFalse(WechatPaySignature.fresh("1e3", 1000, 300));
  }

  @Test
  void aeadRoundTripsAndRejectsAnotherKeyNonceAadOrTag() throws Exception {
    byte[] plain = "{\"trade_state\":\"SUCCESS\"}".getBytes(StandardCharsets.UTF_8);
    String ct = WechatPayCipher.encrypt(KEY, "0123456789ab", "transaction", plain);
    assertArrayEquals(plain, WechatPayCipher.decrypt(KEY, "0123456789ab", "transaction", ct));
    byte[] otherKey = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.UTF_8);
    assertThrows(GeneralSecurityException.class, () -> WechatPayCipher.decrypt(otherKey, "0123456789ab", "transaction", ct));
    assertThrows(GeneralSecurityException.class, () -> WechatPayCipher.decrypt(KEY, "0123456789ac", "transaction", ct));
    assertThrows(GeneralSecurityException.class, () -> WechatPayCipher.decrypt(KEY, "0123456789ab", "refund", ct));
    byte[] raw = java.util.Base64.getDecoder().decode(ct);
    raw[raw.length - 1] ^= 1;
    String badTag = java.util.Base64.getEncoder().encodeToString(raw);
    assertThrows(GeneralSecurityException.class, () -> WechatPayCipher.decrypt(KEY, "0123456789ab", "transaction", badTag));
    assertThrows(GeneralSecurityException.class, () -> WechatPayCipher.decrypt(KEY, "0123456789ab", "transaction", "%%%"));
  }
}
