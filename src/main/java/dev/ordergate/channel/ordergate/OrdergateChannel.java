package dev.ordergate.channel.ordergate;

import dev.ordergate.channel.Answer;
import dev.ordergate.channel.BaseChannel;
import dev.ordergate.channel.ChannelRejection;
import dev.ordergate.channel.Fields;
import dev.ordergate.channel.Inbound;
import dev.ordergate.channel.Notification;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.time.Clock;

/**
 * ordergate's own format: a signed JSON {@code {"txnId","orderNo","amountCents","status"}} (plus
 * optional {@code currency} and {@code notificationId}), answered 200 with the gate's outcome as JSON;
 * refused requests get ordergate's {@code {"error","message"}} with 401 or 400.
 */
public final class OrdergateChannel extends BaseChannel<OrdergateSettings> {

  public OrdergateChannel(ChannelConfig config, Clock clock) {
    super(config, clock);
  }

  @Override
  public Notification receive(Inbound request) {
    byte[] raw = request.body();
    boolean legacy = settings.legacyV1Until() != null && clock.instant().isBefore(settings.legacyV1Until());
    if (!OrdergateSignature.verify(request.header(OrdergateSignature.HEADER), raw, config.name(), settings.secrets(),
        clock.instant().getEpochSecond(), config.toleranceSeconds(), legacy)) {
      throw ChannelRejection.badSignature("signature missing, invalid or outside the time tolerance");
    }
    JsonObject body = Fields.object(raw);
    String currency = body.getValue("currency") == null ? config.currency()
        : Fields.currency(Fields.string(body, "currency", 3, true), "currency");
    String notificationId = Fields.string(body, "notificationId", 64, false);
    String status = Fields.string(body, "status", 32, true);
    String orderNo = Fields.id(body, "orderNo");
    PaymentCallback cb = new PaymentCallback(config.name(), Fields.id(body, "txnId"), orderNo,
        Fields.amount(body, "amountCents"), status, notificationId,
        Notification.bounded(new String(raw, StandardCharsets.UTF_8)), currency);
    return new Notification(notificationId, status, orderNo, cb, cb.payload());
  }

  @Override
  public Answer processed(CallbackResult result) {
    return Answer.json(200, new JsonObject()
        .put("outcome", result.outcome().name())
        .put("orderNo", result.orderNo())
        .put("orderStatus", result.orderStatus() == null ? null : result.orderStatus().name())
        .put("duplicate", result.duplicate()).encode());
  }

  @Override
  public Answer rejected(ChannelRejection rejection) {
    // ordergate's own codes, as the API contract lists them.
    String code = !rejection.code().equals("MALFORMED") ? rejection.code()
        : rejection.unreadable() ? "MALFORMED_JSON" : "VALIDATION_FAILED";
    return Answer.error(rejection.status(), code, rejection.getMessage());
  }

  @Override
  public Answer retry(int status, String code, String message) {
    return Answer.error(status, code, message);
  }
}
