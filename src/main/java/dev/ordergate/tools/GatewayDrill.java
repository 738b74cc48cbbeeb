package dev.ordergate.tools;

import dev.ordergate.config.ChannelConfig;
import dev.ordergate.sim.Sender;
import dev.ordergate.sim.SimApis;
import dev.ordergate.sim.SimConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;

import java.io.PrintStream;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code drill --gateway-sim}: the seed's window, measured. The simulated gateways run in this process
 * ({@code gateway-sim serve}'s code, on an ephemeral port); for each {@code payments.closeBeforeCancel} mode
 * (default {@code off}, then {@code required}) the service is started in this process with its sandbox
 * gateway channels pointed at the simulator, the same seeded gateway drill runs against it
 * ({@link Drill#gateway}), and the modes' figures are printed side by side.
 */
final class GatewayDrill {

  /** One mode's run: its drill result. */
  record ModeRun(String mode, Drill.Result result) {}

  /** The gateway channels of the shipped sandbox, by name -> kind. */
  static final Map<String, String> CHANNELS = Map.of(
      "sandbox-wechatpay", "wechatpay-v3", "sandbox-alipay", "alipay", "sandbox-stripe", "stripe");

  private final Vertx vertx;
  private final PrintStream out;
  private final HttpServer sim;
  private final WebClient http;

  private GatewayDrill(Vertx vertx, PrintStream out, HttpServer sim) {
    this.vertx = vertx;
    this.out = out;
    this.sim = sim;
    this.http = WebClient.create(vertx);
  }

  /** Starts the simulator (retries scaled by {@code retryScale}: one minute becomes 6 ms at 0.0001). */
  static GatewayDrill start(Vertx vertx, PrintStream out, double retryScale) throws Exception {
    SimConfig config = SimConfig.load(SimConfig.DEFAULT_PATH);
    SimApis apis = SimApis.load(vertx, SimConfig.DEFAULT_PATH, config, Clock.systemUTC());
    HttpServer server = GatewaySimCommand.serve(vertx, config, apis, new Sender(vertx, WebClient.create(vertx),
        retryScale, 16), "127.0.0.1", 0, "http://127.0.0.1:1").await();
    out.println("gateway simulator at http://127.0.0.1:" + server.actualPort() + " (in this process)");
    return new GatewayDrill(vertx, out, server);
  }

  String url() {
    return "http://127.0.0.1:" + sim.actualPort();
  }

  /**
   * The service's config for one mode: the sandbox gateway channels call this simulator, close before
   * cancel as {@code mode}, its deferral scaled like the window (600 s of 1800: a third of it).
   */
  JsonObject serviceConfig(JsonObject base, String mode, int timeoutSeconds) {
    JsonObject c = base.copy();
    // The sandbox channels and keys are development-only: the gateway drill is a dev-mode service whatever
    // the database (a db.url alone would mean production, which refuses them).
    c.remove("ORDERGATE_MODE");
    c.put("mode", "dev");
    JsonObject payments = c.getJsonObject("payments", new JsonObject());
    c.put("payments", payments);
    JsonObject channels = payments.getJsonObject("channels", new JsonObject());
    payments.put("channels", channels);
    for (Map.Entry<String, String> ch : CHANNELS.entrySet()) {
      JsonObject block = channels.getJsonObject(ch.getKey());
      if (block == null) {
        throw new Args.UsageException("--gateway-sim needs the sandbox channel " + ch.getKey()
            + " in the config (conf/config.json ships it)");
      }
      block.put(ch.getValue().equals("alipay") ? "gatewayUrl" : "baseUrl",
          url() + switch (ch.getValue()) {
            case "wechatpay-v3" -> "/wechatpay";
            case "alipay" -> "/alipay/gateway.do";
            default -> "/stripe";
          });
    }
    payments.put("closeBeforeCancel", mode).put("closeDeferMaxSeconds", Math.max(1, timeoutSeconds / 3))
        .put("gatewayTimeoutMs", 3000);
    return c;
  }

  /** Runs the drill once per mode, each against a fresh in-process service on {@code dbUrl} (null: configured or embedded). */
  List<ModeRun> run(JsonObject base, List<String> modes, Drill.Options template, String dbUrl) throws Exception {
    List<ModeRun> runs = new ArrayList<>();
    for (String mode : modes) {
      out.println();
      out.println("== payments.closeBeforeCancel: " + mode);
      LocalService local = LocalService.start(vertx, serviceConfig(base, mode, template.timeoutSeconds()), dbUrl, out);
      try {
        Drill.Options options = new Drill.Options(template.orders(), template.seed(), template.timeoutSeconds(),
            template.connections(), template.sweepers(), template.sweepIntervalMs(), template.settleSeconds(),
            template.skus(), template.requestTimeoutMs(), template.runId() + mode.toUpperCase().charAt(0), "sweep");
        Map<String, String> kinds = new LinkedHashMap<>();
        CHANNELS.forEach((name, kind) -> {
          ChannelConfig c = local.config.channels().get(name);
          if (c != null) {
            kinds.put(name, kind);
          }
        });
        Drill.Result result = Drill.gateway(vertx, options, local.target(null), side(local), kinds, out).run();
        out.print(result.summary());
        runs.add(new ModeRun(mode, result));
      } finally {
        local.close();
      }
    }
    return runs;
  }

  /**
   * The simulator's control API, over HTTP as an external simulator would be driven, and the service's
   * reconciliation against the gateways' bills in process ({@code GatewayReconciler}, so that it can apply).
   */
  Drill.GatewaySide side(LocalService local) {
    return new Drill.GatewaySide() {
      @Override
      public Future<JsonObject> reconcile(String channel, java.time.LocalDate day, boolean apply) {
        return local.verticle.gatewayReconciler().run(channel, day, apply).map(dev.ordergate.reconcile.GatewayReport::toJson);
      }

      @Override
      public Future<JsonObject> pay(String kind, String ref, JsonObject spec) {
        return http.postAbs(url() + "/sim/trades/" + kind + "/" + ref + "/pay").timeout(60_000)
            .sendBuffer(Buffer.buffer(spec.encode()))
            .map(resp -> resp.bodyAsJsonObject().put("httpStatus", resp.statusCode()));
      }

      @Override
      public Future<Void> scan(String kind, String ref) {
        return http.postAbs(url() + "/sim/trades/" + kind + "/" + ref + "/scan").send().mapEmpty();
      }

      @Override
      public Future<JsonArray> trades() {
        return http.getAbs(url() + "/sim/trades").send().map(resp -> resp.bodyAsJsonObject().getJsonArray("trades"));
      }
    };
  }

  /** The modes side by side, one row per figure. */
  static String table(List<ModeRun> runs) {
    List<String[]> rows = new ArrayList<>();
    rows.add(header(runs));
    rows.add(row(runs, "orders created", r -> String.valueOf(r.getLong("created"))));
    rows.add(row(runs, "payments taken at the gateways", r -> String.valueOf(g(r).getLong("takenAtGateway"))));
    rows.add(row(runs, "payments refused by the gateway (trade closed or past its deadline)",
        r -> String.valueOf(g(r).getJsonObject("counts").getLong("pay.refusedByGateway", 0L))));
    rows.add(row(runs, "**money taken on cancelled orders** (count / amount, CNY)", r -> {
      JsonObject m = g(r).getJsonObject("moneyOnCancelledOrders");
      return m.getLong("count") + " / " + cents(m.getLong("amountCents"));
    }));
    rows.add(row(runs, "of which recorded as exception orders", r ->
        String.valueOf(g(r).getJsonObject("moneyOnCancelledOrders").getLong("recordedAsExceptions"))));
    rows.add(row(runs, "exception orders (all kinds)", r -> String.valueOf(g(r).getJsonObject("exceptionOrders").getLong("total"))));
    rows.add(row(runs, "refunds requested", r -> String.valueOf(g(r).getLong("refundsRequested"))));
    rows.add(row(runs, "paid by the query (close before cancel found the payment)",
        r -> String.valueOf(g(r).getLong("paidByQuery"))));
    rows.add(row(runs, "notifications dropped (of taken payments) / recovered", r -> {
      JsonObject l = g(r).getJsonObject("lostNotifications");
      return l.getLong("dropped") + " / " + l.getLong("recoveredByQuery");
    }));
    rows.add(row(runs, "payments taken and recorded nowhere (count / amount, CNY)", r -> {
      JsonObject u = g(r).getJsonObject("unrecordedPayments");
      return u.getLong("count") + " / " + cents(u.getLong("amountCents"));
    }));
    rows.add(row(runs, "callbacks, first answers", r -> firsts(r.getJsonObject("callbackOutcomes"))));
    rows.add(row(runs, "final states", r -> Drill.line(r.getJsonObject("finalStatus"))));
    rows.add(row(runs, "**anomalies** (drill invariants + reconcile)", r -> String.valueOf(r.getLong("anomalyCount"))));
    rows.add(row(runs, "reconcile (invariants)", r -> r.getJsonObject("reconciliation").getBoolean("ok")
        ? "all hold" : r.getJsonObject("reconciliation").getLong("violations") + " violations"));
    rows.add(row(runs, "reconcile against the gateway", r -> {
      JsonObject rec = g(r).getJsonObject("gatewayReconcile");
      return !rec.getBoolean("available", true) ? "not available in this build" : rec.getString("summary", rec.encode());
    }));
    rows.add(row(runs, "seconds (total)", r -> String.valueOf(r.getJsonObject("seconds").getDouble("total"))));
    StringBuilder sb = new StringBuilder();
    String nl = System.lineSeparator();
    for (int i = 0; i < rows.size(); i++) {
      sb.append("| ").append(String.join(" | ", rows.get(i))).append(" |").append(nl);
      if (i == 0) {
        sb.append("|---".repeat(rows.get(0).length)).append("|").append(nl);
      }
    }
    return sb.toString();
  }

  private static String[] header(List<ModeRun> runs) {
    String[] h = new String[runs.size() + 1];
    h[0] = "figure";
    for (int i = 0; i < runs.size(); i++) {
      h[i + 1] = "`" + runs.get(i).mode() + "`";
    }
    return h;
  }

  private static String[] row(List<ModeRun> runs, String label, java.util.function.Function<JsonObject, String> cell) {
    String[] r = new String[runs.size() + 1];
    r[0] = label;
    for (int i = 0; i < runs.size(); i++) {
      r[i + 1] = cell.apply(runs.get(i).result().report());
    }
    return r;
  }

  private static JsonObject g(JsonObject report) {
    return report.getJsonObject("gateway");
  }

  private static String cents(long c) {
    return String.format(java.util.Locale.ROOT, "%d.%02d", c / 100, c % 100);
  }

  private static String firsts(JsonObject outcomes) {
    JsonObject o = new JsonObject();
    outcomes.forEach(e -> {
      if (!e.getKey().startsWith("duplicate(")) {
        o.put(e.getKey(), e.getValue());
      }
    });
    return Drill.line(o);
  }

  /**
   * Where a {@code required} run misses the target: money taken on a cancelled order (its trade was closed
   * at the gateway before the cancel, so none may be taken after it), or a payment taken at the gateway
   * that the service recorded nowhere (a lost notification neither the query nor reconciliation recovered).
   */
  static List<String> targetMissed(JsonObject report) {
    List<String> missed = new ArrayList<>();
    JsonObject m = g(report).getJsonObject("moneyOnCancelledOrders");
    if (m.getLong("count") > 0) {
      missed.add(m.getLong("count") + " payment(s) taken on cancelled orders (" + cents(m.getLong("amountCents")) + ")");
    }
    JsonObject u = g(report).getJsonObject("unrecordedPayments");
    if (u.getLong("count") > 0) {
      missed.add(u.getLong("count") + " payment(s) taken at the gateway and recorded nowhere");
    }
    return missed;
  }

  /** The combined report: each mode's drill report under its mode, and the table. */
  static JsonObject report(List<ModeRun> runs) {
    JsonObject modes = new JsonObject();
    runs.forEach(r -> modes.put(r.mode(), r.result().report()));
    return new JsonObject().put("modes", modes).put("table", table(runs));
  }
}
