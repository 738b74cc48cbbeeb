package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import dev.ordergate.logging.SafeMessageConverter;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The one validation step every request passes before any route sees it (mounted on the root
 * router right after the body handler): the path, every query parameter and every string of a
 * JSON or form body (keys and values, at any depth) must be valid UTF-8 without control
 * characters or lone surrogates, and within length bounds; a body, on any route, is a JSON
 * object (or a form where a route takes one). A violation is a 400 naming the field
 * ({@code items[0].sku}, {@code query limit}, {@code path}). The parsed JSON object is kept on the
 * context, and {@link Json#body} hands out only that one, so a route cannot read an unchecked body.
 * Per-field rules (identifier syntax, the field's own length limit, ranges) stay with the route.
 */
public final class InputGuard implements Handler<RoutingContext> {

  /** The longest string accepted anywhere (a route's own limit is usually lower). */
  public static final int MAX_STRING = 4000;
  static final int MAX_KEY = 64;
  /** Deep enough for a gateway event (a Stripe charge nests about ten levels), shallow enough to refuse a bomb. */
  static final int MAX_DEPTH = 32;
  static final int MAX_PATH = 2048;
  static final int MAX_QUERY_PARAMS = 32;
  static final int MAX_QUERY_VALUE = 256;
  /** The context key of the checked body (a {@link JsonObject}): any other body was refused already. */
  static final String BODY = "ordergate.checkedBody";
  private static final String FORM = "application/x-www-form-urlencoded";
  /** Set on every request the guard checked: {@link Json#body} then hands out only checked JSON. */
  static final String GUARDED = "ordergate.guarded";
  static final Rejection UNSUPPORTED =
      new Rejection(415, "UNSUPPORTED_MEDIA_TYPE", "request bodies are JSON (Content-Type: application/json)");

  private final RejectionLog rejections;
  /** The payment notifications: their bodies are JSON or forms, nothing else. */
  private final String callbacksPrefix;

  public InputGuard(RejectionLog rejections, String callbacksPrefix) {
    this.rejections = rejections;
    this.callbacksPrefix = callbacksPrefix;
  }

  /**
   * In front of the router: a URI with a malformed percent-escape ({@code %ZZ}, a trailing
   * {@code %}) is answered 400 here, because the router's own decoding would fail on it before
   * any handler ran.
   */
  public Handler<HttpServerRequest> beforeRouting(Handler<HttpServerRequest> router) {
    return req -> {
      String uri = req.uri();
      for (int i = uri.indexOf('%'); i >= 0; i = uri.indexOf('%', i + 1)) {
        if (i + 2 >= uri.length() || Character.digit(uri.charAt(i + 1), 16) < 0
            || Character.digit(uri.charAt(i + 2), 16) < 0) {
          rejections.record(req, 400, "INVALID_ENCODING", "the URI has a malformed percent-escape");
          req.response().setStatusCode(400).putHeader("Content-Type", "application/json")
              .end(new JsonObject().put("error", "INVALID_ENCODING")
                  .put("message", "the URI has a malformed percent-escape").encode());
          return;
        }
      }
      router.handle(req);
    };
  }

  @Override
  public void handle(RoutingContext ctx) {
    ctx.put(RejectionLog.KEY, rejections);
    ctx.put(GUARDED, Boolean.TRUE);
    text("path", decode("path", ctx.request().path(), false, StandardCharsets.UTF_8), MAX_PATH);
    String query = ctx.request().query();
    if (query != null && !query.isEmpty()) {
      checkQuery(query);
    }
    // Multipart bodies, and forms outside the payment notifications, were refused by ContentTypeGuard.
    String type = mediaType(ctx.request().getHeader("Content-Type"));
    Buffer body = rawBody(ctx);
    if (body != null && type.equals(FORM)) {
      // A form names its charset (Alipay's may be GBK): its own charset field, else the Content-Type's.
      Charset charset = formCharset(body, ctx.request().getHeader("Content-Type"));
      checkPairs(decodeStrictly("request body", body.getBytes(), charset), "form", MAX_STRING, charset);
    } else if (body != null) {
      checkBody(ctx, type, body, ctx.request().path().startsWith(callbacksPrefix));
    }
    ctx.next();
  }

  /** The request's body bytes (read by {@link RawBody} or the body handler), or null when empty. */
  static Buffer rawBody(RoutingContext ctx) {
    Buffer raw = RawBody.of(ctx);
    if (raw.length() == 0 && ctx.body() != null && ctx.body().buffer() != null) {
      raw = ctx.body().buffer();
    }
    return raw.length() == 0 ? null : raw;
  }

  private static void checkBody(RoutingContext ctx, String type, Buffer body, boolean notification) {
    String text = utf8("request body", body.getBytes());
    if (!type.isEmpty() && !type.equals("application/json") && !type.endsWith("+json")) {
      if (notification) {
        throw UNSUPPORTED;
      }
      // Not JSON: no route reads it as such (Json.body refuses it, 415); what reaches a channel or
      // the log is at least valid UTF-8 without NUL, which PostgreSQL cannot store.
      if (text.indexOf('\u0000') >= 0) {
        throw Rejection.badRequest("request body contains a NUL character");
      }
      return;
    }
    Object parsed;
    try {
      parsed = io.vertx.core.json.Json.decodeValue(text);
    } catch (DecodeException e) {
      throw new Rejection(400, "MALFORMED_JSON", "request body is not valid JSON");
    }
    if (!(parsed instanceof JsonObject obj)) {
      throw new Rejection(400, "MALFORMED_JSON", "request body must be a JSON object");
    }
    walk("", obj, 1);
    ctx.put(BODY, obj);
  }

  private static void walk(String where, Object node, int depth) {
    if (depth > MAX_DEPTH) {
      throw Rejection.badRequest((where.isEmpty() ? "body" : where) + " is nested more than " + MAX_DEPTH + " levels");
    }
    if (node instanceof JsonObject obj) {
      for (Map.Entry<String, Object> e : obj) {
        String name = where.isEmpty() ? e.getKey() : where + "." + e.getKey();
        text("field name " + printable(name), e.getKey(), MAX_KEY);
        walk(name, e.getValue(), depth + 1);
      }
    } else if (node instanceof JsonArray arr) {
      for (int i = 0; i < arr.size(); i++) {
        walk(where + "[" + i + "]", arr.getValue(i), depth + 1);
      }
    } else if (node instanceof String s) {
      text(where, s, MAX_STRING);
    }
  }

  private static void checkQuery(String query) {
    if (query.split("&", -1).length > MAX_QUERY_PARAMS) {
      throw Rejection.badRequest("at most " + MAX_QUERY_PARAMS + " query parameters");
    }
    checkPairs(query, "query", MAX_QUERY_VALUE, StandardCharsets.UTF_8);
  }

  /** {@code a=1&b=2} as in a query string or a form body: every name and value decoded and checked. */
  private static void checkPairs(String pairs, String what, int maxValue, Charset charset) {
    for (String pair : pairs.split("&", -1)) {
      int eq = pair.indexOf('=');
      String name = text(what + " parameter name",
          decode(what + " parameter name", eq < 0 ? pair : pair.substring(0, eq), true, charset), MAX_KEY);
      String field = what + " " + printable(name);
      text(field, eq < 0 ? "" : decode(field, pair.substring(eq + 1), true, charset), maxValue);
    }
  }

  /**
   * The check itself, for any string from a request: at most {@code max} characters, no control
   * character (C0, DEL, C1, U+2028/U+2029), no lone surrogate. Answers {@code s}.
   */
  public static String text(String field, String s, int max) {
    if (s.length() > max) {
      throw Rejection.badRequest(field + " must be at most " + max + " characters");
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (SafeMessageConverter.isControl(c)) {
        throw Rejection.badRequest(field + " contains a control character (U+" + hex(c) + ")");
      }
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw Rejection.badRequest(field + " contains a lone surrogate (U+" + hex(c) + ")");
      }
    }
    return s;
  }

  /** Strict percent-decoding in {@code charset} ({@code plus}: '+' is a space, as in query strings). */
  static String decode(String field, String raw, boolean plus, Charset charset) {
    if (raw.indexOf('%') < 0 && (!plus || raw.indexOf('+') < 0)) {
      return raw;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        int hi = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
        int lo = hi >= 0 ? Character.digit(raw.charAt(i + 2), 16) : -1;
        if (lo < 0) {
          throw new Rejection(400, "INVALID_ENCODING", field + " has a malformed percent-escape");
        }
        bytes.write(hi * 16 + lo);
        i += 2;
      } else if (plus && c == '+') {
        bytes.write(' ');
      } else {
        byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        bytes.write(b, 0, b.length);
      }
    }
    return decodeStrictly(field, bytes.toByteArray(), charset);
  }

  static String utf8(String field, byte[] bytes) {
    return decodeStrictly(field, bytes, StandardCharsets.UTF_8);
  }

  private static String decodeStrictly(String field, byte[] bytes, Charset charset) {
    try {
      return charset.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new Rejection(400, "INVALID_ENCODING", field + " is not valid " + charset.name());
    }
  }

  /** The charset a form names in its own {@code charset} field, else in the Content-Type; else UTF-8. */
  private static Charset formCharset(Buffer body, String contentType) {
    String name = null;
    for (String pair : body.toString(StandardCharsets.ISO_8859_1).split("&")) {
      if (pair.startsWith("charset=") || pair.startsWith("_charset_=")) {
        name = pair.substring(pair.indexOf('=') + 1);
        break;
      }
    }
    if (name == null && contentType != null) {
      int at = contentType.toLowerCase(java.util.Locale.ROOT).indexOf("charset=");
      if (at >= 0) {
        name = contentType.substring(at + "charset=".length()).split(";")[0].trim().replace("\"", "");
      }
    }
    if (name == null || name.isEmpty()) {
      return StandardCharsets.UTF_8;
    }
    try {
      return Charset.forName(name);
    } catch (IllegalArgumentException e) {
      throw new Rejection(400, "INVALID_ENCODING", "the form names an unknown charset");
    }
  }

  private static String mediaType(String header) {
    if (header == null) {
      return "";
    }
    int semi = header.indexOf(';');
    return (semi < 0 ? header : header.substring(0, semi)).trim().toLowerCase(java.util.Locale.ROOT);
  }

  /** A field name fit for an error message: control characters shown as escapes, and short. */
  private static String printable(String name) {
    String safe = SafeMessageConverter.escape(name);
    return safe.length() > 80 ? safe.substring(0, 80) + "..." : safe;
  }

  private static String hex(char c) {
    return String.format("%04X", (int) c);
  }
}
