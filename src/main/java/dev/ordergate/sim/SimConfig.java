package dev.ordergate.sim;

import dev.ordergate.channel.Pem;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The simulator's side of the sandbox ({@code conf/sandbox/gateway-sim.json}): per gateway kind, the
 * ordergate channel it notifies and the keys it signs with. DEVELOPMENT ONLY keys.
 */
public record SimConfig(Map<String, Target> gateways) {

  public static final String DEFAULT_PATH = "conf/sandbox/gateway-sim.json";

  /** One simulated gateway and the ordergate channel name it notifies by default. */
  public record Target(String channel, Gateway gateway) {}

  public static SimConfig load(String path) throws IOException {
    Path file = Path.of(path).toAbsolutePath();
    JsonObject json = new JsonObject(Files.readString(file, StandardCharsets.UTF_8));
    Path dir = file.getParent();
    Map<String, Target> out = new LinkedHashMap<>();
    JsonObject w = json.getJsonObject("wechatpay-v3");
    if (w != null) {
      out.put("wechatpay-v3", new Target(w.getString("channel"), new WechatPayGateway(w.getString("mchId"),
          w.getString("appId"), w.getString("apiV3Key").getBytes(StandardCharsets.UTF_8), w.getString("platformKeyId"),
          Pem.privateKey(relativeTo(dir, w.getString("platformPrivateKeyPem")), "wechatpay-v3.platformPrivateKeyPem"))));
    }
    JsonObject a = json.getJsonObject("alipay");
    if (a != null) {
      out.put("alipay", new Target(a.getString("channel"), new AlipayGateway(a.getString("appId"),
          Pem.privateKey(relativeTo(dir, a.getString("alipayPrivateKeyPem")), "alipay.alipayPrivateKeyPem"),
          Charset.forName(a.getString("charset", "utf-8")))));
    }
    JsonObject s = json.getJsonObject("stripe");
    if (s != null) {
      out.put("stripe", new Target(s.getString("channel"), new StripeGateway(s.getString("webhookSecret"))));
    }
    return new SimConfig(Map.copyOf(out));
  }

  /** A key file named relative to the config file; PEM text stays as it is. */
  private static String relativeTo(Path dir, String value) {
    return value.contains("-----BEGIN") ? value : dir.resolve(value).toString();
  }

  public Target target(String kind) {
    Target t = gateways.get(kind);
    if (t == null) {
      throw new IllegalArgumentException("no simulated gateway " + kind + " (known: " + gateways.keySet() + ")");
    }
    return t;
  }
}
