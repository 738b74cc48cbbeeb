package dev.ordergate.tools;

import dev.ordergate.broker.BrokerTier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.PrintStream;
import java.util.List;
import java.util.Set;

/** {@code ordergate drill}: the concurrency drill, against a running service or self-contained. */
final class DrillCommand {

  static final String HELP = """
      usage: ordergate drill [--url URL --admin-token T --channel NAME --secret S] [options]

      Sets stock and coupons, creates N orders with short payment timeouts, then around each
      order's expiry races signed SUCCESS callbacks (early, in the last second, after expiry, some
      delivered 2-3 times at once, some with a wrong amount, some with a second transaction) against
      customer and operator cancels, while sweepers call POST /admin/sweeps/run in a loop. Then it
      waits for the service to settle, reads every order back, checks every answer against the
      others and the final state, and runs the reconciliation (GET /admin/reconcile).

      Target (all four, or none: then the service is started in this process on db.url from the
      config, or on a throw-away embedded PostgreSQL when db.url is not set):
        --url URL             the running service, e.g. http://127.0.0.1:8080
        --admin-token T       its admin token (default admin.token / ORDERGATE_ADMIN_TOKEN)
        --api-key K           its API key (default: the first of ORDERGATE_API_KEYS)
        --channel NAME        payment channel (default: the first configured one)
        --secret S            that channel's secret (default: its first configured secret)
      Options:
        --orders N            orders (default 2000)
        --seed N              schedule seed (default 1): the same seed gives the same schedule
        --timeout-seconds S   each order's payment timeout (default 3, at least 2)
        --connections C       HTTP connections (default 64)
        --sweepers K          concurrent sweep loops (default 2; 0 = rely on the service's timer)
        --sweep-interval-ms M pause between one loop's sweep calls (default 25)
        --settle-seconds S    how long to wait for pending orders to be swept (default 30)
        --skus K              SKUs the orders draw from (default 5)
        --request-timeout-ms M  per request (default 10000)
        --report FILE         also write the report as JSON
        --db-url URL          self-contained: this database instead of the configured one
        --service-log LEVEL   self-contained: the service's log level (default ERROR; the drill
                              provokes a warning for every late payment)
        --trigger T           who cancels expired orders: sweep (default: the drill's sweep loops)
                              or broker (the broker tier's timeout messages, its fallback sweep on
                              the service's own timer; the drill calls no sweep and reports how many
                              orders the fallback caught). Self-contained, broker turns the tier on
                              with queues of this run's own prefix, deleted afterwards.
        --broker-uri URI      broker: the RabbitMQ (default triggers.broker.uri)
        --fallback-ms M       broker, self-contained: the fallback sweep's period (default 10000)
        --gateway-sim         the gateway drill (self-contained only): the simulated WeChat Pay, Alipay
                              and Stripe run in this process; customers open their payments through the
                              service and pay at the gateway around expiry (early, at "29:58" with the
                              notification landing at "30:20", after expiry), the gateways drop, delay and
                              duplicate notifications, cancels and sweeps race them. The same seed runs once
                              per --modes value (default off,required) of payments.closeBeforeCancel, and
                              the modes' figures are printed side by side. Defaults here: --orders 600,
                              --timeout-seconds 30 (a 30-minute window scaled down, same proportions).
                              Exit 1 also when the required run took money on a cancelled order or left a
                              payment recorded nowhere.
        --modes M,M           --gateway-sim: the closeBeforeCancel modes to run (off, bestEffort, required)

      Exit status: 0 no anomaly, 1 anomalies (each listed), 2 could not run.
      """ + Args.SECRETS_HELP;

  private final PrintStream out;

  /** The broker tier on, with this run's own queue prefix; the sweep becomes its fallback on its own timer. */
  private static void brokerTier(JsonObject json, Args args, String runId) {
    JsonObject triggers = json.getJsonObject("triggers", new JsonObject());
    JsonObject b = triggers.getJsonObject("broker", new JsonObject()).copy()
        .put("enabled", true).put("prefix", "ordergate-drill-" + runId.toLowerCase());
    String uri = args.string("broker-uri", null);
    if (uri != null) {
      b.put("uri", uri);
    }
    json.put("triggers", triggers.copy().put("broker", b));
    json.put("sweep", json.getJsonObject("sweep", new JsonObject()).copy()
        .put("enabled", true).put("precise", false).put("graceSeconds", 2).put("configScanMs", 0)
        .put("periodMs", args.integer("fallback-ms", 10_000, 100, 86_400_000)));
  }

