package dev.ordergate.channel;

import dev.ordergate.db.Params;
import dev.ordergate.db.Sql;
import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.domain.CallbackResult;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records a verified notification that is not a payment, once per (channel, notification id), and
 * answers IGNORED: it changes no order, and the gateway gets its success answer and stops retrying.
 */
public final class NotificationLog {

  private static final Logger log = LoggerFactory.getLogger(NotificationLog.class);

  private final Pool pool;

  public NotificationLog(Pool pool) {
    this.pool = pool;
  }

  public Future<CallbackResult> record(String channel, Notification n) {
    return pool.preparedQuery(Sql.RECORD_NOTIFICATION)
        .execute(Params.of(channel, n.notificationId(), n.eventType(), n.orderNo(), n.payload()))
        .map(rows -> {
          boolean duplicate = rows.rowCount() == 0;
          if (!duplicate) {
            log.info("channel {}: verified {} notification {} (order {}) recorded; not a payment",
                channel, n.eventType(), n.notificationId(), n.orderNo());
          }
          return new CallbackResult(CallbackOutcome.IGNORED, n.orderNo(), null, duplicate);
        });
  }
}
