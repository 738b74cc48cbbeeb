package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

import java.util.Locale;

/**
 * Runs before any body is read: no route takes file uploads, so a multipart body is refused with 415
 * before a byte of it is stored anywhere; a form body is refused on every route except those that parse
 * forms from the raw bytes themselves (payment notifications). Nothing is decoded here.
 */
public final class ContentTypeGuard implements Handler<RoutingContext> {

  private final String formPathPrefix;

  /** {@code formPathPrefix}: the routes that take {@code application/x-www-form-urlencoded}. */
  public ContentTypeGuard(String formPathPrefix) {
    this.formPathPrefix = formPathPrefix;
  }

  @Override
  public void handle(RoutingContext ctx) {
    String type = ctx.request().getHeader("Content-Type");
    if (type != null) {
      String t = type.toLowerCase(Locale.ROOT).trim();
      if (t.startsWith("multipart/")) {
        throw new Rejection(415, "UNSUPPORTED_MEDIA_TYPE", "no route takes multipart bodies or file uploads");
      }
      if (t.startsWith("application/x-www-form-urlencoded") && !ctx.request().path().startsWith(formPathPrefix)) {
        throw new Rejection(415, "UNSUPPORTED_MEDIA_TYPE", "this route takes application/json");
      }
    }
    ctx.next();
  }
}
