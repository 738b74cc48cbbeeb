package dev.ordergate.channel.stripe;

import dev.ordergate.channel.GatewayBill;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.config.ChannelConfig;
import io.vertx.core.Future;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Stripe has no daily bill: the day is its list of PaymentIntents created that day (UTC)
 * ({@code GET /v1/payment_intents?created[gte]=..&created[lt]=..&limit=100}, paged with
 * {@code starting_after} while {@code has_more}), of which the {@code succeeded} ones with
 * {@code metadata[orderNo]} are payments (amount {@code amount_received}), and its list of refunds created
 * that day ({@code GET /v1/refunds?created...}; {@code succeeded} and {@code pending} ones, by
 * {@code payment_intent}). Authorization: Bearer with the secret key.
 */
public final class StripeBill implements GatewayBill {

  static final int PAGE = 100;
  /** At most this many pages per list (10,000 objects): a day beyond it is refused, not cut short silently. */
  static final int MAX_PAGES = 100;

  private final ChannelConfig config;
  private final StripeSettings settings;
  private final Outbound outbound;
  private final int pageSize;

  public StripeBill(ChannelConfig config, Outbound outbound) {
    this(config, outbound, PAGE);
  }

  /** {@code pageSize}: Stripe's {@code limit}, 1..100 (tests page with small ones). */
  public StripeBill(ChannelConfig config, Outbound outbound, int pageSize) {
    this.pageSize = pageSize;
    this.config = config;
    this.settings = (StripeSettings) config.settings();
    this.outbound = outbound;
    if (settings.secretKey() == null) {
      throw new IllegalArgumentException("channel " + config.name() + " needs secretKey to list payments");
    }
  }

  @Override
  public ZoneId zone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Future<List<BillLine>> fetch(LocalDate day) {
    long from = day.atStartOfDay(ZoneOffset.UTC).toEpochSecond();
    long to = day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toEpochSecond();
    List<BillLine> out = new ArrayList<>();
    return outbound.call(config.name(), "bill", () -> list("/v1/payment_intents", from, to, null, 0, pi -> {
      if (!"succeeded".equals(pi.getValue("status")) || !(pi.getValue("metadata") instanceof JsonObject meta)
          || !(meta.getValue("orderNo") instanceof String orderNo)) {
        return null;
      }
      return BillLine.payment(string(pi, "id"), orderNo, number(pi, "amount_received"), currency(pi), "succeeded");
    }, out).compose(v -> list("/v1/refunds", from, to, null, 0, r -> {
      String status = String.valueOf(r.getValue("status"));
      if (!status.equals("succeeded") && !status.equals("pending")) {
        return null;
      }
      JsonObject meta = r.getValue("metadata") instanceof JsonObject m ? m : new JsonObject();
      return new BillLine(string(r, "payment_intent"), meta.getValue("orderNo") instanceof String o ? o : null,
          number(r, "amount"), currency(r), Kind.REFUND, string(r, "id"),
          meta.getValue("refundId") instanceof String id ? id : null, status);
    }, out)).map(v -> List.copyOf(out)));
  }

  private Future<Void> list(String path, long from, long to, String after, int page, Function<JsonObject, BillLine> line,
                            List<BillLine> out) {
    if (page == MAX_PAGES) {
      return Future.failedFuture(GatewayFailure.unreachable(config.name(), "BILL_TOO_LARGE",
          path + " has more than " + MAX_PAGES * pageSize + " objects that day"));
    }
    String url = settings.baseUrl() + path + "?" + enc("created[gte]") + "=" + from + "&" + enc("created[lt]") + "=" + to
        + "&limit=" + pageSize + (after == null ? "" : "&starting_after=" + enc(after));
    return outbound.request(HttpMethod.GET, url).bearerTokenAuthentication(settings.secretKey()).send().compose(resp -> {
      Outbound.rejectServerError(config.name(), resp);
      JsonObject body;
      try {
        body = resp.body() == null ? new JsonObject() : new JsonObject(resp.body());
      } catch (DecodeException | ClassCastException e) {
        throw GatewayFailure.unreachable(config.name(), "MALFORMED_RESPONSE", "answer is not a JSON object");
      }
      if (resp.statusCode() != 200 || !(body.getValue("data") instanceof JsonArray data)) {
        JsonObject err = body.getValue("error") instanceof JsonObject e ? e : new JsonObject();
        throw GatewayFailure.answered(config.name(), err.getValue("code") instanceof String c ? c : "HTTP_" + resp.statusCode(),
            err.getValue("message") instanceof String m ? m : null);
      }
      String last = null;
      for (Object o : data) {
        if (!(o instanceof JsonObject obj)) {
          throw GatewayBill.malformed(config.name(), path + " lists a non-object");
        }
        last = string(obj, "id");
        BillLine l = line.apply(obj);
        if (l != null) {
          out.add(l);
        }
      }
      if (Boolean.TRUE.equals(body.getValue("has_more")) && last != null) {
        return list(path, from, to, last, page + 1, line, out);
      }
      return Future.succeededFuture();
    });
  }

  private String string(JsonObject o, String key) {
    if (!(o.getValue(key) instanceof String s)) {
      throw GatewayBill.malformed(config.name(), "an object without " + key);
    }
    return s;
  }

  private long number(JsonObject o, String key) {
    if (!(o.getValue(key) instanceof Number n)) {
      throw GatewayBill.malformed(config.name(), "an object without " + key);
    }
    return n.longValue();
  }

  private static String currency(JsonObject o) {
    return o.getValue("currency") instanceof String c ? c.toUpperCase(Locale.ROOT) : null;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
