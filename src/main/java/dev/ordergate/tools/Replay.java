package dev.ordergate.tools;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

import dev.ordergate.http.CallbackRoutes;
import dev.ordergate.sim.Delivery;
import dev.ordergate.sim.Gateway;
import dev.ordergate.sim.Payment;

import java.net.URI;
import java.util.IdentityHashMap;
import java.util.Map;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fires replay callbacks at a service with the Vert.x HTTP client: a pool of exactly
 * {@code connections} keep-alive HTTP/1.1 connections, no pipelining, each callback signed at send
 * time. Closed loop: {@code connections} senders, each sending its next callback when the previous
 * answer arrived. Open loop: callbacks are due at {@code i / rate} seconds (or at their file
 * offsets) whatever the answers do, and latency is measured from when each was due, so a slow
 * server is not hidden by the load generator slowing down with it (coordinated omission).
 */
public final class Replay {

  private static final CharSequence CONTENT_TYPE = HttpHeaders.createOptimized("Content-Type");
  private static final CharSequence APPLICATION_JSON = HttpHeaders.createOptimized("application/json");
  private static final CharSequence SIGNATURE = HttpHeaders.createOptimized(OrdergateSignature.HEADER);
  private static final String OK = "200";
  private static final String OUTCOME_FIELD = "\"outcome\":\"";
  private static final String DUPLICATE_TRUE = "\"duplicate\":true";
  private static final String OUTCOME_HEADER = CallbackRoutes.OUTCOME_HEADER;
  /** Idle keep-alive connections are closed by the client after this long. */
  static final int KEEP_ALIVE_SECONDS = 5;

  /**
   * Closed loop when {@code rate} is 0 and {@code useOffsets} false. The first {@code warmup}
   * callbacks are sent closed loop before the measured run and left out of its figures (a cold JIT
   * on either side would otherwise dominate a short open-loop run).
   */
  public record Options(int connections, double rate, boolean useOffsets, long requestTimeoutMs, int warmup) {}

  /** Counts and latencies of one run. */
  public record Result(long requests, long answered, double seconds, Tally statuses, Tally outcomes, long errors,
                       Histogram latencyMicros) {

    public double throughput() {
      return seconds <= 0 ? 0 : answered / seconds;
    }

    public long outcome(String outcome, boolean duplicate) {
      return outcomes.get(duplicate ? outcome + "/duplicate" : outcome);
    }

    public long status(int code) {
      return statuses.get(Integer.toString(code));
    }

    /** Every callback got its channel's success answer (200; WeChat Pay's 204). */
    public boolean ok() {
      return errors == 0 && statuses.get("200") + statuses.get("204") == requests;
    }

    public JsonObject toJson() {
      Histogram h = latencyMicros;
      return new JsonObject().put("requests", requests).put("answered", answered)
          .put("seconds", round(seconds)).put("throughputPerSecond", round(throughput()))
          .put("status", statuses.toJson()).put("outcomes", outcomes.toJson()).put("errors", errors)
          .put("latencyMs", new JsonObject()
              .put("p50", ms(h.getValueAtPercentile(50))).put("p90", ms(h.getValueAtPercentile(90)))
              .put("p99", ms(h.getValueAtPercentile(99))).put("p99.9", ms(h.getValueAtPercentile(99.9)))
              .put("max", ms(h.getMaxValue())).put("mean", round(h.getMean() / 1000.0)));
    }

    public String summary() {
      JsonObject j = toJson();
      JsonObject l = j.getJsonObject("latencyMs");
      return String.format("replayed %d callbacks in %.2f s: %.0f/s%n  status:   %s%n  outcomes: %s%n"
              + "  errors:   %d%n  latency ms: p50 %s  p90 %s  p99 %s  p99.9 %s  max %s%n",
          requests, seconds, throughput(), statuses.line(), outcomes.line(), errors,
          l.getValue("p50"), l.getValue("p90"), l.getValue("p99"), l.getValue("p99.9"), l.getValue("max"));
    }

    private static double ms(long micros) {
      return round(micros / 1000.0);
    }

    private static double round(double d) {
      return Math.round(d * 100) / 100.0;
    }
  }

  private final Vertx vertx;
  private final String url;
  private final String secret;
  private final String channelOverride;
  private final Options options;
  /** Simulated gateways by format, for bursts in a gateway's wire format. */
  private final Map<String, Gateway> gateways;
  /** Built before the clock starts (RSA signing and AES-GCM are the gateway's cost, not the service's). */
  private final Map<Burst, Delivery> prebuilt = new IdentityHashMap<>();

