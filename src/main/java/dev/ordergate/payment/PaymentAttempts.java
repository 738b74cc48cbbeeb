package dev.ordergate.payment;

import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayClients;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.db.AttemptSql;
import dev.ordergate.db.Params;
import dev.ordergate.domain.Rejection;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.OffsetDateTime;
import java.util.Map;

/**
 * Opens payments at gateways, one attempt per (order, channel). The gateway is called with no
 * transaction open and no lock held; the attempt row is stored only after the gateway answered, by a
 * statement that also requires the order to be pending. Nothing is half-made: a gateway error stores
 * nothing, and a trade opened for an order cancelled meanwhile is closed again at the gateway.
 */
public final class PaymentAttempts {

  private static final Logger log = LoggerFactory.getLogger(PaymentAttempts.class);

  /** The attempt and whether it already existed (the answer to a repeated request). */
  public record Opened(Attempt attempt, boolean replayed) {}

  private final Pool pool;
  private final Map<String, ChannelConfig> channels;
  private final Map<String, GatewayClient> clients;

  public PaymentAttempts(Pool pool, Map<String, ChannelConfig> channels, Map<String, GatewayClient> clients) {
    this.pool = pool;
    this.channels = channels;
    this.clients = clients;
  }

  public Future<Opened> open(String orderNo, String channel) {
    ChannelConfig config = channels.get(channel);
    if (config == null) {
      return Future.failedFuture(new Rejection(400, "UNKNOWN_CHANNEL", "no payment channel " + channel));
    }
    GatewayClient client = clients.get(channel);
    if (client == null) {
      return Future.failedFuture(new Rejection(400, "CHANNEL_CANNOT_OPEN", GatewayClients.whyNot(config)));
    }
    return pool.preparedQuery(AttemptSql.ORDER).execute(Params.of(orderNo)).compose(rows -> {
      if (rows.size() == 0) {
        return Future.failedFuture(Rejection.notFound("order " + orderNo));
      }
      Row order = rows.iterator().next();
      if (!"PENDING_PAYMENT".equals(order.getString("status"))) {
        return Future.failedFuture(notPending(orderNo, order.getString("status")));
      }
      return existing(orderNo, channel).compose(found -> {
        if (found != null) {
          return Future.succeededFuture(new Opened(found, true));
        }
        if (order.getBoolean("expired")) {
          return Future.failedFuture(new Rejection(409, "ORDER_EXPIRED",
              "order " + orderNo + " is past its payment deadline; it is about to be cancelled"));
        }
        OffsetDateTime expiresAt = order.getOffsetDateTime("expires_at");
        long amount = order.getLong("amount_cents");
        String currency = order.getString("currency");
        return client.open(new GatewayClient.OpenRequest(orderNo, amount, currency, expiresAt.toInstant(), "order " + orderNo))
            .compose(opened -> store(orderNo, config, opened, amount, currency, expiresAt, client));
      });
    });
  }

  private Future<Opened> store(String orderNo, ChannelConfig config, GatewayClient.Opened opened, long amount,
                               String currency, OffsetDateTime expiresAt, GatewayClient client) {
    return pool.preparedQuery(AttemptSql.INSERT).execute(Params.of(orderNo, config.name(), config.kind().id(),
            opened.reference(), amount, currency, opened.clientField(), opened.clientValue(), expiresAt))
        .compose(rows -> {
          if (rows.size() == 1) {
            Attempt a = Attempt.of(rows.iterator().next());
            log.info("order {}: payment opened at {} (attempt {}, reference {})", orderNo, config.name(), a.id(),
                a.gatewayReference());
            return Future.succeededFuture(new Opened(a, false));
          }
          // Either the same request won the race (its row is there), or the order left PENDING_PAYMENT meanwhile.
          return existing(orderNo, config.name()).compose(found -> {
            if (found != null) {
              return Future.succeededFuture(new Opened(found, true));
            }
            log.warn("order {} left PENDING_PAYMENT while its payment was being opened at {}; closing that trade",
                orderNo, config.name());
            return client.close(opened.reference(), orderNo)
                .recover(err -> {
                  log.warn("order {}: closing the unused trade {} at {} failed ({}); its gateway deadline still holds",
                      orderNo, opened.reference(), config.name(), err.toString());
                  return Future.succeededFuture();
                })
                .compose(v -> pool.preparedQuery(AttemptSql.ORDER).execute(Params.of(orderNo)))
                .compose(again -> Future.failedFuture(notPending(orderNo,
                    again.size() == 0 ? "unknown" : again.iterator().next().getString("status"))));
          });
        });
  }

  private Future<Attempt> existing(String orderNo, String channel) {
    return pool.preparedQuery(AttemptSql.BY_ORDER_AND_CHANNEL).execute(Params.of(orderNo, channel))
        .map(rows -> rows.size() == 0 ? null : Attempt.of(rows.iterator().next()));
  }

  private static Rejection notPending(String orderNo, String status) {
    return new Rejection(409, "ORDER_NOT_PENDING", "order " + orderNo + " is " + status + "; no payment can be opened");
  }

  /**
   * The order's attempts, oldest first (without the client secrets), each state as it is now: derived at
   * read time from the order's payments and the trade's deadline ({@code AttemptSql.READ_BY_ORDER}), so an
   * attempt paid by its notification reads PAID without the callback's transaction writing to it.
   */
  public Future<JsonArray> list(String orderNo) {
    return pool.preparedQuery(AttemptSql.READ_BY_ORDER).execute(Params.of(orderNo)).compose(rows -> {
      JsonArray out = new JsonArray();
      rows.forEach(r -> out.add(Attempt.of(r).toJson(false)));
      if (!out.isEmpty()) {
        return Future.succeededFuture(out);
      }
      return pool.preparedQuery(AttemptSql.ORDER).execute(Params.of(orderNo)).compose(o -> o.size() == 0
          ? Future.failedFuture(Rejection.notFound("order " + orderNo)) : Future.succeededFuture(out));
    });
  }

  /** True when {@code err} is the gateway's own error answer (502) rather than it being unavailable (503). */
  static boolean answered(Throwable err) {
    return err instanceof GatewayFailure g && g.answered();
  }
}
