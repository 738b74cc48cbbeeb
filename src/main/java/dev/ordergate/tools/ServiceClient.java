package dev.ordergate.tools;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

import dev.ordergate.http.CallbackRoutes;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Gateway;
import dev.ordergate.sim.Payment;

import java.net.URI;
import java.util.function.Supplier;
import java.nio.charset.StandardCharsets;

/**
 * The service's HTTP API as the tools use it: admin calls with the bearer token, callbacks signed
 * with the channel secret at send time (so a queued request is never sent with a stale stamp).
 */
public final class ServiceClient implements AutoCloseable {

  /**
   * Where the service is and the credentials the tools need: the admin token for {@code /admin/*}, the
   * API key for {@code /api/orders}, {@code /api/inventory} and {@code /api/coupons}, the channel secret
   * for callbacks. {@code gateway} set: the channel is of that gateway's kind and payments are sent as
   * the (simulated) gateway sends them; null: the ordergate format signed with {@code secret}.
   */
  public record Target(String url, String adminToken, String apiKey, String channel, String secret, Gateway gateway) {
    public Target(String url, String adminToken, String apiKey, String channel, String secret) {
      this(url, adminToken, apiKey, channel, secret, null);
    }
  }

  /** The answer to one delivered payment notification, whatever the channel's dialect. */
  public record PayAnswer(int status, boolean accepted, String outcome, boolean duplicate, String body) {}

  private final Target target;
  private final WebClient http;
  private final long timeoutMs;

  public ServiceClient(Vertx vertx, Target target, int connections, long timeoutMs) {
    this.target = target;
    this.timeoutMs = timeoutMs;
    URI uri = URI.create(target.url());
    boolean tls = "https".equalsIgnoreCase(uri.getScheme());
    int port = uri.getPort() > 0 ? uri.getPort() : tls ? 443 : 80;
    this.http = WebClient.create(vertx, new WebClientOptions()
            .setDefaultHost(uri.getHost()).setDefaultPort(port).setSsl(tls)
            // Idle connections are closed here before the server's http.idleTimeoutMs (30 s) can close them
            // under a request being sent (a long drill saw HttpClosedException on a connection idle for 30 s).
            .setKeepAlive(true).setKeepAliveTimeout(10).setPipelining(false),
        new PoolOptions().setHttp1MaxSize(connections).setEventLoopSize(Math.min(connections, 2)));
  }

  public Target target() {
    return target;
  }

  private HttpRequest<Buffer> request(HttpMethod method, String path, boolean admin) {
    HttpRequest<Buffer> req = http.request(method, path).timeout(timeoutMs);
    if (admin) {
      req.putHeader("Authorization", "Bearer " + target.adminToken());
    } else if (path.startsWith("/api/") && !path.startsWith("/api/callbacks/") && target.apiKey() != null) {
      req.putHeader("Authorization", "Bearer " + target.apiKey());
    }
    return req;
  }

  public Future<HttpResponse<Buffer>> send(HttpMethod method, String path, JsonObject body, boolean admin) {
    HttpRequest<Buffer> req = request(method, path, admin);
    if (body == null) {
      return req.send();
    }
    return req.putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(body.encode()));
  }

  /** Signs {@code raw} now with the channel secret and posts it to the channel's callback route. */
  public Future<HttpResponse<Buffer>> callback(byte[] raw) {
    long t = System.currentTimeMillis() / 1000;
    return request(HttpMethod.POST, "/api/callbacks/" + target.channel(), false)
        .putHeader("Content-Type", "application/json")
        .putHeader(OrdergateSignature.HEADER, OrdergateSignature.header(target.secret(), t, target.channel(), raw))
        .sendBuffer(Buffer.buffer(raw));
  }

  public Future<HttpResponse<Buffer>> callback(JsonObject body) {
    return callback(body.encode().getBytes(StandardCharsets.UTF_8));
  }

  /**
   * One payment's notification, built once: each {@code get()} delivers one copy of it (a gateway's
   * duplicate is the same notification again). The ordergate format is signed at send time.
   */
  public Supplier<Future<PayAnswer>> payment(String txnId, String orderNo, long amountCents) {
    if (target.gateway() == null) {
      byte[] raw = new JsonObject().put("txnId", txnId).put("orderNo", orderNo).put("amountCents", amountCents)
          .put("status", "SUCCESS").encode().getBytes(StandardCharsets.UTF_8);
      return () -> callback(raw).map(resp -> {
        JsonObject body = resp.statusCode() == 200 ? resp.bodyAsJsonObject() : null;
        return new PayAnswer(resp.statusCode(), body != null, body == null ? null : body.getString("outcome"),
            body != null && body.getBoolean("duplicate", false), resp.bodyAsString());
      });
    }
    Delivery d = target.gateway().notification(new Payment(orderNo, txnId, amountCents, "CNY", null),
        System.currentTimeMillis() / 1000);
    return () -> {
      HttpRequest<Buffer> req = request(HttpMethod.POST, "/api/callbacks/" + target.channel(), false);
      d.headers().forEach(req::putHeader);
      return req.sendBuffer(Buffer.buffer(d.body())).map(resp -> {
        String body = resp.bodyAsString() == null ? "" : resp.bodyAsString();
        String header = resp.getHeader(CallbackRoutes.OUTCOME_HEADER);
        boolean ok = target.gateway().accepted(resp.statusCode(), body);
        return new PayAnswer(resp.statusCode(), ok, header == null ? null : header.replace(",DUPLICATE", ""),
            header != null && header.endsWith(",DUPLICATE"), body);
      });
    };
  }

  public Future<JsonObject> expectJson(Future<HttpResponse<Buffer>> call, int status, String what) {
    return call.compose(resp -> resp.statusCode() == status
        ? Future.succeededFuture(resp.bodyAsJsonObject())
        : Future.failedFuture(new IllegalStateException(what + ": HTTP " + resp.statusCode() + " " + resp.bodyAsString())));
  }

  public Future<JsonObject> setStock(String sku, int available) {
    return expectJson(send(HttpMethod.PUT, "/admin/inventory/" + sku,
        new JsonObject().put("available", available).put("operator", "drill"), true), 200, "set stock " + sku);
  }

  public Future<JsonObject> createCoupon(String code, String userId, long discountCents) {
    return expectJson(send(HttpMethod.POST, "/admin/coupons",
        new JsonObject().put("code", code).put("userId", userId).put("discountCents", discountCents), true),
        201, "create coupon " + code);
  }

  public Future<JsonObject> createOrder(JsonObject order) {
    return send(HttpMethod.POST, "/api/orders", order, false).compose(resp -> resp.statusCode() == 201 || resp.statusCode() == 200
        ? Future.succeededFuture(resp.bodyAsJsonObject())
        : Future.failedFuture(new IllegalStateException("create order " + order.getString("orderNo") + ": HTTP "
            + resp.statusCode() + " " + resp.bodyAsString())));
  }

  public Future<JsonObject> getOrder(String orderNo) {
    return expectJson(send(HttpMethod.GET, "/api/orders/" + orderNo, null, false), 200, "get order " + orderNo);
  }

  @Override
  public void close() {
    http.close();
  }
}
