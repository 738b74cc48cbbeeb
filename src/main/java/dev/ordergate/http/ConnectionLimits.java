package dev.ordergate.http;

import dev.ordergate.config.ServerConfig;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The listener's limits ({@link ServerConfig}): header and request-line sizes and the idle timeout
 * through {@link HttpServerOptions}; the rest per connection here. A connection over
 * {@code maxConnections} is closed at once. A request head must be complete within
 * {@code headerTimeoutMs} of the connection opening (or of the previous answer ending): an idle
 * timeout alone would never cut off a client that trickles one header byte a second. A request
 * whose body is still incomplete {@code requestTimeoutMs} after its head is answered 408 and its
 * connection closed.
 */
public final class ConnectionLimits {

  private final Vertx vertx;
  private final ServerConfig config;
  private final AtomicInteger open = new AtomicInteger();
  private final Map<HttpConnection, State> states = new ConcurrentHashMap<>();
  private final Counter refused;
  private final Counter headerTimeouts;
  private final Counter requestTimeouts;

  /** One connection: requests being answered, and the timer that closes it if no head arrives. */
  private static final class State {
    int active;
    long headTimer = -1;
  }

  public ConnectionLimits(Vertx vertx, ServerConfig config, MeterRegistry registry) {
    this.vertx = vertx;
    this.config = config;
    this.refused = counter(registry, "max_connections");
    this.headerTimeouts = counter(registry, "header_timeout");
    this.requestTimeouts = counter(registry, "request_timeout");
    Gauge.builder("ordergate.http.connections.open", open, AtomicInteger::get)
        .description("Connections open on the main listener, counted against http.maxConnections")
        .register(registry);
  }

  private static Counter counter(MeterRegistry registry, String reason) {
    return Counter.builder("ordergate.http.connections.cut")
        .description("Connections closed by a server limit").tag("reason", reason).register(registry);
  }

  public HttpServerOptions options(int port, String host) {
    return new HttpServerOptions().setPort(port).setHost(host)
        .setMaxHeaderSize(config.maxHeaderBytes())
        .setMaxInitialLineLength(config.maxInitialLineBytes())
        .setIdleTimeoutUnit(TimeUnit.MILLISECONDS)
        .setIdleTimeout((int) config.idleTimeoutMs())
        // No cleartext HTTP/2: with it on, a connection is only handed over once its protocol is
        // known, so the per-connection limits below would not see a client that sends nothing.
        .setHttp2ClearTextEnabled(false);
  }

  /** For {@code HttpServer.connectionHandler}. */
  public void connection(HttpConnection conn) {
    if (open.incrementAndGet() > config.maxConnections()) {
      refused.increment();
      conn.closeHandler(v -> open.decrementAndGet());
      conn.close();
      return;
    }
    State state = new State();
    states.put(conn, state);
    conn.closeHandler(v -> {
      open.decrementAndGet();
      State s = states.remove(conn);
      if (s != null && s.headTimer >= 0) {
        vertx.cancelTimer(s.headTimer);
      }
    });
    armHead(conn, state);
  }

  /** Wraps the router: tracks each request on its connection. */
  public Handler<HttpServerRequest> requests(Handler<HttpServerRequest> next) {
    return req -> {
      HttpConnection conn = req.connection();
      State state = states.get(conn);
      if (state == null) {
        next.handle(req);
        return;
      }
      state.active++;
      if (state.headTimer >= 0) {
        vertx.cancelTimer(state.headTimer);
        state.headTimer = -1;
      }
      long requestTimer = vertx.setTimer(config.requestTimeoutMs(), t -> {
        // A route may own the response's close handler (the callbacks do): check, do not listen.
        if (!req.isEnded() && !req.response().ended() && !req.response().closed()) {
          requestTimeouts.increment();
          req.response().setStatusCode(408).putHeader("Content-Type", "application/json")
              .putHeader("Connection", "close")
              .end(new JsonObject().put("error", "REQUEST_TIMEOUT")
                  .put("message", "the request body did not arrive in time").encode())
              .onComplete(v -> conn.close());
        }
      });
      req.response().endHandler(v -> {
        vertx.cancelTimer(requestTimer);
        if (--state.active == 0) {
          armHead(conn, state);
        }
      });
      next.handle(req);
    };
  }

  private void armHead(HttpConnection conn, State state) {
    state.headTimer = vertx.setTimer(config.headerTimeoutMs(), t -> {
      state.headTimer = -1;
      if (state.active == 0) {
        headerTimeouts.increment();
        conn.close();
      }
    });
  }
}