  public Replay(Vertx vertx, String url, String channelOverride, String secret, Options options) {
    this(vertx, url, channelOverride, secret, options, Map.of());
  }

  public Replay(Vertx vertx, String url, String channelOverride, String secret, Options options,
                Map<String, Gateway> gateways) {
    this.gateways = gateways;
    this.vertx = vertx;
    this.url = url;
    this.channelOverride = channelOverride;
    this.secret = secret;
    this.options = options;
  }

  /** Sends every burst once and blocks until all are answered: call it from a plain thread. */
  public Result run(List<Burst> bursts) {
    long cpu0 = processCpuNanos();
    prebuild(bursts);
    prebuildCpuSeconds = (processCpuNanos() - cpu0) / 1e9;
    URI uri = URI.create(url);
    boolean tls = "https".equalsIgnoreCase(uri.getScheme());
    int port = uri.getPort() > 0 ? uri.getPort() : tls ? 443 : 80;
    HttpClientAgent client = vertx.createHttpClient(
        new HttpClientOptions().setDefaultHost(uri.getHost()).setDefaultPort(port).setSsl(tls)
            .setKeepAlive(true).setPipelining(false).setMaxRedirects(0)
            // Below the service's http.headerTimeoutMs (10 s), which closes a connection idle that long: a
            // request sent on it as it closed failed with "Connection was closed" (a handful per open loop).
            .setKeepAliveTimeout(KEEP_ALIVE_SECONDS),
        new PoolOptions().setHttp1MaxSize(options.connections())
            .setEventLoopSize(Math.min(options.connections(), Runtime.getRuntime().availableProcessors())));
    try {
      int warm = Math.min(options.warmup(), bursts.size());
      if (warm > 0) {
        new Run(client, bursts.subList(0, warm), true).start().await();
      }
      return new Run(client, bursts.subList(warm, bursts.size()), false).start().await();
    } finally {
      client.close().await();
    }
  }

  /**
   * The gateway notifications of {@code bursts}, signed now: one notification per txnId, so the
   * file's repeats are the gateway's duplicates (the same notification again). Valid for the
   * channel's toleranceSeconds.
   */
  private double prebuildCpuSeconds;

  /** CPU seconds this process spent building gateway notifications before the run (not part of it). */
  public double prebuildCpuSeconds() {
    return prebuildCpuSeconds;
  }