  private void awaitBroker(LocalService local) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!local.verticle.broker().ready()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the broker tier did not connect to " + local.config.broker().uri()
            .replaceFirst("//([^:@/]*):[^@/]*@", "//$1:***@") + " within 30 s");
      }
      Thread.sleep(100);
    }
    out.println("broker tier connected: queues " + local.config.broker().prefix() + ".*, tiers "
        + local.config.broker().tiersMs() + " ms, fallback sweep every " + local.config.sweep().periodMs() + " ms");
  }

  DrillCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("url", "admin-token", "api-key", "channel", "secret", "orders", "seed",
        "timeout-seconds", "connections", "sweepers", "sweep-interval-ms", "settle-seconds", "skus",
        "request-timeout-ms", "report", "db-url", "service-log", "trigger", "broker-uri", "fallback-ms", "modes"),
        Set.of("gateway-sim"));
    if (args.help()) {
      out.print(HELP);
      return Tools.OK;
    }
    String trigger = args.string("trigger", "sweep");
    if (!trigger.equals("sweep") && !trigger.equals("broker")) {
      throw new Args.UsageException("--trigger is sweep or broker, got " + trigger);
    }
    boolean broker = trigger.equals("broker");
    boolean gatewaySim = args.has("gateway-sim");
    if (gatewaySim && (args.has("url") || broker)) {
      throw new Args.UsageException("--gateway-sim runs self-contained (no --url) with the sweep trigger");
    }
    String runId = Long.toString(System.currentTimeMillis(), 36).toUpperCase();
    Drill.Options options = new Drill.Options(
        args.intValue("orders", gatewaySim ? 600 : 2000, 1, 1_000_000),
        args.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE),
        args.intValue("timeout-seconds", gatewaySim ? 30 : 3, 2, 3600),
        args.intValue("connections", 64, 1, 4096),
        args.intValue("sweepers", broker ? 0 : 2, 0, 64),
        args.integer("sweep-interval-ms", 25, 1, 600_000),
        args.intValue("settle-seconds", 30, 0, 3600),
        args.intValue("skus", 5, 1, 1000),
        args.integer("request-timeout-ms", 10_000, 100, 600_000),
        runId, trigger);
    Vertx vertx = Vertx.vertx();
    if (gatewaySim) {
      try {
        return gatewaySim(vertx, args, options);
      } finally {
        vertx.close().await();
      }
    }
    LocalService local = null;
    try {
      ServiceClient.Target target;
      if (args.has("url")) {
        String token = args.secret("admin-token");
        String channel = args.string("channel", null);
        String secret = args.secret("secret");
        if (token == null || channel == null || secret == null) {
          throw new Args.UsageException("--url needs --channel, the admin token and the channel secret (see Secrets in --help)");
        }
        target = new ServiceClient.Target(args.string("url", null), token, apiKey(args), channel, secret);
      } else {
        // The in-process service would log every late payment the drill provokes: quiet by default.
        ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("dev.ordergate"))
            .setLevel(ch.qos.logback.classic.Level.toLevel(args.string("service-log", "ERROR")));
        JsonObject json = LocalService.configJson(vertx);
        if (broker) {
          brokerTier(json, args, runId);
        }
        local = LocalService.start(vertx, json, args.secret("db-url"), out);
        target = local.target(args.string("channel", null));
        if (broker) {
          awaitBroker(local);
        }
      }
      Drill.Result result = new Drill(vertx, options, target, null, out).run();
      out.print(result.summary());
      Tools.writeReport(args.string("report", null), result.report(), out);
      return result.ok() ? Tools.OK : Tools.ANOMALY;
    } finally {
      if (local != null) {
        local.close();
        if (broker) {
          BrokerTier.deleteTopology(vertx, local.config.broker())
              .onFailure(err -> out.println("note: the drill's queues were not deleted: " + err))
              .transform(ar -> Future.succeededFuture()).await();
        }
      }
      vertx.close().await();
    }
  }

  private int gatewaySim(Vertx vertx, Args args, Drill.Options options) throws Exception {
    List<String> modes = List.of(args.string("modes", "off,required").split(","));
    for (String m : modes) {
      if (!Set.of("off", "bestEffort", "required").contains(m)) {
        throw new Args.UsageException("--modes takes off, bestEffort and required, got " + m);
      }
    }
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("dev.ordergate"))
        .setLevel(ch.qos.logback.classic.Level.toLevel(args.string("service-log", "ERROR")));
    GatewayDrill drill = GatewayDrill.start(vertx, out, 0.0001);
    List<GatewayDrill.ModeRun> runs = drill.run(LocalService.configJson(vertx), modes, options, args.secret("db-url"));
    String table = GatewayDrill.table(runs);
    out.println();
    out.println("gateway drill, seed " + options.seed() + ", " + options.orders() + " orders, window "
        + options.timeoutSeconds() + " s (a 30-minute window scaled down):");
    out.print(table);
    boolean ok = true;
    for (GatewayDrill.ModeRun r : runs) {
      ok &= r.result().ok();
      if (r.mode().equals("required")) {
        List<String> missed = GatewayDrill.targetMissed(r.result().report());
        missed.forEach(m -> out.println("TARGET MISSED (required): " + m));
        ok &= missed.isEmpty();
      }
    }
    out.println(ok ? "GATEWAY DRILL PASSED" : "GATEWAY DRILL FAILED");
    Tools.writeReport(args.string("report", null), GatewayDrill.report(runs), out);
    return ok ? Tools.OK : Tools.ANOMALY;
  }

  /** {@code --api-key-file}, {@code --api-key}, else the first key of {@code ORDERGATE_API_KEYS}. */
  static String apiKey(Args args) {
    String key = args.secret("api-key");
    return key == null ? null : key.split(",")[0].trim();
  }
}
