package dev.ordergate.payment;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.validation.ResponseValidator;
import io.vertx.openapi.validation.ValidatableResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** The answers as {@code openapi.json} documents them (vertx-openapi's validator), for the payment tests. */
final class Contract {

  private final ResponseValidator validator;

  Contract(Vertx vertx) {
    try {
      validator = ResponseValidator.create(vertx, OpenAPIContract.from(vertx,
          new JsonObject(Files.readString(Path.of("src/main/resources/openapi.json")))).await());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code resp}, after checking it against operation {@code operationId} (fails the test otherwise). */
  HttpResponse<Buffer> conforms(String operationId, HttpResponse<Buffer> resp) {
    Map<String, String> headers = new HashMap<>();
    resp.headers().forEach(h -> headers.put(h.getKey(), h.getValue()));
    validator.validate(ValidatableResponse.create(resp.statusCode(), headers, resp.body(), resp.getHeader("Content-Type")),
        operationId).await();
    return resp;
  }
}