  private static long processCpuNanos() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os ? os.getProcessCpuTime() : 0;
  }

  private void prebuild(List<Burst> bursts) {
    long now = System.currentTimeMillis() / 1000;
    Map<String, Burst> firstOfTxn = new java.util.LinkedHashMap<>();
    for (Burst b : bursts) {
      if (b.gatewayFormat()) {
        if (!gateways.containsKey(b.format())) {
          throw new IllegalArgumentException("no simulated gateway for format " + b.format());
        }
        firstOfTxn.putIfAbsent(b.format() + "/" + b.txnId(), b);
      }
    }
    // RSA signing dominates and the load generator runs C1 only: sign on every core.
    Map<String, Delivery> byTxn = new java.util.concurrent.ConcurrentHashMap<>();
    firstOfTxn.entrySet().parallelStream().forEach(e -> {
      Burst b = e.getValue();
      JsonObject body = b.bodyJson();
      byTxn.put(e.getKey(), gateways.get(b.format()).notification(new Payment(body.getString("orderNo"), b.txnId(),
          body.getLong("amountCents"), body.getString("currency", "CNY"), null), now));
    });
    for (Burst b : bursts) {
      if (b.gatewayFormat()) {
        prebuilt.put(b, byTxn.get(b.format() + "/" + b.txnId()));
      }
    }
  }

  private final class Run {
    private final HttpClientAgent client;
    private final List<Burst> bursts;
    private final Histogram latency = new ConcurrentHistogram(TimeUnit.MINUTES.toMicros(10), 3);
    private final Tally statuses = new Tally();
    private final Tally outcomes = new Tally();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong lastDone = new AtomicLong();
    private final Promise<Result> finished = Promise.promise();
    private final boolean closedLoop;
    private long startNanos;

    Run(HttpClientAgent client, List<Burst> bursts, boolean forceClosedLoop) {
      this.client = client;
      this.bursts = bursts;
      this.closedLoop = forceClosedLoop || (options.rate() <= 0 && !options.useOffsets());
    }

    Future<Result> start() {
      startNanos = System.nanoTime();
      lastDone.set(startNanos);
      if (bursts.isEmpty()) {
        finish();
      } else if (!closedLoop) {
        openLoop();
      } else {
        int senders = Math.min(options.connections(), bursts.size());
        for (int i = 0; i < senders; i++) {
          vertx.runOnContext(v -> closedLoopNext());
        }
      }
      return finished.future();
    }

    private void closedLoopNext() {
      int i = next.getAndIncrement();
      if (i >= bursts.size()) {
        return;
      }
      long start = System.nanoTime();
      send(bursts.get(i), start).onComplete(ar -> closedLoopNext());
    }

    /** A 1 ms tick sends every callback that is due; latency counts from when it was due. */
    private void openLoop() {
      vertx.setPeriodic(1, 1, id -> {
        long now = System.nanoTime();
        int i;
        while ((i = next.get()) < bursts.size()) {
          long due = startNanos + dueNanos(i);
          if (due > now) {
            return;
          }
          next.incrementAndGet();
          send(bursts.get(i), due);
        }
        vertx.cancelTimer(id);
      });
    }

    private long dueNanos(int i) {
      if (options.useOffsets()) {
        return TimeUnit.MILLISECONDS.toNanos(bursts.get(i).offsetMs() - bursts.get(0).offsetMs());
      }
      return (long) (i * 1e9 / options.rate());
    }

    private Future<Void> send(Burst b, long since) {
      Delivery d = prebuilt.get(b);
      return d == null ? sendOrdergate(b, since) : sendGateway(b, d, since);
    }

    /** A gateway's notification; the outcome is read from the answer's {@code X-Ordergate-Outcome}. */
    private Future<Void> sendGateway(Burst b, Delivery d, long since) {
      String channel = channelOverride != null ? channelOverride : b.channel();
      return finish(client.request(HttpMethod.POST, "/api/callbacks/" + channel)
          .compose(req -> {
            req.idleTimeout(options.requestTimeoutMs());
            d.headers().forEach(req::putHeader);
            return req.send(Buffer.buffer(d.body()));
          })
          .compose(resp -> resp.body().map(body -> {
            statuses.add(Integer.toString(resp.statusCode()));
            String outcome = resp.getHeader(OUTCOME_HEADER);
            if (outcome != null && resp.statusCode() / 100 == 2) {
              outcomes.add(outcome.replace(",DUPLICATE", "/duplicate"));
            }
            return (Void) null;
          })), since);
    }

    private Future<Void> sendOrdergate(Burst b, long since) {
      String channel = channelOverride != null ? channelOverride : b.channel();
      long t = System.currentTimeMillis() / 1000;
      // The load generator shares the CPUs with what it measures: no per-request option objects,
      // header names built once, and the answer read by a scan rather than a JSON parse.
      return finish(client.request(HttpMethod.POST, "/api/callbacks/" + channel)
          .compose(req -> {
            req.idleTimeout(options.requestTimeoutMs());
            req.putHeader(CONTENT_TYPE, APPLICATION_JSON);
            req.putHeader(SIGNATURE, OrdergateSignature.header(secret, t, channel, b.body()));
            return req.send(Buffer.buffer(b.body()));
          })
          .compose(resp -> resp.body().map(body -> {
            statuses.add(resp.statusCode() == 200 ? OK : Integer.toString(resp.statusCode()));
            if (resp.statusCode() == 200) {
              outcomes.add(outcomeKey(body.toString(StandardCharsets.UTF_8)));
            }
            return (Void) null;
          })), since);
    }

    private Future<Void> finish(Future<Void> sent, long since) {
      return sent.transform(ar -> {
        long end = System.nanoTime();
        if (ar.failed()) {
          if (errors.incrementAndGet() <= 5) {
            System.err.println("replay: request failed after " + (end - since) / 1_000_000 + " ms: " + ar.cause());
          }
          statuses.add("error");
        } else {
          latency.recordValue(Math.max(0, (end - since) / 1000));
        }
        lastDone.accumulateAndGet(end, Math::max);
        if (answered.incrementAndGet() == bursts.size()) {
          finish();
        }
        return Future.<Void>succeededFuture();
      });
    }

    /** {@code OUTCOME} or {@code OUTCOME/duplicate} from the service's compact JSON answer. */
    private String outcomeKey(String json) {
      int at = json.indexOf(OUTCOME_FIELD);
      if (at < 0) {
        return "?";
      }
      int from = at + OUTCOME_FIELD.length();
      String outcome = json.substring(from, json.indexOf('"', from));
      return json.contains(DUPLICATE_TRUE) ? outcome + "/duplicate" : outcome;
    }

    private void finish() {
      double seconds = (lastDone.get() - startNanos) / 1e9;
      long ok = answered.get() - errors.get();
      finished.tryComplete(new Result(bursts.size(), ok, seconds, statuses, outcomes, errors.get(), latency));
    }
  }
}
