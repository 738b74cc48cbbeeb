package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Map;
import java.util.function.Function;

/**
 * Keyset pagination for the admin lists. A list is read newest first with its key below the
 * cursor, one row more than asked for; when that row exists the answer (still the JSON array)
 * carries {@code Link: <same path and filters&after=CURSOR&limit=N>; rel="next"} (RFC 8288). The
 * cursor is opaque to clients: the list's name and the last key, base64url.
 *
 * <p>Every row that existed when the walk began is visited exactly once, in key order, whatever
 * arrives meanwhile: a page reads only keys below the previous page's last key, and keys only grow.
 * A row that commits during the walk with a key below the cursor (a transaction that took its id
 * earlier and committed later), or that enters a status filter meanwhile, is not visited by that
 * walk; the next walk from the first page sees it.
 */
final class Page {

  private Page() {
  }

  /** The key under {@code after} for the list {@code list}, or null for the first page. */
  static String after(RoutingContext ctx, String list) {
    String raw = ctx.queryParams().get("after");
    if (raw == null) {
      return null;
    }
    String decoded;
    try {
      decoded = new String(Base64.getUrlDecoder().decode(raw), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw Rejection.badRequest("after is not a cursor from this list's Link header");
    }
    if (!decoded.startsWith(list + ":") || decoded.length() == list.length() + 1) {
      throw Rejection.badRequest("after is not a cursor from this list's Link header");
    }
    return decoded.substring(list.length() + 1);
  }

  /** A numeric key (ids, seq). */
  static Long afterId(RoutingContext ctx, String list) {
    String key = after(ctx, list);
    if (key == null) {
      return null;
    }
    if (!key.matches("\\d{1,18}")) {
      throw Rejection.badRequest("after is not a cursor from this list's Link header");
    }
    return Long.parseLong(key);
  }

  /**
   * A time filter: an ISO instant ({@code 2026-12-01T10:00:00Z}) or a date (UTC). A date in
   * {@code to} (exclusive) means the end of that day.
   */
  static OffsetDateTime time(RoutingContext ctx, String param) {
    String raw = ctx.queryParams().get(param);
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    try {
      if (raw.length() == 10) {
        LocalDate day = LocalDate.parse(raw);
        return (param.equals("to") ? day.plusDays(1) : day).atStartOfDay().atOffset(ZoneOffset.UTC);
      }
      return OffsetDateTime.parse(raw);
    } catch (DateTimeParseException e) {
      throw Rejection.badRequest(param + " must be a date (2026-12-01) or an instant (2026-12-01T10:00:00Z)");
    }
  }

  /** An optional filter that must be one of {@code allowed}. */
  static String oneOf(RoutingContext ctx, String param, java.util.Collection<String> allowed) {
    String raw = ctx.queryParams().get(param);
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    if (!allowed.contains(raw)) {
      throw Rejection.badRequest(param + " must be one of " + allowed);
    }
    return raw;
  }

  /**
   * Answers {@code rows} (read with {@code limit + 1}): at most {@code limit} of them, with the
   * next link when there were more. {@code key} gives a row's key.
   */
  static void send(RoutingContext ctx, String list, JsonArray rows, int limit, Function<JsonObject, Object> key) {
    if (rows.size() > limit) {
      JsonArray page = new JsonArray(rows.getList().subList(0, limit));
      String cursor = Base64.getUrlEncoder().withoutPadding().encodeToString(
          (list + ":" + key.apply(page.getJsonObject(limit - 1))).getBytes(StandardCharsets.UTF_8));
      StringBuilder next = new StringBuilder(ctx.request().path()).append('?');
      for (Map.Entry<String, String> p : ctx.queryParams()) {
        if (!p.getKey().equals("after") && !p.getKey().equals("limit")) {
          next.append(enc(p.getKey())).append('=').append(enc(p.getValue())).append('&');
        }
      }
      next.append("after=").append(cursor).append("&limit=").append(limit);
      ctx.response().putHeader("Link", "<" + next + ">; rel=\"next\"");
      rows = page;
    }
    Json.send(ctx, 200, rows);
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
