package dev.ordergate.outbox;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * A real local HTTP endpoint for the relay to call (refund URL, webhook sinks), on a Vert.x of
 * its own. It records every request in arrival order and answers what {@link #responder} says:
 * a status code, or {@link #HANG} to hold the request without answering.
 */
final class FakeEndpoint implements AutoCloseable {

  static final int HANG = -1;

  record Received(int index, String path, String idempotencyKey, JsonObject body) {}

  /** The status for the {@code n}-th request (1-based) to {@code path}. */
  interface Responder {
    int status(String path, int n, JsonObject body);
  }

  private final Vertx vertx = Vertx.vertx();
  private final HttpServer server;
  final List<Received> received = new CopyOnWriteArrayList<>();
  final List<HttpServerRequest> held = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicInteger> perPath = new ConcurrentHashMap<>();
  volatile Responder responder = (path, n, body) -> 200;

  FakeEndpoint() {
    server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(buf -> {
      JsonObject body = buf.length() == 0 ? new JsonObject() : buf.toJsonObject();
      int n = perPath.computeIfAbsent(req.path(), p -> new AtomicInteger()).incrementAndGet();
      synchronized (received) {
        received.add(new Received(received.size(), req.path(), req.getHeader("Idempotency-Key"), body));
      }
      int status = responder.status(req.path(), n, body);
      if (status == HANG) {
        held.add(req);
      } else {
        req.response().setStatusCode(status).end();
      }
    })).listen(0, "127.0.0.1").await();
  }

  String url(String path) {
    return "http://127.0.0.1:" + server.actualPort() + path;
  }

  List<Received> at(String path) {
    return received.stream().filter(r -> r.path().equals(path)).toList();
  }

  void reset() {
    responder = (path, n, body) -> 200;
    received.clear();
    perPath.clear();
    held.clear();
  }

  /** Waits (generously: this is not a timing assertion) until {@code condition} holds. */
  static void eventually(String what, BooleanSupplier condition) {
    if (!within(java.time.Duration.ofSeconds(30), condition)) {
      throw new AssertionError("timed out waiting until " + what);
    }
  }

  /** Whether {@code condition} holds within {@code limit} (polled every 10 ms). */
  static boolean within(java.time.Duration limit, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    return true;
  }

  @Override
  public void close() {
    vertx.close().await();
  }
}
