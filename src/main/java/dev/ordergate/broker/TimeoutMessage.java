package dev.ordergate.broker;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.regex.Pattern;

/**
 * The body of a timeout message: the order and its expiry (epoch ms, the database's clock at
 * creation). Only a routing hint: the consumer reads the expiry from the database before it acts.
 */
record TimeoutMessage(String orderNo, long expiresAtMs) {

  /** The API's identifier rule for order numbers: anything else cannot name an order (and could fail a batch). */
  private static final Pattern ORDER_NO = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  Buffer toBuffer() {
    return new JsonObject().put("orderNo", orderNo).put("expiresAt", expiresAtMs).toBuffer();
  }

  /** Throws IllegalArgumentException for a body that is not a timeout message (a poison message). */
  static TimeoutMessage parse(Buffer body) {
    JsonObject json;
    try {
      json = body == null ? null : new JsonObject(body);
    } catch (DecodeException | ClassCastException e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage());
    }
    if (json == null || !(json.getValue("orderNo") instanceof String no) || !ORDER_NO.matcher(no).matches()
        || !(json.getValue("expiresAt") instanceof Number at)) {
      throw new IllegalArgumentException("not a timeout message: " + (body == null ? "empty" : abbreviate(body)));
    }
    return new TimeoutMessage(no, at.longValue());
  }

  private static String abbreviate(Buffer body) {
    String s = body.toString();
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }
}
