package dev.ordergate.support;

import dev.ordergate.channel.Pem;
import dev.ordergate.sim.AlipayGateway;
import dev.ordergate.sim.SimConfig;
import dev.ordergate.sim.StripeGateway;
import dev.ordergate.sim.WechatPayGateway;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;

/**
 * The shipped sandbox: the gateway channels of {@code conf/config.json} and the simulator's
 * gateways of {@code conf/sandbox} (DEVELOPMENT ONLY keys), so tests exercise exactly what a
 * newcomer runs. Other keys of {@code conf/sandbox} serve as "another party's key" in tests.
 */
public final class Sandbox {

  public static final String WECHATPAY = "sandbox-wechatpay";
  public static final String ALIPAY = "sandbox-alipay";
  public static final String STRIPE = "sandbox-stripe";

  private static final SimConfig SIM;

  static {
    try {
      SIM = SimConfig.load(SimConfig.DEFAULT_PATH);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Sandbox() {
  }

  /** A channel block of conf/config.json, e.g. {@link #WECHATPAY}. */
  public static JsonObject shippedChannel(String name) {
    try {
      return new JsonObject(Files.readString(Path.of("conf/config.json")))
          .getJsonObject("payments").getJsonObject("channels").getJsonObject(name).copy();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** TestApp's base config plus the shipped gateway channels. */
  public static JsonObject config() {
    JsonObject c = TestApp.baseConfig();
    JsonObject channels = c.getJsonObject("payments").getJsonObject("channels");
    for (String name : new String[] {WECHATPAY, ALIPAY, STRIPE}) {
      channels.put(name, shippedChannel(name));
    }
    return c;
  }

  public static WechatPayGateway wechatpay() {
    return (WechatPayGateway) SIM.target("wechatpay-v3").gateway();
  }

  public static AlipayGateway alipay() {
    return (AlipayGateway) SIM.target("alipay").gateway();
  }

  public static StripeGateway stripe() {
    return (StripeGateway) SIM.target("stripe").gateway();
  }

  /** The drill's and race's view of {@code channel} on {@code app}: its gateway plays the sandbox ones. */
  public static dev.ordergate.tools.ServiceClient.Target target(TestApp app, String channel) {
    String url = "http://127.0.0.1:" + app.verticle.port();
    if (channel.equals(TestApp.CHANNEL)) {
      return new dev.ordergate.tools.ServiceClient.Target(url, TestApp.ADMIN_TOKEN, TestApp.API_KEY, channel, TestApp.SECRET);
    }
    var gateway = SIM.gateways().values().stream().filter(t -> t.channel().equals(channel)).findFirst().orElseThrow();
    return new dev.ordergate.tools.ServiceClient.Target(url, TestApp.ADMIN_TOKEN, TestApp.API_KEY, channel, null,
        gateway.gateway());
  }

  public static SimConfig sim() {
    return SIM;
  }

  /** A private key of conf/sandbox by file stem, e.g. {@code "alipay-app"}. */
  public static PrivateKey privateKey(String stem) {
    return Pem.privateKey("conf/sandbox/" + stem + "-private.pem", stem);
  }

  public static String publicKeyPath(String stem) {
    return "conf/sandbox/" + stem + "-public.pem";
  }
}
