package dev.ordergate.channel.stripe;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Stripe, outbound: a PaymentIntent (form-encoded, {@code metadata[orderNo]} as the webhook reads it,
 * an {@code Idempotency-Key} per order and channel so a repeated open is the same intent), retrieved for
 * a query and cancelled ({@code cancellation_reason=abandoned}) to close it: a PaymentIntent has no
 * deadline of its own, so we cancel it at timeout. Authorization: Bearer with the secret key.
 */
public final class StripeClient implements GatewayClient {

  private final ChannelConfig config;
  private final StripeSettings settings;
  private final Outbound outbound;

  public StripeClient(ChannelConfig config, Outbound outbound) {
    this.config = config;
    this.settings = (StripeSettings) config.settings();
    this.outbound = outbound;
    if (settings.secretKey() == null) {
      throw new IllegalArgumentException("channel " + config.name() + " needs secretKey to open payments");
    }
  }

  @Override
  public Future<Opened> open(OpenRequest r) {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("amount", Long.toString(r.amountCents()));
    form.put("currency", r.currency().toLowerCase(Locale.ROOT));
    form.put("description", r.description());
    form.put("metadata[orderNo]", r.orderNo());
    form.put("automatic_payment_methods[enabled]", "true");
    return outbound.call(config.name(), "open", () -> send(HttpMethod.POST, "/v1/payment_intents", form,
        "ordergate-open-" + config.name() + "-" + r.orderNo()).map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() != 200 || !(pi.getValue("id") instanceof String id)
              || !(pi.getValue("client_secret") instanceof String secret)) {
            throw error(resp, pi);
          }
          return new Opened(id, "client_secret", secret);
        }));
  }

  @Override
  public Future<Trade> query(String reference, String orderNo) {
    return outbound.call(config.name(), "query", () -> send(HttpMethod.GET, "/v1/payment_intents/" + encode(reference),
        null, null).map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() == 404) {
            return Trade.of(TradeState.NOT_FOUND, "resource_missing");
          }
          if (resp.statusCode() != 200 || !(pi.getValue("status") instanceof String status)) {
            throw error(resp, pi);
          }
          return switch (status) {
            case "succeeded" -> new Trade(TradeState.PAID, reference,
                pi.getValue("amount_received") instanceof Number n ? n.longValue() : 0,
                pi.getValue("currency") instanceof String c ? c.toUpperCase(Locale.ROOT) : null, status);
            case "canceled" -> Trade.of(TradeState.CLOSED, status);
            default -> Trade.of(TradeState.OPEN, status);
          };
        }));
  }

  @Override
  public Future<Void> close(String reference, String orderNo) {
    return outbound.call(config.name(), "close", () -> send(HttpMethod.POST,
        "/v1/payment_intents/" + encode(reference) + "/cancel", Map.of("cancellation_reason", "abandoned"), null)
        .map(resp -> {
          JsonObject pi = answer(resp);
          if (resp.statusCode() == 200) {
            return (Void) null;
          }
          throw error(resp, pi);
        }));
  }

  private Future<HttpResponse<Buffer>> send(HttpMethod method, String path, Map<String, String> form, String idempotencyKey) {
    var req = outbound.request(method, settings.baseUrl() + path).bearerTokenAuthentication(settings.secretKey());
    if (idempotencyKey != null) {
      req.putHeader("Idempotency-Key", idempotencyKey);
    }
    if (form == null) {
      return req.send();
    }
    StringBuilder body = new StringBuilder();
    form.forEach((k, v) -> body.append(body.length() == 0 ? "" : "&").append(encode(k)).append('=').append(encode(v)));
    return req.putHeader("Content-Type", "application/x-www-form-urlencoded").sendBuffer(Buffer.buffer(body.toString()));
  }

  private JsonObject answer(HttpResponse<Buffer> resp) {
    Outbound.rejectServerError(config.name(), resp);
    try {
      return resp.body() == null ? new JsonObject() : new JsonObject(resp.body());
    } catch (DecodeException | ClassCastException e) {
      throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "answer is not a JSON object");
    }
  }

  private GatewayFailure error(HttpResponse<Buffer> resp, JsonObject body) {
    JsonObject err = body.getValue("error") instanceof JsonObject e ? e : new JsonObject();
    String code = err.getValue("code") instanceof String c ? c
        : err.getValue("type") instanceof String t ? t : "HTTP_" + resp.statusCode();
    return GatewayFailure.answered(config.name(), code, err.getValue("message") instanceof String m ? m : null);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
