package dev.ordergate.http;

import dev.ordergate.domain.Rejection;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

/**
 * The service credential of the shop's backend on {@code /api/orders}, {@code /api/inventory} and
 * {@code /api/coupons}: {@code Authorization: Bearer <key>} with a key from {@code api.keys} (a list,
 * for rotation). Every key is compared, in constant time, so the answer's timing tells nothing.
 */
public final class ApiAuth implements Handler<RoutingContext> {

  private final List<byte[]> expected;

  public ApiAuth(List<String> keys) {
    this.expected = keys.stream().map(k -> ("Bearer " + k).getBytes(StandardCharsets.UTF_8)).toList();
  }

  @Override
  public void handle(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    byte[] given = header == null ? new byte[0] : header.getBytes(StandardCharsets.UTF_8);
    boolean ok = false;
    for (byte[] key : expected) {
      ok |= MessageDigest.isEqual(key, given);
    }
    if (!ok) {
      throw new Rejection(401, "UNAUTHORIZED", "this route needs Authorization: Bearer <one of api.keys>");
    }
    ctx.next();
  }
}
