package dev.ordergate.channel.alipay;

import dev.ordergate.channel.ChannelRejection;
import dev.ordergate.channel.Pem;
import dev.ordergate.support.Sandbox;
import org.junit.jupiter.api.Test;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AlipayPureTest {

  @Test
  void signedContentIsSortedWithoutSignSignTypeOrEmptyValues() {
    assertEquals("a=1&b=x y&c=中文", AlipaySignature.content(Map.of("c", "中文", "sign", "S", "sign_type", "RSA2",
        "b", "x y", "a", "1", "empty", "")));
  }

  @Test
  void theFormIsDecodedInTheCharsetItNames() {
    Charset gbk = Charset.forName("GBK");
    String raw = "charset=gbk&subject=" + java.net.URLEncoder.encode("沙箱", gbk) + "&x=a+b%2Bc";
    AlipayForm f = AlipayForm.parse(raw.getBytes(StandardCharsets.US_ASCII), null);
    assertEquals(gbk, f.charset());
    assertEquals("沙箱", f.get("subject"));
    assertEquals("a b+c", f.get("x"));
    AlipayForm utf8 = AlipayForm.parse(("subject=" + java.net.URLEncoder.encode("沙箱", StandardCharsets.UTF_8))
        .getBytes(StandardCharsets.US_ASCII), "application/x-www-form-urlencoded");
    assertEquals("沙箱", utf8.get("subject"));
  }

  @Test
  void repeatedKeysBadEscapesAndUnknownCharsetsAreMalformed() {
    for (String raw : new String[] {"a=1&a=2", "a=%zz", "a=%4", "charset=nope-9&a=1", ""}) {
      assertThrows(ChannelRejection.class, () -> AlipayForm.parse(raw.getBytes(StandardCharsets.US_ASCII), null), raw);
    }
  }

  @Test
  void signatureVerifiesWithAnyConfiguredKeyAndFailsOnAChangedValue() {
    Map<String, String> params = new java.util.HashMap<>(Map.of("app_id", "1", "total_amount", "5.00", "subject", "沙箱"));
    params.put("sign", AlipaySignature.sign(params, StandardCharsets.UTF_8, Sandbox.privateKey("alipay")));
    params.put("sign_type", "RSA2");
    var mine = Pem.publicKey(Sandbox.publicKeyPath("alipay"), "k");
    var other = Pem.publicKey(Sandbox.publicKeyPath("alipay-app"), "k");
    assertTrue(AlipaySignature.verify(params, StandardCharsets.UTF_8, List.of(other, mine)));
    assertFalse(AlipaySignature.verify(params, StandardCharsets.UTF_8, List.of(other)));
    assertFalse(AlipaySignature.verify(params, Charset.forName("GBK"), List.of(mine)), "bytes of another charset");
    params.put("total_amount", "0.05");
    assertFalse(AlipaySignature.verify(params, StandardCharsets.UTF_8, List.of(mine)));
  }

  @Test
  void yuanConvertToCentsExactly() {
    assertEquals(1, Yuan.toCents("0.01", "a"));
    assertEquals(1230, Yuan.toCents("12.3", "a"));
    assertEquals(1200, Yuan.toCents("12", "a"));
    assertEquals(99_999_999_999_99L, Yuan.toCents("99999999999.99", "a"));
    // 0.1 + 0.2 style values that floating point gets wrong
    assertEquals(30, Yuan.toCents("0.30", "a"));
    assertEquals(1_000_000_000_001L, Yuan.toCents("10000000000.01", "a"));
    for (String bad : new String[] {"1.234", "1e2", "-1.00", " 1.00", "01.00", "1.", ".5", "1,00", "", "NaN"}) {
      assertThrows(ChannelRejection.class, () -> Yuan.toCents(bad, "total_amount"), bad);
    }
    assertEquals("0.05", Yuan.of(5));
    assertEquals("12.30", Yuan.of(1230));
  }
}
