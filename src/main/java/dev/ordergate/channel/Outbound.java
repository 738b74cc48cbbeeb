package dev.ordergate.channel;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * What every gateway client shares: one WebClient, a hard deadline on each call (connect included),
 * and the meters {@code ordergate_gateway_calls_total{channel,op,result}} (result ok, gateway_error,
 * unreachable) and {@code ordergate_gateway_call_seconds{channel,op}}.
 */
public final class Outbound {

  private final WebClient client;
  private final long timeoutMs;
  private final MeterRegistry registry;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();

  public Outbound(WebClient client, long timeoutMs, MeterRegistry registry) {
    this.client = client;
    this.timeoutMs = timeoutMs;
    this.registry = registry;
  }

  public HttpRequest<Buffer> request(HttpMethod method, String absoluteUrl) {
    return client.requestAbs(method, absoluteUrl).timeout(timeoutMs).connectTimeout(timeoutMs);
  }

  /** Runs one call, maps transport failures to {@link GatewayFailure} and meters it. */
  public <T> Future<T> call(String channel, String op, Supplier<Future<T>> work) {
    long t0 = System.nanoTime();
    Future<T> f;
    try {
      f = work.get();
    } catch (RuntimeException e) {
      f = Future.failedFuture(e);
    }
    return f.recover(err -> Future.failedFuture(err instanceof GatewayFailure g ? g
            : GatewayFailure.unreachable(channel, err instanceof TimeoutException
                || String.valueOf(err.getMessage()).contains("timeout") ? "TIMEOUT" : "UNREACHABLE", err.toString())))
        .andThen(ar -> {
          String result = ar.succeeded() ? "ok"
              : ((GatewayFailure) ar.cause()).answered() ? "gateway_error" : "unreachable";
          counters.computeIfAbsent(channel + '\0' + op + '\0' + result, k -> Counter.builder("ordergate_gateway_calls_total")
              .description("Outbound gateway calls by channel, operation and result")
              .tags("channel", channel, "op", op, "result", result).register(registry)).increment();
          timers.computeIfAbsent(channel + '\0' + op, k -> Timer.builder("ordergate_gateway_call_seconds")
              .description("Outbound gateway call time").tags("channel", channel, "op", op).register(registry))
              .record(System.nanoTime() - t0, java.util.concurrent.TimeUnit.NANOSECONDS);
        });
  }

  /** A 5xx is the gateway being unavailable, whatever its body says: the call may be retried. */
  public static void rejectServerError(String channel, HttpResponse<Buffer> resp) {
    if (resp.statusCode() >= 500) {
      throw GatewayFailure.unreachable(channel, "HTTP_" + resp.statusCode(), null);
    }
  }
}
