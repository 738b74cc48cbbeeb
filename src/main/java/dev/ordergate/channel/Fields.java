package dev.ordergate.channel;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** Strict reads of verified notification fields; a bad one is {@link ChannelRejection#malformed}. */
public final class Fields {

  /** Order numbers and transaction ids, as the rest of ordergate accepts them. */
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");

  private Fields() {
  }

  public static JsonObject object(byte[] raw) {
    try {
      Object parsed = io.vertx.core.json.Json.decodeValue(new String(raw, StandardCharsets.UTF_8));
      if (parsed instanceof JsonObject obj) {
        return obj;
      }
    } catch (DecodeException e) {
      throw ChannelRejection.unreadable("body is not valid JSON");
    }
    throw ChannelRejection.unreadable("body must be a JSON object");
  }

  public static JsonObject object(JsonObject o, String key) {
    Object v = o.getValue(key);
    if (!(v instanceof JsonObject obj)) {
      throw ChannelRejection.malformed(key + " must be an object");
    }
    return obj;
  }

  /** A non-blank string of at most {@code maxLen}; null when absent and not required. */
  public static String string(JsonObject o, String key, int maxLen, boolean required) {
    Object v = o.getValue(key);
    if (v == null) {
      if (required) {
        throw ChannelRejection.malformed(key + " is required");
      }
      return null;
    }
    if (!(v instanceof String s) || s.isBlank() || s.length() > maxLen) {
      throw ChannelRejection.malformed(key + " must be a non-empty string of at most " + maxLen + " characters");
    }
    return s;
  }

  public static String id(String value, String key) {
    if (value == null || !ID.matcher(value).matches()) {
      throw ChannelRejection.malformed(key + " must be 1-64 of letters, digits and . _ : -");
    }
    return value;
  }

  public static String id(JsonObject o, String key) {
    return id(string(o, key, 64, true), key);
  }

  /** A whole number of minor units between 0 and 10^13. */
  public static long amount(JsonObject o, String key) {
    Object v = o.getValue(key);
    if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < 0
        || ((Number) v).longValue() > 10_000_000_000_000L) {
      throw ChannelRejection.malformed(key + " must be a whole number of minor units, 0 or more");
    }
    return ((Number) v).longValue();
  }

  /** ISO 4217, upper-cased (Stripe sends lower case). */
  public static String currency(String value, String key) {
    String c = value == null ? null : value.toUpperCase(java.util.Locale.ROOT);
    if (c == null || !CURRENCY.matcher(c).matches()) {
      throw ChannelRejection.malformed(key + " must be an ISO 4217 currency code");
    }
    return c;
  }
}
