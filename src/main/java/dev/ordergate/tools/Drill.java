package dev.ordergate.tools;

import dev.ordergate.domain.TransitionSource;
import dev.ordergate.reconcile.ReconcileReport;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The concurrency drill against one running service: stock and coupons, N orders with short
 * timeouts, then around each expiry the seeded schedule's races (signed callbacks early, in the
 * last second and after expiry, some delivered 2-3 times at once, some with a wrong amount, a
 * second transaction; customer and operator cancels) while sweepers call
 * {@code POST /admin/sweeps/run} in a loop. Then it waits for the service to settle, reads every
 * order back, checks the answers against each other and against the final state, and runs the
 * reconciliation. Any anomaly makes the drill fail.
 *
 * <p>{@link #run()} blocks: call it from a plain thread (a CLI's main, a test), never an event loop.
 */
public final class Drill {

  /**
   * {@code trigger}: who is expected to cancel expired orders. {@code sweep}: the drill's sweep
   * loops and the settle phase call the sweep; {@code broker}: the service's broker tier (timeout
   * messages) with its fallback sweep on its own timer, and the drill calls no sweep at all.
   */
  public record Options(int orders, long seed, int timeoutSeconds, int connections, int sweepers,
                        long sweepIntervalMs, int settleSeconds, int skus, long requestTimeoutMs, String runId,
                        String trigger) {

    public static Options defaults(int orders, long seed) {
      return new Options(orders, seed, 3, 64, 2, 25, 30, 5, 10_000,
          Long.toString(System.currentTimeMillis(), 36).toUpperCase(), "sweep");
    }

    public Options withTimeoutSeconds(int seconds) {
      return new Options(orders, seed, seconds, connections, sweepers, sweepIntervalMs, settleSeconds, skus,
          requestTimeoutMs, runId, trigger);
    }

    public Options withSettle(int seconds, long requestTimeout) {
      return new Options(orders, seed, timeoutSeconds, connections, sweepers, sweepIntervalMs, seconds, skus,
          requestTimeout, runId, trigger);
    }

    boolean sweepsInSettle() {
      return !"broker".equals(trigger);
    }
  }

  /** A cancel's answer: the HTTP status and the outcome (or error code) it carried. */
  public record CancelAnswer(int httpStatus, String outcome) {}

  /** Who cancels. The service's endpoints by default; the broken-gate test brings its own. */
  @FunctionalInterface
  public interface Canceller {
    Future<CancelAnswer> cancel(String orderNo, String userId, TransitionSource source);
  }

  /** Something the gate should have made impossible, or a failure that hides the answer. */
  public record Anomaly(String orderNo, String kind, String detail) {
    JsonObject toJson() {
      return new JsonObject().put("orderNo", orderNo).put("kind", kind).put("detail", detail);
    }
  }

  private record PayAnswer(String txnId, boolean wrongAmount, int httpStatus, String outcome, boolean duplicate) {}

  /**
   * The gateway drill's other side ({@code --gateway-sim}): the simulated gateways' control API. {@code pay}
   * answers the simulator's {@code POST /sim/trades/KIND/REF/pay} body with its HTTP status as
   * {@code httpStatus}; {@code trades} its {@code GET /sim/trades}.
   */
  public interface GatewaySide {
    Future<JsonObject> pay(String kind, String ref, JsonObject spec);

    Future<Void> scan(String kind, String ref);

    Future<JsonArray> trades();

    /**
     * Reconciles {@code channel}'s {@code day} against its gateway's bill (the report as
     * {@code GET /admin/reconcile/gateway} answers it); {@code apply} puts the missing payments through the gate.
     * Null (the default): the drill asks the service over HTTP, report only.
     */
    default Future<JsonObject> reconcile(String channel, java.time.LocalDate day, boolean apply) {
      return null;
    }
  }

  /** What one order was told, in any order the answers arrived. */
  private static final class Track {
    final DrillPlan.OrderPlan plan;
    volatile long amountCents = -1;
    final List<PayAnswer> payments = Collections.synchronizedList(new ArrayList<>());
    final List<String> cancels = Collections.synchronizedList(new ArrayList<>());
    final List<String> errors = Collections.synchronizedList(new ArrayList<>());
    volatile JsonObject finalState;
    /** The gateway drill: the attempt's gateway reference, and what the simulated gateway did with the payment. */
    volatile String attemptRef;
    volatile String gatewayTxn;
    volatile boolean gatewayPaid;
    volatile boolean notificationDropped;
    /** Completes when the customer's open answered: the payment at the gateway waits for it. */
    final Promise<Void> opened = Promise.promise();

    Track(DrillPlan.OrderPlan plan) {
      this.plan = plan;
    }
  }

  private final Vertx vertx;
  private final Options options;
  private final ServiceClient client;
  private final Canceller canceller;
  private final PrintStream out;
  private final DrillPlan plan;
  private final Map<String, Track> tracks = new HashMap<>();
  private final List<Future<?>> inFlight = Collections.synchronizedList(new ArrayList<>());
  private final Tally callbackOutcomes = new Tally();
  private final Tally cancelOutcomes = new Tally();
  private final Tally sent = new Tally();
  private final Tally finalStatus = new Tally();
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private final AtomicLong sweepRuns = new AtomicLong();
  private final AtomicLong sweepCancelled = new AtomicLong();
  private final List<String> sweepErrors = Collections.synchronizedList(new ArrayList<>());
  private volatile boolean sweepAvailable = true;
  /** Chaos mode: a request refused, cut off or answered 503 is an outage, counted, not an anomaly. */
  private volatile boolean tolerateOutages;
  private final Tally outages = new Tally();
  private volatile boolean racing;
  private final GatewaySide gateway;
  /** The gateway drill: channel name -> gateway kind. */
  private final Map<String, String> channelKinds;
  private final Tally gatewayCounts = new Tally();

  public Drill(Vertx vertx, Options options, ServiceClient.Target target, Canceller canceller, PrintStream out) {
    this(vertx, options, target, canceller, out, DrillPlan.generate(options.runId(), options.orders(), options.seed(),
        options.timeoutSeconds(), options.skus()), null, Map.of());
  }

  private Drill(Vertx vertx, Options options, ServiceClient.Target target, Canceller canceller, PrintStream out,
                DrillPlan plan, GatewaySide gateway, Map<String, String> channelKinds) {
    this.vertx = vertx;
    this.options = options;
    this.client = new ServiceClient(vertx, target, options.connections(), options.requestTimeoutMs());
    this.canceller = canceller != null ? canceller : this::httpCancel;
    this.out = out;
    this.plan = plan;
    this.gateway = gateway;
    this.channelKinds = channelKinds;
    plan.orders.forEach(o -> tracks.put(o.orderNo(), new Track(o)));
  }

  /**
   * The gateway drill ({@code --gateway-sim}): customers open their payments through the service
   * ({@code channelKinds}: the gateway channels, name -> kind, one per order in turn) and pay at the simulated
   * gateways around expiry ({@link DrillPlan#generateGateway}); the gateways notify the service, late, twice
   * or never. Besides the usual checks, the report's {@code gateway} block compares what the gateways took
   * with what the service recorded.
   */
  public static Drill gateway(Vertx vertx, Options options, ServiceClient.Target target, GatewaySide side,
                              Map<String, String> channelKinds, PrintStream out) {
    DrillPlan plan = DrillPlan.generateGateway(options.runId(), options.orders(), options.seed(), options.timeoutSeconds(),
        options.skus(), List.copyOf(new java.util.TreeMap<>(channelKinds).keySet()));
    return new Drill(vertx, options, target, null, out, plan, side, channelKinds);
  }

  /**
   * For {@code ordergate chaos}: the service is killed and its database connections cut during
   * the race, so requests that got no answer or a 503 are counted as outages instead of anomalies
   * (a gateway would retry them). Every answer that came back is still checked against the rest.
   */
  public Drill tolerateOutages() {
    tolerateOutages = true;
    return this;
  }

  /** True while orders are created and raced (the window the chaos run disrupts). */
  public boolean racing() {
    return racing;
  }

  /** In chaos mode, records an outage and answers true; otherwise false (the caller records an error). */
  private boolean outage(String what) {
    if (tolerateOutages) {
      outages.add(what);
    }
    return tolerateOutages;
  }

  /** The drill's result: counts, anomalies and the reconciliation, printable and as JSON. */
  public record Result(JsonObject report, List<Anomaly> anomalies, String summary) {
    public boolean ok() {
      return anomalies.isEmpty();
    }
  }

  private volatile Instant startedAt = Instant.now();

  public Result run() {
    Instant started = Instant.now();
    startedAt = started;
    long t0 = System.nanoTime();
    Map<String, Double> seconds = new LinkedHashMap<>();
    List<Anomaly> anomalies = new ArrayList<>();
    try {
      out.printf("drill %s: %d orders, seed %d, timeout %d s, against %s%n", options.runId(), options.orders(),
          options.seed(), options.timeoutSeconds(), client.target().url());
      setup();
      seconds.put("setup", lap(t0));
      long t1 = System.nanoTime();
      startSweepers();
      racing = true;
      createAndRace();
      racing = false;
      seconds.put("createAndRace", lap(t1));
      long t2 = System.nanoTime();
      sweeping.set(false);
      settle();
      seconds.put("settle", lap(t2));
      long t3 = System.nanoTime();
      ReconcileReport reconciliation = reconcile();
      seconds.put("reconcile", lap(t3));
      analyse(anomalies);
      JsonObject gatewayBlock = gateway == null ? null : gatewayReport(anomalies);
      reconciliation.violations().forEach(v -> anomalies.add(new Anomaly(v.orderNo(),
          "RECONCILE_" + v.invariant().name(), (v.sku() != null ? "sku " + v.sku() + ": " : "") + v.detail())));
      long unlisted = reconciliation.violationCount() - reconciliation.violations().size();
      if (unlisted > 0) {
        anomalies.add(new Anomaly(null, "RECONCILE_UNLISTED", unlisted + " more violations not listed"));
      }
      seconds.put("total", lap(t0));
      JsonObject report = report(started, seconds, anomalies, reconciliation);
      if (gatewayBlock != null) {
        report.put("gateway", gatewayBlock);
      }
      return new Result(report, List.copyOf(anomalies), summary(report, anomalies));
    } finally {
      sweeping.set(false);
      client.close();
    }
  }

  private static double lap(long since) {
    return Math.round((System.nanoTime() - since) / 1e7) / 100.0;
  }

  // ---- phases --------------------------------------------------------------------------------

  private void setup() {
    List<Future<?>> calls = new ArrayList<>();
    for (String sku : plan.skus) {
      calls.add(client.setStock(sku, plan.stockPerSku()));
    }
    for (DrillPlan.OrderPlan o : plan.orders) {
      if (o.couponCode() != null) {
        calls.add(client.createCoupon(o.couponCode(), o.userId(), o.discountCents()));
      }
    }
    Future.all(calls).await();
  }

  private void startSweepers() {
    sweeping.set(true);
    for (int i = 0; i < options.sweepers(); i++) {
      sweepLoop();
    }
  }

  private void sweepLoop() {
    if (!sweeping.get() || !sweepAvailable) {
      return;
    }
    sweepOnce().onComplete(ar -> vertx.setTimer(Math.max(1, options.sweepIntervalMs()), id -> sweepLoop()));
  }

  /** One {@code POST /admin/sweeps/run}; a 404 means this service has no sweep endpoint. */
  private Future<Void> sweepOnce() {
    return client.send(HttpMethod.POST, "/admin/sweeps/run", null, true).transform(ar -> {
      if (ar.failed() || ar.result().statusCode() == 503) {
        if (!outage("sweeps")) {
          sweepErrors.add(ar.failed() ? String.valueOf(ar.cause()) : "HTTP 503 " + ar.result().bodyAsString());
        }
      } else if (ar.result().statusCode() == 404) {
        if (sweepAvailable) {
          sweepAvailable = false;
          out.println("note: POST /admin/sweeps/run answered 404: this service has no sweep endpoint;"
              + " orders left to expire stay pending");
        }
      } else if (ar.result().statusCode() / 100 != 2) {
        sweepErrors.add("HTTP " + ar.result().statusCode() + " " + ar.result().bodyAsString());
      } else {
        sweepRuns.incrementAndGet();
        JsonObject row = ar.result().bodyAsJsonObject();
        sweepCancelled.addAndGet(row == null ? 0 : row.getLong("cancelled", 0L));
        if (row != null && row.getString("error") != null && !outage("sweeps (run cut short)")) {
          sweepErrors.add("run " + row.getValue("id") + ": " + row.getString("error"));
        }
      }
      return Future.succeededFuture();
    });
  }

  /**
   * Creates every order, at most half the connections at a time (the other half stays free for the
   * races); each order's actions are armed relative to its own expiry as soon as it exists.
   */
  private void createAndRace() {
    AtomicInteger next = new AtomicInteger();
    List<Future<?>> creators = new ArrayList<>();
    int width = Math.max(1, options.connections() / 2);
    for (int w = 0; w < width; w++) {
      Promise<Void> done = Promise.promise();
      creators.add(done.future());
      vertx.runOnContext(v -> createNext(next, done));
    }
    Future.join(creators).transform(ar -> Future.succeededFuture()).await();
    // Every action is armed once its order exists; wait for all of them to have been answered.
    List<Future<?>> actions;
    synchronized (inFlight) {
      actions = new ArrayList<>(inFlight);
    }
    Future.join(actions).transform(ar -> Future.succeededFuture()).await();
  }

  private void createNext(AtomicInteger next, Promise<Void> done) {
    int i = next.getAndIncrement();
    if (i >= plan.orders.size()) {
      done.complete();
      return;
    }
    DrillPlan.OrderPlan o = plan.orders.get(i);
    Track track = tracks.get(o.orderNo());
    client.createOrder(o.request(options.timeoutSeconds()))
        .onSuccess(order -> arm(track, order))
        .onFailure(err -> {
          if (!outage("creates")) {
            track.errors.add("create: " + err.getMessage());
          }
        })
        .onComplete(ar -> createNext(next, done));
  }

  private void arm(Track track, JsonObject order) {
    track.amountCents = order.getLong("amountCents");
    long lifeMs = Duration.between(Instant.parse(order.getString("createdAt")),
        Instant.parse(order.getString("expiresAt"))).toMillis();
    long expiryNanos = System.nanoTime() + lifeMs * 1_000_000;
    for (DrillPlan.Action a : track.plan.actions()) {
      Promise<Void> done = Promise.promise();
      inFlight.add(done.future());
      long delayMs = (expiryNanos - System.nanoTime()) / 1_000_000 + a.offsetMs();
      vertx.setTimer(Math.max(1, delayMs), id -> fire(track, a).onComplete(ar -> done.complete()));
    }
  }

  private Future<?> fire(Track track, DrillPlan.Action a) {
    return switch (a.kind()) {
      case PAY -> pay(track, a);
      case CUSTOMER_CANCEL -> cancel(track, TransitionSource.USER);
      case OPERATOR_CANCEL -> cancel(track, TransitionSource.OPERATOR);
      case OPEN_PAYMENT -> openPayment(track);
      case GATEWAY_PAY -> gatewayPay(track, a);
    };
  }

  private String kindOf(Track track) {
    return channelKinds.get(track.plan.channel());
  }

  /** The customer opens the payment; an Alipay customer who is going to pay scans the QR code at once. */
  private Future<?> openPayment(Track track) {
    sent.add("opens");
    return openAndScan(track).onComplete(ar -> track.opened.tryComplete());
  }

  private Future<?> openAndScan(Track track) {
    return client.send(HttpMethod.POST, "/api/orders/" + track.plan.orderNo() + "/payments",
        new JsonObject().put("channel", track.plan.channel()), false).compose(resp -> {
          JsonObject body = resp.bodyAsJsonObject();
          if (resp.statusCode() == 201 || resp.statusCode() == 200) {
            track.attemptRef = body.getString("gatewayReference");
            gatewayCounts.add("opened");
            boolean pays = track.plan.actions().stream().anyMatch(x -> x.kind() == DrillPlan.Kind.GATEWAY_PAY);
            return pays && "alipay".equals(kindOf(track)) ? gateway.scan("alipay", track.attemptRef) : Future.succeededFuture();
          }
          String code = body == null ? "HTTP_" + resp.statusCode() : body.getString("error", "HTTP_" + resp.statusCode());
          gatewayCounts.add("open." + code);
          if (resp.statusCode() != 409) {
            track.errors.add("open payment at " + track.plan.channel() + ": HTTP " + resp.statusCode() + " " + code);
          }
          return Future.succeededFuture();
        }).recover(err -> {
          track.errors.add("open payment at " + track.plan.channel() + ": " + err);
          return Future.succeededFuture();
        });
  }

  /**
   * The customer pays at the gateway (if its trade is still payable there), and the gateway notifies the
   * service {@code notifyDelayMs} later, in {@code copies} copies, or never ({@code dropped}). Each copy's
   * final answer is checked like a callback's.
   */
  private Future<?> gatewayPay(Track track, DrillPlan.Action a) {
    return track.opened.future().compose(v -> payAtGateway(track, a));
  }

  private Future<?> payAtGateway(Track track, DrillPlan.Action a) {
    if (track.attemptRef == null) {
      gatewayCounts.add("pay.noAttempt");
      return Future.succeededFuture();
    }
    sent.add("gatewayPayments");
    JsonObject spec = new JsonObject().put("notify", !a.dropped()).put("delayMs", a.notifyDelayMs())
        .put("duplicates", a.copies() - 1)
        .put("notifyUrl", client.target().url() + "/api/callbacks/" + track.plan.channel());
    return gateway.pay(kindOf(track), track.attemptRef, spec).map(answer -> {
      int status = answer.getInteger("httpStatus");
      if (status == 409) {
        gatewayCounts.add("pay.refusedByGateway");
        return null;
      }
      if (status != 200) {
        track.errors.add("pay at the gateway: HTTP " + status + " " + answer.encode());
        return null;
      }
      track.gatewayTxn = answer.getString("txnId");
      track.gatewayPaid = true;
      gatewayCounts.add("pay.taken");
      if (a.dropped()) {
        track.notificationDropped = true;
        gatewayCounts.add("notifications.dropped");
        return null;
      }
      JsonObject report = answer.getJsonObject("report", new JsonObject());
      for (Object o : report.getJsonArray("notifications", new JsonArray())) {
        JsonArray attempts = ((JsonObject) o).getJsonArray("attempts");
        JsonObject last = attempts.getJsonObject(attempts.size() - 1);
        sent.add("notifications");
        String header = last.getString("outcome");
        if (!((JsonObject) o).getBoolean("accepted") || header == null) {
          track.errors.add("notification " + track.gatewayTxn + ": HTTP " + last.getInteger("status") + " " + last.getString("body"));
          continue;
        }
        boolean duplicate = header.endsWith(",DUPLICATE");
        String outcome = header.replace(",DUPLICATE", "");
        callbackOutcomes.add(duplicate ? "duplicate(" + outcome + ")" : outcome);
        track.payments.add(new PayAnswer(track.gatewayTxn, false, 200, outcome, duplicate));
      }
      return null;
    }).recover(err -> {
      track.errors.add("pay at the gateway: " + err);
      return Future.succeededFuture();
    });
  }

  private Future<?> pay(Track track, DrillPlan.Action a) {
    long amount = track.amountCents + a.amountDelta();
    if (amount < 0) {
      amount = track.amountCents + 100;
    }
    boolean wrong = amount != track.amountCents;
    var notification = client.payment(a.txnId(), track.plan.orderNo(), amount);
    List<Future<?>> copies = new ArrayList<>();
    for (int c = 0; c < a.copies(); c++) {
      sent.add("callbacks");
      copies.add(notification.get().transform(ar -> {
        if (ar.failed()) {
          if (outage("callbacks")) {
            // Unanswered: it may or may not have been applied before the service died.
            track.payments.add(new PayAnswer(a.txnId(), wrong, -1, null, false));
          } else {
            track.errors.add("callback " + a.txnId() + ": " + ar.cause());
          }
          return Future.succeededFuture();
        }
        ServiceClient.PayAnswer answer = ar.result();
        if (!answer.accepted() || answer.outcome() == null) {
          // A 503 (our own failure, the gateway retries) is an outage in chaos mode.
          if (answer.status() != 503 || !outage("callbacks")) {
            track.errors.add("callback " + a.txnId() + ": HTTP " + answer.status() + " " + answer.body());
          }
          track.payments.add(new PayAnswer(a.txnId(), wrong, answer.status(), null, false));
          return Future.succeededFuture();
        }
        callbackOutcomes.add(answer.duplicate() ? "duplicate(" + answer.outcome() + ")" : answer.outcome());
        track.payments.add(new PayAnswer(a.txnId(), wrong, 200, answer.outcome(), answer.duplicate()));
        return Future.succeededFuture();
      }));
    }
    return Future.join(copies);
  }

  private Future<?> cancel(Track track, TransitionSource source) {
    sent.add("cancels." + source);
    return canceller.cancel(track.plan.orderNo(), track.plan.userId(), source).transform(ar -> {
      if (ar.failed()) {
        if (!outage("cancels")) {
          track.errors.add("cancel by " + source + ": " + ar.cause());
        }
        return Future.succeededFuture();
      }
      CancelAnswer answer = ar.result();
      cancelOutcomes.add(source + ":" + answer.outcome());
      track.cancels.add(source + ":" + answer.outcome());
      if (answer.httpStatus() != 200 && answer.httpStatus() != 409
          && !(answer.httpStatus() == 503 && outage("cancels"))) {
        track.errors.add("cancel by " + source + ": HTTP " + answer.httpStatus() + " " + answer.outcome());
      }
      return Future.succeededFuture();
    });
  }

  /** The service's own cancel endpoints: the customer's and the operator's. */
  private Future<CancelAnswer> httpCancel(String orderNo, String userId, TransitionSource source) {
    Future<HttpResponse<Buffer>> call = source == TransitionSource.OPERATOR
        ? client.send(HttpMethod.POST, "/admin/orders/" + orderNo + "/cancel",
            new JsonObject().put("operator", "drill-operator").put("reason", "drill " + options.runId()), true)
        : client.send(HttpMethod.POST, "/api/orders/" + orderNo + "/cancel",
            new JsonObject().put("userId", userId).put("reason", "drill " + options.runId()), false);
    return call.map(resp -> {
      JsonObject body = resp.bodyAsJsonObject();
      String outcome = body == null ? "HTTP_" + resp.statusCode()
          : body.getString("outcome", body.getString("error", "HTTP_" + resp.statusCode()));
      return new CancelAnswer(resp.statusCode(), outcome);
    });
  }

  /** Sweeps until every drill order left pending is gone (or the settle time runs out), then reads all. */
  private void settle() {
    long deadline = System.nanoTime() + options.settleSeconds() * 1_000_000_000L;
    List<Track> open = new ArrayList<>(tracks.values());
    while (true) {
      if (sweepAvailable && options.sweepsInSettle()) {
        sweepOnce().await();
      }
      readBack(open);
      open.removeIf(t -> t.finalState != null && !"PENDING_PAYMENT".equals(t.finalState.getString("status")));
      if (open.isEmpty() || !sweepAvailable || System.nanoTime() > deadline) {
        break;
      }
      sleep(250);
    }
    readBack(new ArrayList<>(tracks.values()));
  }

  private void readBack(List<Track> which) {
    List<Future<?>> reads = new ArrayList<>();
    for (Track t : which) {
      if (t.amountCents < 0) {
        continue;
      }
      reads.add(client.getOrder(t.plan.orderNo()).onSuccess(o -> t.finalState = o));
    }
    Future.join(reads).transform(ar -> Future.succeededFuture()).await();
  }

  /**
   * The reconciliation. In chaos mode a 503 (the service's pool still reconnecting after a cut that landed as the
   * race ended) is an outage: asked again every {@value #RECONCILE_RETRY_MS} ms, up to
   * {@value #RECONCILE_TRIES} times. Any other answer ends the drill's reconciliation as before.
   */
  private ReconcileReport reconcile() {
    for (int attempt = 1; ; attempt++) {
      HttpResponse<Buffer> resp = client.send(HttpMethod.GET, "/admin/reconcile", null, true).await();
      if (resp.statusCode() == 503 && attempt < RECONCILE_TRIES && outage("reconcile")) {
        sleep(RECONCILE_RETRY_MS);
        continue;
      }
      if (resp.statusCode() != 200) {
        throw new IllegalStateException("GET /admin/reconcile: HTTP " + resp.statusCode() + " " + resp.bodyAsString());
      }
      return ReconcileReport.fromJson(resp.bodyAsJsonObject());
    }
  }

  private static final int RECONCILE_TRIES = 20;
  private static final long RECONCILE_RETRY_MS = 500;

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  // ---- analysis ------------------------------------------------------------------------------

  /** Checks each order's answers against each other and against its final state. */
  private void analyse(List<Anomaly> anomalies) {
    List<Track> ordered = new ArrayList<>(tracks.values());
    ordered.sort((a, b) -> Integer.compare(a.plan.index(), b.plan.index()));
    for (Track t : ordered) {
      String no = t.plan.orderNo();
      t.errors.forEach(e -> anomalies.add(new Anomaly(no, "REQUEST_FAILED", e)));
      if (t.amountCents < 0) {
        continue;
      }
      JsonObject fin = t.finalState;
      if (fin == null) {
        anomalies.add(new Anomaly(no, "UNREADABLE", "the order could not be read back"));
        continue;
      }
      String status = fin.getString("status");
      String closedBy = fin.getString("closedBy");
      finalStatus.add("CANCELLED".equals(status) ? "CANCELLED by " + closedBy : status);
      if ("PENDING_PAYMENT".equals(status) && sweepAvailable) {
        anomalies.add(new Anomaly(no, "NOT_SETTLED", "still pending " + options.settleSeconds()
            + " s after the race, although sweeps were running"));
      }
      List<PayAnswer> pays;
      synchronized (t.payments) {
        pays = new ArrayList<>(t.payments);
      }
      List<String> cancels;
      synchronized (t.cancels) {
        cancels = new ArrayList<>(t.cancels);
      }
      // Per transaction: exactly one first answer; every delivery answers the same outcome.
      Map<String, List<PayAnswer>> byTxn = new HashMap<>();
      pays.stream().filter(p -> p.httpStatus() == 200)
          .forEach(p -> byTxn.computeIfAbsent(p.txnId(), k -> new ArrayList<>()).add(p));
      List<String> applied = new ArrayList<>();
      for (var e : byTxn.entrySet()) {
        long firsts = e.getValue().stream().filter(p -> !p.duplicate()).count();
        long outcomes = e.getValue().stream().map(PayAnswer::outcome).distinct().count();
        // The gateway drill: the query (close before cancel) may have taken the first answer.
        boolean queried = gateway != null && ("PAYMENT_QUERY".equals(closedBy) && e.getKey().equals(fin.getString("paidTxnId"))
            || "CANCELLED".equals(status));
        if (firsts > 1 || (firsts == 0 && !queried) || outcomes != 1) {
          anomalies.add(new Anomaly(no, "DUPLICATE_ANSWERS_DISAGREE", "txn " + e.getKey() + ": " + firsts
              + " first answers, outcomes " + e.getValue().stream().map(PayAnswer::outcome).toList()));
        }
        PayAnswer first = e.getValue().stream().filter(p -> !p.duplicate()).findFirst().orElse(e.getValue().get(0));
        if ("APPLIED".equals(first.outcome())) {
          applied.add(e.getKey());
          if (first.wrongAmount()) {
            anomalies.add(new Anomaly(no, "WRONG_AMOUNT_APPLIED", "txn " + e.getKey() + " with a wrong amount was applied"));
          }
        }
        if ("LATE_AFTER_CANCEL".equals(first.outcome()) && !"CANCELLED".equals(status)) {
          anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "txn " + e.getKey()
              + " answered LATE_AFTER_CANCEL but the order is " + status));
        }
        if ("DOUBLE_PAYMENT".equals(first.outcome()) && !"PAID".equals(status)) {
          anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "txn " + e.getKey()
              + " answered DOUBLE_PAYMENT but the order is " + status));
        }
      }
      List<String> wonCancels = cancels.stream().filter(c -> c.endsWith(":CANCELLED")).toList();
      if (applied.size() > 1) {
        anomalies.add(new Anomaly(no, "PAID_TWICE", "applied transactions " + applied));
      }
      if (!applied.isEmpty() && !wonCancels.isEmpty()) {
        anomalies.add(new Anomaly(no, "PAID_AND_CANCELLED", "payment " + applied + " applied and cancel "
            + wonCancels + " won; final status " + status));
      }
      if (wonCancels.size() > 1) {
        anomalies.add(new Anomaly(no, "CANCELLED_TWICE", "cancels " + wonCancels + " both won"));
      }
      if (applied.size() == 1 && !("PAID".equals(status) && Objects.equals(applied.get(0), fin.getString("paidTxnId")))) {
        anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "txn " + applied.get(0) + " answered APPLIED but the order is "
            + status + " paid by " + fin.getString("paidTxnId")));
      }
      if ("PAID".equals(status) && applied.isEmpty() && pays.stream().allMatch(p -> p.httpStatus() == 200)
          && !(gateway != null && "PAYMENT_QUERY".equals(closedBy))) {
        anomalies.add(new Anomaly(no, "PAID_WITHOUT_ANSWER", "order is PAID by " + fin.getString("paidTxnId")
            + " but no callback was answered APPLIED"));
      }
      if (wonCancels.size() == 1) {
        String source = wonCancels.get(0).substring(0, wonCancels.get(0).indexOf(':'));
        if (!"CANCELLED".equals(status) || !source.equals(closedBy)) {
          anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "cancel by " + source
              + " answered CANCELLED but the order is " + status + " closed by " + closedBy));
        }
      }
      if (cancels.stream().anyMatch(c -> c.endsWith(":ALREADY_PAID")) && !"PAID".equals(status)) {
        anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "a cancel answered ALREADY_PAID but the order is " + status));
      }
      if (cancels.stream().anyMatch(c -> c.endsWith(":ALREADY_CANCELLED")) && !"CANCELLED".equals(status)) {
        anomalies.add(new Anomaly(no, "ANSWER_CONTRADICTS_STATE", "a cancel answered ALREADY_CANCELLED but the order is " + status));
      }
    }
    sweepErrors.forEach(e -> anomalies.add(new Anomaly(null, "SWEEP_FAILED", e)));
  }

  // ---- the gateway drill's books ---------------------------------------------------------------

  /**
   * What the simulated gateways took against what the service recorded, per order of this run: money taken
   * on cancelled orders (a trade PAID at the gateway, its order CANCELLED), how much of it the service knows
   * of (an exception order, to be refunded), notifications lost and whether the query (close before cancel)
   * recovered them, exception orders by status. Contradictions are anomalies: an order PAID whose trade is not
   * paid at the gateway, or paid by another transaction than the gateway's.
   */
  private JsonObject gatewayReport(List<Anomaly> anomalies) {
    Map<String, JsonObject> trades = new HashMap<>();
    for (Object o : gateway.trades().await()) {
      JsonObject trade = (JsonObject) o;
      if (tracks.containsKey(trade.getString("orderNo"))) {
        trades.put(trade.getString("orderNo"), trade);
      }
    }
    JsonObject books = books(trades, anomalies);
    JsonObject reconcile;
    try {
      reconcile = gatewayReconcile(false);
    } catch (RuntimeException e) {
      anomalies.add(new Anomaly(null, "GATEWAY_RECONCILE_FAILED", String.valueOf(e.getMessage())));
      return books.put("counts", gatewayCounts.toJson()).put("gatewayReconcile", new JsonObject().put("available", true)
          .put("ok", false).put("summary", "failed: " + e.getMessage()));
    }
    if (reconcile.getBoolean("available") && reconcile.getLong("missingReceipts", 0L) > 0 && reconcile.getBoolean("canApply")) {
      // Recover the lost notifications from the bill, then count again what is recorded nowhere.
      JsonObject applied = gatewayReconcile(true);
      readBack(new ArrayList<>(tracks.values()));
      JsonObject after = books(trades, new ArrayList<>());
      JsonObject again = gatewayReconcile(false);
      reconcile = new JsonObject().put("available", true).put("before", reconcile).put("applied", applied)
          .put("after", again).put("unrecordedAfterApply", after.getJsonObject("unrecordedPayments"))
          .put("summary", reconcile.getString("summary") + "; --apply: " + applied.getLong("resolved", 0L)
              + " applied, then " + again.getString("summary") + ", recorded nowhere "
              + after.getJsonObject("unrecordedPayments").getLong("count"));
    }
    return books.put("counts", gatewayCounts.toJson()).put("gatewayReconcile", reconcile);
  }

  /** What the gateways took against what the service recorded (see {@link #gatewayReport}). */
  private JsonObject books(Map<String, JsonObject> trades, List<Anomaly> anomalies) {
    Map<String, List<JsonObject>> exceptions = new HashMap<>();
    Tally exceptionStatus = new Tally();
    for (JsonObject e : runExceptions()) {
      exceptions.computeIfAbsent(e.getString("orderNo"), k -> new ArrayList<>()).add(e);
      exceptionStatus.add(e.getString("status"));
    }
    long takenOnCancelled = 0;
    long takenOnCancelledCents = 0;
    long cancelledRecorded = 0;
    long paidByQuery = 0;
    long dropped = 0;
    long droppedRecovered = 0;
    long unrecorded = 0;
    long unrecordedCents = 0;
    long takenAtGateway = 0;
    for (Track t : tracks.values()) {
      JsonObject trade = trades.get(t.plan.orderNo());
      JsonObject fin = t.finalState;
      if (fin == null) {
        continue;
      }
      String status = fin.getString("status");
      boolean paidThere = trade != null && "PAID".equals(trade.getString("state"));
      String txn = paidThere ? trade.getString("txnId") : null;
      boolean excepted = txn != null && exceptions.getOrDefault(t.plan.orderNo(), List.of()).stream()
          .anyMatch(e -> txn.equals(e.getString("txnId")));
      boolean recorded = txn != null && (txn.equals(fin.getString("paidTxnId")) || excepted);
      if ("PAYMENT_QUERY".equals(fin.getString("closedBy"))) {
        paidByQuery++;
      }
      if (paidThere) {
        takenAtGateway++;
        if (!recorded) {
          unrecorded++;
          unrecordedCents += trade.getLong("amountCents");
        }
        if (t.notificationDropped) {
          dropped++;
          droppedRecovered += recorded ? 1 : 0;
        }
      }
      if (paidThere && "CANCELLED".equals(status)) {
        takenOnCancelled++;
        takenOnCancelledCents += trade.getLong("amountCents");
        cancelledRecorded += recorded ? 1 : 0;
      }
      if ("PAID".equals(status) && !paidThere) {
        anomalies.add(new Anomaly(t.plan.orderNo(), "PAID_BUT_NOT_AT_GATEWAY", "the order is PAID by "
            + fin.getString("paidTxnId") + " but its trade at " + t.plan.channel() + " is "
            + (trade == null ? "unknown" : trade.getString("state"))));
      } else if ("PAID".equals(status) && !txn.equals(fin.getString("paidTxnId"))) {
        anomalies.add(new Anomaly(t.plan.orderNo(), "PAID_BY_ANOTHER_TXN", "the order is PAID by "
            + fin.getString("paidTxnId") + " but the gateway's payment is " + txn));
      }
    }
    return new JsonObject()
        .put("takenAtGateway", takenAtGateway)
        .put("paidByQuery", paidByQuery)
        .put("moneyOnCancelledOrders", new JsonObject().put("count", takenOnCancelled)
            .put("amountCents", takenOnCancelledCents).put("recordedAsExceptions", cancelledRecorded))
        .put("exceptionOrders", exceptionStatus.toJson().put("total", exceptionStatus.total()))
        .put("refundsRequested", exceptionStatus.get("REFUND_PENDING") + exceptionStatus.get("REFUNDED")
            + exceptionStatus.get("REFUND_FAILED") + exceptionStatus.get("REFUND_PROCESSING"))
        .put("lostNotifications", new JsonObject().put("dropped", dropped).put("recoveredByQuery", droppedRecovered))
        .put("unrecordedPayments", new JsonObject().put("count", unrecorded).put("amountCents", unrecordedCents));
  }

  /**
   * Reconciliation against each gateway's bill of the run's day(s) (the gateway's day: China time for WeChat
   * Pay and Alipay, UTC for Stripe), keeping the findings that name this run's orders (the database and the
   * simulator may hold other runs'). In process when the side offers it ({@code apply} possible), else
   * {@code GET /admin/reconcile/gateway} (report only); a 404 from the router: {@code available} false.
   */
  private JsonObject gatewayReconcile(boolean apply) {
    String prefix = "DR-" + options.runId() + "-";
    JsonObject byChannel = new JsonObject();
    Tally checks = new Tally();
    long resolved = 0;
    boolean canApply = true;
    for (Map.Entry<String, String> ch : new java.util.TreeMap<>(channelKinds).entrySet()) {
      java.time.ZoneId zone = ch.getValue().equals("stripe") ? java.time.ZoneOffset.UTC : java.time.ZoneId.of("Asia/Shanghai");
      java.util.Set<java.time.LocalDate> days = new java.util.TreeSet<>(List.of(
          java.time.LocalDate.ofInstant(startedAt, zone), java.time.LocalDate.now(zone)));
      JsonArray mine = new JsonArray();
      for (java.time.LocalDate day : days) {
        JsonObject report;
        Future<JsonObject> inProcess = gateway.reconcile(ch.getKey(), day, apply);
        if (inProcess != null) {
          report = inProcess.await();
        } else {
          canApply = false;
          HttpResponse<Buffer> resp = client.send(HttpMethod.GET, "/admin/reconcile/gateway?channel=" + ch.getKey()
              + "&date=" + day, null, true).await();
          String body = resp.bodyAsString() == null ? "" : resp.bodyAsString();
          if (resp.statusCode() == 404 && !body.contains("UNKNOWN_CHANNEL")) {
            return new JsonObject().put("available", false).put("summary", "not available in this build");
          }
          if (resp.statusCode() != 200) {
            throw new IllegalStateException("GET /admin/reconcile/gateway for " + ch.getKey() + " " + day + ": HTTP "
                + resp.statusCode() + " " + body);
          }
          report = resp.bodyAsJsonObject();
        }
        for (Object c : report.getJsonArray("checks", new JsonArray())) {
          for (Object f : ((JsonObject) c).getJsonArray("listed", new JsonArray())) {
            JsonObject finding = (JsonObject) f;
            if (String.valueOf(finding.getString("orderNo")).startsWith(prefix)) {
              mine.add(finding);
              checks.add(finding.getString("check"));
              resolved += finding.getString("resolution") != null ? 1 : 0;
            }
          }
        }
      }
      byChannel.put(ch.getKey(), mine);
    }
    long findings = checks.total();
    return new JsonObject().put("available", true).put("canApply", canApply).put("apply", apply)
        .put("ok", findings == 0).put("findings", findings).put("checks", checks.toJson())
        .put("missingReceipts", checks.get("MISSING_RECEIPT")).put("resolved", resolved).put("byChannel", byChannel)
        .put("summary", findings == 0 ? "clean" : findings + " finding(s) (" + checks.line() + ")");
  }

  /** This run's exception orders ({@code GET /admin/exceptions}, every page). */
  private List<JsonObject> runExceptions() {
    List<JsonObject> out = new ArrayList<>();
    String path = "/admin/exceptions?limit=1000";
    String prefix = "DR-" + options.runId() + "-";
    while (path != null) {
      HttpResponse<Buffer> resp = client.send(HttpMethod.GET, path, null, true).await();
      if (resp.statusCode() != 200) {
        throw new IllegalStateException("GET /admin/exceptions: HTTP " + resp.statusCode() + " " + resp.bodyAsString());
      }
      for (Object o : resp.bodyAsJsonArray()) {
        JsonObject e = (JsonObject) o;
        if (e.getString("orderNo", "").startsWith(prefix)) {
          out.add(e);
        }
      }
      String link = resp.getHeader("Link");
      path = link == null ? null : link.substring(link.indexOf('<') + 1, link.indexOf('>'));
    }
    return out;
  }

  // ---- report --------------------------------------------------------------------------------

  private JsonObject report(Instant started, Map<String, Double> seconds, List<Anomaly> anomalies,
                            ReconcileReport reconciliation) {
    JsonArray list = new JsonArray();
    anomalies.forEach(a -> list.add(a.toJson()));
    JsonObject secs = new JsonObject();
    seconds.forEach(secs::put);
    long created = tracks.values().stream().filter(t -> t.amountCents >= 0).count();
    return new JsonObject()
        .put("runId", options.runId())
        .put("startedAt", started.toString())
        .put("target", client.target().url())
        .put("options", new JsonObject().put("orders", options.orders()).put("seed", options.seed())
            .put("timeoutSeconds", options.timeoutSeconds()).put("connections", options.connections())
            .put("sweepers", options.sweepers()).put("sweepIntervalMs", options.sweepIntervalMs())
            .put("settleSeconds", options.settleSeconds()).put("skus", options.skus()))
        .put("schedule", plan.shape())
        .put("created", created)
        .put("sent", sent.toJson().put("sweepRuns", sweepRuns.get()))
        .put("sweeps", new JsonObject().put("available", sweepAvailable).put("runs", sweepRuns.get())
            .put("cancelled", sweepCancelled.get()).put("errors", sweepErrors.size()))
        .put("outages", outages.toJson())
        .put("callbackOutcomes", callbackOutcomes.toJson())
        .put("cancelOutcomes", cancelOutcomes.toJson())
        .put("finalStatus", finalStatus.toJson())
        .put("trigger", new JsonObject().put("tier", options.trigger())
            .put("cancelledByMessages", finalStatus.get("CANCELLED by " + TransitionSource.TIMEOUT_MESSAGE))
            .put("fallbackCaught", finalStatus.get("CANCELLED by " + TransitionSource.TIMEOUT_SWEEP)))
        .put("anomalyCount", anomalies.size())
        .put("anomalies", list)
        .put("reconciliation", reconciliation.toJson())
        .put("seconds", secs);
  }

  private String summary(JsonObject r, List<Anomaly> anomalies) {
    StringBuilder sb = new StringBuilder();
    String nl = System.lineSeparator();
    JsonObject shape = r.getJsonObject("schedule");
    sb.append("drill ").append(options.runId()).append(": ").append(r.getLong("created")).append(" of ")
        .append(options.orders()).append(" orders created, seed ").append(options.seed()).append(nl);
    sb.append("  schedule:  ").append(line(shape)).append(nl);
    sb.append("  races:     ").append(shape.getLong("contested", 0L)).append(" contested orders (two or more actions"
        + " within 1 s, or one racing the sweep after expiry)").append(nl);
    sb.append("  sent:      ").append(sent.line()).append(nl);
    if (tolerateOutages) {
      sb.append("  outages:   ").append(outages.total() == 0 ? "none" : outages.line())
          .append(" (no answer or 503, while the service or its database was down)").append(nl);
    }
    JsonObject sw = r.getJsonObject("sweeps");
    sb.append("  sweeps:    ").append(sw.getBoolean("available") ? sw.getLong("runs") + " runs, "
        + sw.getLong("cancelled") + " orders cancelled by them, " + sw.getLong("errors") + " errors"
        : "endpoint not available (404)").append(nl);
    sb.append("  callbacks: ").append(callbackOutcomes.line()).append(nl);
    sb.append("  cancels:   ").append(cancelOutcomes.line()).append(nl);
    sb.append("  final:     ").append(finalStatus.line()).append(nl);
    if ("broker".equals(options.trigger())) {
      JsonObject t = r.getJsonObject("trigger");
      sb.append("  trigger:   broker tier: ").append(t.getLong("cancelledByMessages"))
          .append(" orders cancelled by timeout messages, ").append(t.getLong("fallbackCaught"))
          .append(" caught by the fallback sweep").append(nl);
    }
    if (r.containsKey("gateway")) {
      JsonObject g = r.getJsonObject("gateway");
      JsonObject m = g.getJsonObject("moneyOnCancelledOrders");
      JsonObject lost = g.getJsonObject("lostNotifications");
      sb.append("  gateway:   ").append(line(g.getJsonObject("counts"))).append(nl);
      sb.append("  money:     taken at the gateways ").append(g.getLong("takenAtGateway")).append(", on cancelled orders ")
          .append(m.getLong("count")).append(" (").append(m.getLong("amountCents")).append(" cents, ")
          .append(m.getLong("recordedAsExceptions")).append(" recorded as exceptions), paid by the query ")
          .append(g.getLong("paidByQuery")).append(nl);
      sb.append("  lost:      ").append(lost.getLong("dropped")).append(" notifications of taken payments dropped, ")
          .append(lost.getLong("recoveredByQuery")).append(" recovered; payments taken and recorded nowhere: ")
          .append(g.getJsonObject("unrecordedPayments").getLong("count")).append(nl);
      sb.append("  exceptions: ").append(line(g.getJsonObject("exceptionOrders"))).append("; refunds requested ")
          .append(g.getLong("refundsRequested")).append(nl);
    }
    JsonObject rec = r.getJsonObject("reconciliation");
    sb.append("  reconcile: ").append(rec.getBoolean("ok") ? "all invariants hold"
        : rec.getLong("violations") + " violation(s)").append(nl);
    sb.append("  seconds:   ").append(line(r.getJsonObject("seconds"))).append(nl);
    sb.append("  anomalies: ").append(anomalies.size()).append(nl);
    int shown = 0;
    for (Anomaly a : anomalies) {
      if (shown++ == 200) {
        sb.append("  ! ... ").append(anomalies.size() - 200).append(" more in the JSON report").append(nl);
        break;
      }
      sb.append("  ! ").append(a.kind()).append(' ').append(a.orderNo() == null ? "-" : a.orderNo()).append(": ")
          .append(a.detail()).append(nl);
    }
    sb.append(anomalies.isEmpty() ? "DRILL PASSED: the gate held" : "DRILL FAILED: " + anomalies.size() + " anomalies")
        .append(nl);
    return sb.toString();
  }

  static String line(JsonObject o) {
    StringBuilder sb = new StringBuilder();
    o.forEach(e -> sb.append(sb.length() == 0 ? "" : ", ").append(e.getKey()).append(' ').append(e.getValue()));
    return sb.toString();
  }
}
