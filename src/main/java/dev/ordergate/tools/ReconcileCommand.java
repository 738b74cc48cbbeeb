package dev.ordergate.tools;

import dev.ordergate.config.AppConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.EmbeddedDatabase;
import dev.ordergate.channel.GatewayFailure;
import dev.ordergate.channel.Outbound;
import dev.ordergate.domain.Rejection;
import dev.ordergate.exceptions.ExceptionRecorder;
import dev.ordergate.exceptions.RefundPolicy;
import dev.ordergate.gate.PaymentGate;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.reconcile.GatewayReconciler;
import dev.ordergate.reconcile.GatewayReport;
import dev.ordergate.reconcile.ReconcileReport;
import dev.ordergate.reconcile.Reconciler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

import java.io.File;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.Set;

/** {@code ordergate reconcile}: checks every invariant over the database; exit 1 lists each violation. */
final class ReconcileCommand {

  static final String HELP = """
      usage: ordergate reconcile [--db-url URL | --url URL --admin-token TOKEN] [--limit N] [--report FILE]
             ordergate reconcile --gateway CHANNEL --date YYYY-MM-DD [--apply] [--db-url URL | --url URL ...]

      Checks the order invariants over the database, read only, in one snapshot:
        status = the 'to' of the last transition; at most one exit from PENDING_PAYMENT;
        per SKU available = ledger total; a cancelled order has exactly one RETURN per item equal to
        what it took, pending and paid orders none; coupons USED iff PAID, LOCKED iff pending, else
        AVAILABLE; every SUCCESS receipt is the one applied payment of a PAID order with the same
        amount or in an exception order; a PAID order has exactly one applied receipt, a CANCELLED
        one none; REFUNDED exception orders have a delivered refund request (when the outbox exists).

        --db-url URL        database to check (default: db.url or ORDERGATE_DB_URL from the config,
                            else the embedded database in db.embeddedDataDir; stop the service first)
        --url URL           ask a running service instead (GET /admin/reconcile), with
        --admin-token T     its admin token (default: admin.token / ORDERGATE_ADMIN_TOKEN)
        --limit N           violations listed per invariant (default 1000; all are counted)
        --report FILE       also write the report as JSON

      --gateway CHANNEL --date YYYY-MM-DD: instead, reconciles that day of the channel's gateway (its bill:
        WeChat Pay trade bill, Alipay bill download, Stripe's lists of PaymentIntents and refunds; the day is the
        gateway's: China time for wechatpay-v3 and alipay, UTC for stripe) against our receipts and refunds:
        paid there without a receipt here (a lost notification), amounts that differ, SUCCESS here but not paid
        there, refunds on one side only. Uses the config's channel keys (payments.channels.CHANNEL).
        --config FILE       the service's config file (default conf/config.json or ORDERGATE_CONF)
        --apply             put each payment missing here through the payment gate (source PAYMENT_QUERY, the
                            notification's own idempotency key: its late notification is a duplicate); without
                            it nothing is written. Not with --url (GET /admin/reconcile/gateway reports only).

      Exit status: 0 all invariants hold (gateway: no finding), 1 violations or findings (each listed; a finding
      resolved by --apply still counts, the next run is clean), 2 could not run (bad arguments, database or
      gateway unreachable).
      """ + Args.SECRETS_HELP;

  private final PrintStream out;

  ReconcileCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("db-url", "url", "admin-token", "limit", "report", "gateway", "date", "config"),
        Set.of("apply"));
    if (args.help()) {
      out.print(HELP);
      return Tools.OK;
    }
    if (args.has("gateway")) {
      return gateway(args);
    }
    int limit = args.intValue("limit", Reconciler.DEFAULT_LIMIT, 1, 1_000_000);
    Vertx vertx = Vertx.vertx();
    try {
      ReconcileReport report = args.has("url") ? viaService(vertx, args) : viaDatabase(vertx, args, limit);
      out.print(report.summary());
      Tools.writeReport(args.string("report", null), report.toJson(), out);
      return report.ok() ? Tools.OK : Tools.ANOMALY;
    } finally {
      vertx.close().await();
    }
  }

  private ReconcileReport viaService(Vertx vertx, Args args) {
    String token = args.secret("admin-token");
    if (token == null) {
      token = AppConfig.from(LocalService.configJson(vertx)).adminToken();
    }
    try (ServiceClient client = new ServiceClient(vertx,
        new ServiceClient.Target(args.string("url", null), token, null, null, null), 1, 600_000)) {
      JsonObject body = client.expectJson(client.send(HttpMethod.GET, "/admin/reconcile", null, true), 200,
          "GET /admin/reconcile").await();
      return ReconcileReport.fromJson(body);
    }
  }

  private ReconcileReport viaDatabase(Vertx vertx, Args args, int limit) throws Exception {
    return withDatabase(vertx, args, pool -> new Reconciler(pool, limit).run().await());
  }

  /** Opens the database of {@code --db-url} (else the config's, else the embedded one), runs {@code work}, closes it. */
  private <T> T withDatabase(Vertx vertx, Args args, java.util.function.Function<Pool, T> work) throws Exception {
    String url = args.secret("db-url");
    EmbeddedDatabase embedded = null;
    if (url == null) {
      AppConfig config = AppConfig.from(LocalService.configJson(vertx));
      if (config.dbUrl() != null) {
        url = config.dbUrl();
      } else {
        File dir = new File(config.embeddedDataDir());
        if (!new File(dir, "postgresql.conf").isFile()) {
          throw new Args.UsageException("no db.url configured and no embedded database in " + dir
              + ": give --db-url or --url");
        }
        embedded = EmbeddedDatabase.start(dir);
        url = embedded.url().uri();
      }
    }
    DbUrl db = new DbUrl(url);
    out.println("checking " + db.jdbcUrl());
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(2)).connectingTo(db.connectOptions())
        .using(vertx).build();
    try {
      return work.apply(pool);
    } finally {
      pool.close().await();
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  // ---- against the gateway's bill (issue 10) ------------------------------------------------------

  private int gateway(Args args) throws Exception {
    String channel = args.string("gateway", null);
    LocalDate day;
    try {
      day = LocalDate.parse(String.valueOf(args.string("date", null)));
    } catch (DateTimeParseException e) {
      throw new Args.UsageException("--date YYYY-MM-DD is required with --gateway (the gateway's day)");
    }
    if (args.has("url") && args.has("apply")) {
      throw new Args.UsageException("--apply needs the database: GET /admin/reconcile/gateway only reports");
    }
    Vertx vertx = Vertx.vertx();
    try {
      GatewayReport report;
      try {
        report = args.has("url") ? gatewayViaService(vertx, args, channel, day)
            : withDatabase(vertx, args, pool -> gatewayViaDatabase(vertx, pool, configJson(vertx, args), channel, day,
                args.has("apply")));
      } catch (GatewayFailure g) {
        out.println("the gateway of channel " + g.channel() + " did not give its bill: " + g.getMessage());
        return Tools.FAILED;
      } catch (Rejection r) {
        throw new Args.UsageException(r.getMessage());
      }
      out.print(report.summary());
      Tools.writeReport(args.string("report", null), report.toJson(), out);
      return report.ok() ? Tools.OK : Tools.ANOMALY;
    } finally {
      vertx.close().await();
    }
  }

  private static JsonObject configJson(Vertx vertx, Args args) {
    return args.has("config")
        ? dev.ordergate.config.ConfigLoader.retriever(vertx, args.string("config", null), 0).getConfig().await()
        : LocalService.configJson(vertx);
  }

  private GatewayReport gatewayViaDatabase(Vertx vertx, Pool pool, JsonObject configJson, String channel, LocalDate day,
                                           boolean apply) {
    AppConfig config = AppConfig.from(configJson);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    OutboxSignal signal = new OutboxSignal();
    PaymentGate gate = new PaymentGate(pool, new Metrics(registry), new OutboxWriter(signal),
        new ExceptionRecorder(new RefundPolicy(config.autoRefundMaxCents(), config.channels()), signal));
    Outbound outbound = new Outbound(WebClient.create(vertx, new WebClientOptions().setFollowRedirects(false)),
        config.gatewayOps().gatewayTimeoutMs(), registry);
    return GatewayReconciler.create(pool, config.channels(), outbound, Clock.systemUTC(), gate).run(channel, day, apply).await();
  }

  private GatewayReport gatewayViaService(Vertx vertx, Args args, String channel, LocalDate day) {
    String token = args.secret("admin-token");
    if (token == null) {
      token = AppConfig.from(LocalService.configJson(vertx)).adminToken();
    }
    String path = "/admin/reconcile/gateway?channel=" + URLEncoder.encode(channel, StandardCharsets.UTF_8) + "&date=" + day;
    try (ServiceClient client = new ServiceClient(vertx,
        new ServiceClient.Target(args.string("url", null), token, null, null, null), 1, 600_000)) {
      var resp = client.send(HttpMethod.GET, path, null, true).await();
      if (resp.statusCode() == 502 || resp.statusCode() == 503) {
        JsonObject err = resp.bodyAsJsonObject();
        throw GatewayFailure.unreachable(err.getString("channel", channel), err.getString("gatewayCode", "HTTP_" + resp.statusCode()),
            err.getString("message"));
      }
      if (resp.statusCode() != 200) {
        throw new Args.UsageException("GET " + path + ": HTTP " + resp.statusCode() + " " + resp.bodyAsString());
      }
      return GatewayReport.fromJson(resp.bodyAsJsonObject());
    }
  }
}
