package dev.ordergate.refund;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayClient.Refund;
import dev.ordergate.channel.GatewayClient.RefundRequest;
import dev.ordergate.channel.GatewayClient.RefundState;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Notification;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.db.Params;
import dev.ordergate.db.RefundSql;
import dev.ordergate.db.Sql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.outbox.OutboxEvent;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Refunds through the gateways (issue 10). Three ways in, one set of conditional moves on the refund's
 * exception ({@link RefundSql#APPLY}):
 * <ul>
 *   <li>the outbox's REFUND_REQUESTED of a gateway channel ({@link #deliver}): the refund is asked of the
 *       channel's refund API with the event id as the refund id (the gateway's idempotency key), the same
 *       on every retry. Its answer: refunded -> REFUNDED; accepted, settled later -> REFUND_PROCESSING;
 *       refused -> REFUND_FAILED (manual review); all three are a delivered event. Unreachable, a 5xx, a bad
 *       answer signature or a passing refusal fails the delivery: the outbox retries with the same id;</li>
 *   <li>the gateway's refund notification ({@link #notified}): recorded in {@code channel_notifications},
 *       then REFUNDED or REFUND_FAILED; it never reaches the order gate;</li>
 *   <li>the refund query ({@link #start}): every {@code refundQuerySeconds}, a refund still REFUND_PROCESSING
 *       whose notification has not come is asked about at its gateway.</li>
 * </ul>
 * No call is made inside a transaction. A channel of kind {@code ordergate}, or a gateway channel without its
 * outbound keys, is not handled here ({@link #deliver} answers null): its refunds go to its {@code refundUrl}.
 */
public final class GatewayRefunds {

  private static final Logger log = LoggerFactory.getLogger(GatewayRefunds.class);
  private static final int QUERY_BATCH = 100;
  private static final String[] FROM_PENDING = {"REFUND_PENDING"};
  private static final String[] UNSETTLED = {"REFUND_PENDING", "REFUND_PROCESSING"};
  /** The gateway's proof of a refund wins over a give-up (REFUND_FAILED after the outbox's last attempt). */
  private static final String[] NOT_CONFIRMED = {"REFUND_PENDING", "REFUND_PROCESSING", "REFUND_FAILED"};

  private final Vertx vertx;
  private final Pool pool;
  private final Map<String, ChannelConfig> channels;
  private final Map<String, GatewayClient> clients;
  private final long querySeconds;
  private long timer = -1;
  private volatile boolean stopped;

  public GatewayRefunds(Vertx vertx, Pool pool, Map<String, ChannelConfig> channels, Map<String, GatewayClient> clients,
                        long querySeconds) {
    this.vertx = vertx;
    this.pool = pool;
    this.channels = channels;
    this.clients = clients;
    this.querySeconds = querySeconds;
  }

  /** The client refunding for {@code channel} at its gateway; null when its refunds go to its refundUrl. */
  private GatewayClient client(String channel) {
    ChannelConfig c = channels.get(channel);
    return c == null || c.kind() == ChannelKind.ORDERGATE ? null : clients.get(channel);
  }

  /**
   * The outbox route of REFUND_REQUESTED: null when the event's channel does not refund at its gateway (the
   * relay then posts it to the channel's refundUrl); else the refund asked of the gateway and its answer
   * applied (success = delivered). Only an exception still REFUND_PENDING is asked for: a redelivery after
   * the answer was applied (the relay stopped before marking) asks nothing again.
   */
  public Future<Void> deliver(OutboxEvent event) {
    JsonObject payload;
    String channel;
    GatewayClient client;
    try {
      payload = event.payload();
      channel = payload.getString("channel");
      client = client(channel);
    } catch (RuntimeException malformed) {
      // Never thrown at the relay: a failed delivery is retried and, in the end, DEAD.
      return Future.failedFuture(malformed);
    }
    if (client == null) {
      return null;
    }
    return pool.preparedQuery(RefundSql.STATUS).execute(Params.of(event.id())).compose(rows -> {
      String status = rows.size() == 0 ? null : rows.iterator().next().getString("status");
      if (!"REFUND_PENDING".equals(status)) {
        log.debug("refund {} on {}: exception is {}, nothing to ask", event.id(), channel, status);
        return Future.succeededFuture();
      }
      RefundRequest request = request(event, payload);
      return client.refund(request).transform(ar -> {
        if (ar.succeeded()) {
          return applyAnswer(channel, request, ar.result(), "refund answer");
        }
        if (ar.cause() instanceof GatewayFailure g && g.answered()) {
          return apply(pool, channel, event.id(), null, RefundState.FAILED, channel + RefundSql.GATEWAY_WORD,
              "refund " + event.id() + " refused by " + g.getMessage()).mapEmpty();
        }
        return Future.failedFuture(ar.cause());
      });
    });
  }

  private RefundRequest request(OutboxEvent event, JsonObject p) {
    ChannelConfig c = channels.get(p.getString("channel"));
    return new RefundRequest(event.id().toString(), p.getString("txnId"), p.getString("orderNo"),
        p.getLong("amountCents"), c.currency(), p.getString("reason"));
  }

  private Future<Void> applyAnswer(String channel, RefundRequest request, Refund answer, String how) {
    String detail = channel + " " + how + ": " + answer.gatewayStatus() + " for refund " + request.refundId()
        + (answer.gatewayRefundId() == null ? "" : " (gateway refund " + answer.gatewayRefundId() + ")");
    return apply(pool, channel, UUID.fromString(request.refundId()), null, answer.state(),
        channel + RefundSql.GATEWAY_WORD, detail).mapEmpty();
  }

  /**
   * One conditional move: REFUNDED from any unconfirmed state, REFUND_FAILED from pending or processing,
   * PENDING (accepted) to REFUND_PROCESSING from REFUND_PENDING only. Answers the exception's row (id, was,
   * moved), or null when the channel has no such refund request.
   */
  private static Future<Row> apply(SqlClient sql, String channel, UUID refundId, String txnId, RefundState state,
                                   String actor, String detail) {
    String to;
    String[] from;
    String event;
    switch (state) {
      case REFUNDED -> {
        to = "REFUNDED";
        from = NOT_CONFIRMED;
        event = "REFUND_CONFIRMED";
      }
      case FAILED -> {
        to = "REFUND_FAILED";
        from = UNSETTLED;
        event = "REFUND_FAILED";
      }
      default -> {
        to = "REFUND_PROCESSING";
        from = FROM_PENDING;
        event = "REFUND_ACCEPTED";
      }
    }
    return sql.preparedQuery(RefundSql.APPLY)
        .execute(Params.of(channel, refundId, txnId, to, from, event, actor, detail))
        .map(rows -> {
          Row row = rows.size() == 0 ? null : rows.iterator().next();
          if (row == null) {
            log.warn("channel {}: {} names no refund request of this channel ({})", channel, detail, refundId);
          } else if (row.getLong("moved") > 0) {
            (state == RefundState.FAILED ? log.atWarn() : log.atInfo()).log("exception {}: {} -> {} ({})",
                row.getLong("id"), row.getString("was"), to, detail);
          } else if (!to.equals(row.getString("was"))) {
            log.warn("exception {} is {}: the gateway's word \"{}\" changed nothing; kept in its history",
                row.getLong("id"), row.getString("was"), detail);
          }
          return row;
        });
  }

  /**
   * A verified refund notification ({@link Notification#refund()} set): recorded once per notification id in
   * channel_notifications and, in the same transaction, applied to its refund's exception. A notification
   * naming a refund that is not ordergate's (no uuid refund id of this channel) is recorded only. Answers
   * IGNORED (no order changed): the gateway gets its success answer.
   */
  public Future<CallbackResult> notified(String channel, Notification n) {
    Notification.RefundNotice r = n.refund();
    UUID refundId = uuid(r.refundId());
    boolean applies = (refundId != null || r.refundId() == null && r.txnId() != null) && r.state() != RefundState.PENDING;
    String detail = channel + " refund notification " + n.notificationId() + " (" + n.eventType() + "): "
        + r.gatewayStatus() + (r.refundId() == null ? " for txn " + r.txnId() : " for refund " + r.refundId())
        + (r.gatewayRefundId() == null ? "" : " (gateway refund " + r.gatewayRefundId() + ")");
    return Tx.run(pool, conn -> conn.preparedQuery(Sql.RECORD_NOTIFICATION)
            .execute(Params.of(channel, n.notificationId(), n.eventType(), n.orderNo(), n.payload()))
            .compose(recorded -> {
              boolean duplicate = recorded.rowCount() == 0;
              Future<Row> applied = applies
                  ? apply(conn, channel, refundId, refundId == null ? r.txnId() : null, r.state(),
                      channel + RefundSql.GATEWAY_WORD, detail)
                  : Future.succeededFuture(null);
              return applied.map(row -> new CallbackResult(CallbackOutcome.IGNORED, n.orderNo(), null, duplicate));
            }));
  }

  private static UUID uuid(String s) {
    if (s == null || s.length() != 36) {
      return null;
    }
    try {
      return UUID.fromString(s);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  // ---- the refund query ----------------------------------------------------------------------

  /** Starts the refund query timer (none when {@code refundQuerySeconds} is 0). */
  public void start() {
    if (querySeconds > 0) {
      timer = vertx.setTimer(querySeconds * 1000, t -> queryDue().onComplete(ar -> rearm()));
    }
  }

  public void stop() {
    stopped = true;
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
  }

  private void rearm() {
    if (!stopped) {
      timer = vertx.setTimer(querySeconds * 1000, t -> queryDue().onComplete(ar -> rearm()));
    }
  }

  /**
   * Asks each gateway about the refunds it accepted and has not settled for {@code refundQuerySeconds}
   * (at most {@value #QUERY_BATCH} per run, least recently asked first), one call at a time per run, and
   * applies the answers. Answers how many were asked. A gateway that cannot be reached is asked next time.
   */
  public Future<Integer> queryDue() {
    return pool.preparedQuery(RefundSql.DUE_QUERIES).execute(Params.of((double) querySeconds, QUERY_BATCH))
        .compose(rows -> {
          List<OutboxEvent> due = new ArrayList<>();
          rows.forEach(row -> due.add(OutboxEvent.of(row)));
          Future<Void> chain = Future.succeededFuture();
          for (OutboxEvent e : due) {
            chain = chain.compose(v -> query(e).recover(err -> {
              log.warn("refund {}: query failed ({}); asked again next time", e.id(), err.toString());
              return Future.succeededFuture();
            }));
          }
          return chain.map(due.size());
        })
        .recover(err -> {
          log.warn("refund query run failed: {}", err.toString());
          return Future.succeededFuture(0);
        });
  }

  private Future<Void> query(OutboxEvent event) {
    JsonObject payload = event.payload();
    String channel = payload.getString("channel");
    GatewayClient client = client(channel);
    if (client == null) {
      return Future.succeededFuture();
    }
    RefundRequest request = request(event, payload);
    return client.queryRefund(request).compose(answer -> applyAnswer(channel, request, answer, "refund query"));
  }
}
