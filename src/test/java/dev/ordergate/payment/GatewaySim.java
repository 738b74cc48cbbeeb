package dev.ordergate.payment;

import dev.ordergate.sim.Sender;
import dev.ordergate.sim.SimApis;
import dev.ordergate.sim.SimConfig;
import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import dev.ordergate.tools.GatewaySimCommand;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;

/**
 * The gateway simulator (scripts/gateway-sim serve) on its own Vert.x, with the gateways' APIs, and a
 * service config whose sandbox gateway channels call it. It stands in for the remote gateways.
 */
final class GatewaySim implements AutoCloseable {

  final Vertx vertx = Vertx.vertx();
  final SimApis apis;
  final HttpServer server;
  final WebClient http;

  GatewaySim() {
    SimConfig sim = Sandbox.sim();
    try {
      apis = SimApis.load(vertx, SimConfig.DEFAULT_PATH, sim, Clock.systemUTC());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server = GatewaySimCommand.serve(vertx, sim, apis, new Sender(vertx, WebClient.create(vertx), 0.0001, 16),
        "127.0.0.1", 0, "http://127.0.0.1:1").await();
    http = WebClient.create(vertx);
  }

  String url() {
    return "http://127.0.0.1:" + server.actualPort();
  }

  /** Sandbox.config() with the gateway channels pointed at this simulator, plus {@code payments} keys. */
  JsonObject serviceConfig(JsonObject payments) {
    JsonObject c = Sandbox.config();
    JsonObject channels = c.getJsonObject("payments").getJsonObject("channels");
    channels.getJsonObject(Sandbox.WECHATPAY).put("baseUrl", url() + "/wechatpay");
    channels.getJsonObject(Sandbox.ALIPAY).put("gatewayUrl", url() + "/alipay/gateway.do");
    channels.getJsonObject(Sandbox.STRIPE).put("baseUrl", url() + "/stripe");
    payments.forEach(e -> c.getJsonObject("payments").put(e.getKey(), e.getValue()));
    return c;
  }

  /** The buyer pays the trade; {@code notify} false drops the gateway's notification. */
  JsonObject pay(TestApp app, String kind, String ref, String channel, boolean notify) {
    var resp = http.postAbs(url() + "/sim/trades/" + kind + "/" + ref + "/pay")
        .sendBuffer(Buffer.buffer(new JsonObject().put("notify", notify)
            .put("notifyUrl", "http://127.0.0.1:" + app.verticle.port() + "/api/callbacks/" + channel).encode())).await();
    return resp.bodyAsJsonObject().put("httpStatus", resp.statusCode());
  }

  JsonObject trade(String kind, String ref) {
    var resp = http.getAbs(url() + "/sim/trades/" + kind + "/" + ref).send().await();
    return resp.statusCode() == 404 ? null : resp.bodyAsJsonObject();
  }

  void scan(String kind, String ref) {
    http.postAbs(url() + "/sim/trades/" + kind + "/" + ref + "/scan").send().await();
  }

  void fault(String kind, JsonObject spec) {
    http.postAbs(url() + "/sim/faults/" + kind).sendBuffer(Buffer.buffer(spec.encode())).await();
  }

  JsonObject stats(String kind) {
    return http.getAbs(url() + "/sim/stats/" + kind).send().await().bodyAsJsonObject();
  }

  void clearFaults() {
    http.deleteAbs(url() + "/sim/faults").send().await();
  }

  @Override
  public void close() {
    vertx.close().await();
  }
}
