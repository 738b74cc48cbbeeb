package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;

/**
 * Reads a request body as raw bytes, at most {@code limit} of them (413 above), with no form decoding
 * and no file uploads: payment notifications are verified over exactly the bytes that were signed, and
 * a route that takes a form (Alipay's notifications) parses those bytes itself. {@link #of} returns them.
 */
public final class RawBody implements Handler<RoutingContext> {

  private static final String KEY = "ordergate.rawBody";

  private final long limit;

  public RawBody(long limit) {
    this.limit = limit;
  }

  /** The body read by this handler (empty when there was none). */
  public static Buffer of(RoutingContext ctx) {
    Buffer b = ctx.get(KEY);
    return b == null ? Buffer.buffer() : b;
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    String length = req.getHeader("Content-Length");
    if (length != null && (!length.matches("\\d{1,18}") || Long.parseLong(length) > limit)) {
      ctx.fail(new Rejection(413, "PAYLOAD_TOO_LARGE", "request body is over the limit of " + limit + " bytes"));
      return;
    }
    Buffer body = Buffer.buffer();
    boolean[] failed = {false};
    req.handler(chunk -> {
      if (failed[0]) {
        return;
      }
      if (body.length() + chunk.length() > limit) {
        failed[0] = true;
        ctx.fail(new Rejection(413, "PAYLOAD_TOO_LARGE", "request body is over the limit of " + limit + " bytes"));
        return;
      }
      body.appendBuffer(chunk);
    });
    req.exceptionHandler(err -> {
      if (!failed[0]) {
        failed[0] = true;
        ctx.fail(new Rejection(400, "BAD_REQUEST", "the request body could not be read"));
      }
    });
    req.endHandler(v -> {
      if (!failed[0]) {
        ctx.put(KEY, body);
        ctx.next();
      }
    });
    req.resume();
  }
}
