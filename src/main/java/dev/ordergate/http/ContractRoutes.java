package dev.ordergate.http;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;

import java.io.IOException;
import java.io.InputStream;

/**
 * {@code GET /openapi.json}: the API contract, {@code src/main/resources/openapi.json}, as kept in
 * the repository (ContractTest checks the service's real answers against it). Read once, off the
 * event loop.
 */
public final class ContractRoutes {

  public static final String RESOURCE = "/openapi.json";

  private Future<Buffer> document;

  public void mount(Vertx vertx, Router root) {
    root.get("/openapi.json").handler(ctx -> document(vertx)
        .onSuccess(doc -> ctx.response().putHeader("Content-Type", "application/json").end(doc))
        .onFailure(ctx::fail));
  }

  private Future<Buffer> document(Vertx vertx) {
    if (document == null || document.failed()) {
      document = vertx.executeBlocking(() -> {
        try (InputStream in = ContractRoutes.class.getResourceAsStream(RESOURCE)) {
          if (in == null) {
            throw new IOException(RESOURCE + " is missing from the jar");
          }
          return Buffer.buffer(in.readAllBytes());
        }
      });
    }
    return document;
  }
}
