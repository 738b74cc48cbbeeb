package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Request parsing and strict field validation: a client mistake is a 400 naming the field. */
final class Json {

  /** Order numbers, SKUs, coupon codes, txn ids (compiled once: this runs on every callback). */
  private static final java.util.regex.Pattern ID = java.util.regex.Pattern.compile("[A-Za-z0-9._:-]+");

  private Json() {
  }

  /**
   * The request's JSON object as {@link InputGuard} checked it; without the guard (only the fuzz
   * test's unguarded twin runs so) it is parsed here unchecked.
   */
  static JsonObject body(RoutingContext ctx) {
    Object checked = ctx.get(InputGuard.BODY);
    if (checked instanceof JsonObject obj) {
      return obj;
    }
    if (ctx.get(InputGuard.GUARDED) != null && InputGuard.rawBody(ctx) != null) {
      // A body the guard did not take for JSON (another media type): never parsed unchecked.
      throw InputGuard.UNSUPPORTED;
    }
    return object(InputGuard.rawBody(ctx));
  }

  /** A JSON object from raw bytes (a callback's verified body), or a 400. */
  static JsonObject object(io.vertx.core.buffer.Buffer raw) {
    if (raw == null || raw.length() == 0) {
      throw new Rejection(400, "MALFORMED_JSON", "request body must be a JSON object");
    }
    try {
      Object parsed = io.vertx.core.json.Json.decodeValue(raw);
      if (parsed instanceof JsonObject obj) {
        return obj;
      }
    } catch (DecodeException e) {
      throw new Rejection(400, "MALFORMED_JSON", "request body is not valid JSON");
    }
    throw new Rejection(400, "MALFORMED_JSON", "request body must be a JSON object");
  }

  /** The body when there is one, else an empty object (for routes whose body is optional). */
  static JsonObject optionalBody(RoutingContext ctx) {
    return InputGuard.rawBody(ctx) != null ? body(ctx) : new JsonObject();
  }

  /** A query parameter ({@link InputGuard} checked the query string already), or null. */
  static String query(RoutingContext ctx, String name) {
    return ctx.queryParams().get(name);
  }

  static void send(RoutingContext ctx, int status, Object body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
        .end(body instanceof JsonObject o ? o.encode() : body instanceof JsonArray a ? a.encode() : String.valueOf(body));
  }

  static String string(JsonObject o, String key, int maxLen, boolean required) {
    Object v = o.getValue(key);
    if (v == null) {
      if (required) {
        throw Rejection.badRequest(key + " is required");
      }
      return null;
    }
    if (!(v instanceof String s) || s.isBlank()) {
      throw Rejection.badRequest(key + " must be a non-empty string");
    }
    if (s.length() > maxLen) {
      throw Rejection.badRequest(key + " must be at most " + maxLen + " characters");
    }
    return s;
  }

  /** A token-like identifier: order numbers, SKUs, coupon codes, txn ids. */
  static String id(JsonObject o, String key, boolean required) {
    String s = string(o, key, 64, required);
    if (s != null && !ID.matcher(s).matches()) {
      throw Rejection.badRequest(key + " may only contain letters, digits and . _ : -");
    }
    return s;
  }

  static Long integer(JsonObject o, String key, long min, long max, boolean required) {
    Object v = o.getValue(key);
    if (v == null) {
      if (required) {
        throw Rejection.badRequest(key + " is required");
      }
      return null;
    }
    if (!(v instanceof Integer || v instanceof Long)) {
      throw Rejection.badRequest(key + " must be a whole number");
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw Rejection.badRequest(key + " must be between " + min + " and " + max);
    }
    return n;
  }

  static JsonArray array(JsonObject o, String key, int minSize, int maxSize) {
    Object v = o.getValue(key);
    if (!(v instanceof JsonArray a)) {
      throw Rejection.badRequest(key + " must be a list");
    }
    if (a.size() < minSize || a.size() > maxSize) {
      throw Rejection.badRequest(key + " must have " + minSize + " to " + maxSize + " entries");
    }
    return a;
  }

  static String pathId(RoutingContext ctx, String param) {
    String v = ctx.pathParam(param);
    if (v == null || v.isEmpty() || v.length() > 64 || !ID.matcher(v).matches()) {
      throw Rejection.badRequest(param + " is not a valid identifier");
    }
    return v;
  }
}
