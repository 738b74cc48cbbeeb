package dev.ordergate.tools;

import dev.ordergate.config.AppConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.EmbeddedDatabase;
import dev.ordergate.reconcile.ReconcileReport;
import dev.ordergate.reconcile.Reconciler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

import java.io.File;
import java.io.PrintStream;
import java.util.Set;

/** {@code ordergate reconcile}: checks every invariant over the database; exit 1 lists each violation. */
final class ReconcileCommand {

  static final String HELP = """
      usage: ordergate reconcile [--db-url URL | --url URL --admin-token TOKEN] [--limit N] [--report FILE]

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

      Exit status: 0 all invariants hold, 1 violations (each listed), 2 could not run.
      """ + Args.SECRETS_HELP;

  private final PrintStream out;

  ReconcileCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("db-url", "url", "admin-token", "limit", "report"), Set.of());
    if (args.help()) {
      out.print(HELP);
      return Tools.OK;
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
    Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(1)).connectingTo(db.connectOptions())
        .using(vertx).build();
    try {
      return new Reconciler(pool, limit).run().await();
    } finally {
      pool.close().await();
      if (embedded != null) {
        embedded.close();
      }
    }
  }
}
