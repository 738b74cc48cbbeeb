package dev.ordergate;

import dev.ordergate.broker.BrokerTier;
import dev.ordergate.config.AppConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.db.Migrations;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Sql;
import dev.ordergate.gate.CallbackCoalescer;
import dev.ordergate.gate.CancelGate;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.gate.GateHook;
import dev.ordergate.gate.PaymentGate;
import dev.ordergate.channel.GatewayClient;
import dev.ordergate.channel.GatewayClients;
import dev.ordergate.channel.Outbound;
import dev.ordergate.http.PaymentRoutes;
import dev.ordergate.payment.CloseBeforeCancel;
import dev.ordergate.payment.PaymentAttempts;
import io.vertx.ext.web.client.WebClient;
import java.util.Map;
import dev.ordergate.exceptions.ExceptionRecorder;
import dev.ordergate.exceptions.ExceptionService;
import dev.ordergate.exceptions.RefundPolicy;
import dev.ordergate.auth.AuditLog;
import dev.ordergate.auth.LoginThrottle;
import dev.ordergate.auth.Sessions;
import dev.ordergate.console.OrderRecords;
import dev.ordergate.console.Overview;
import dev.ordergate.http.AdminAuth;
import dev.ordergate.http.AdminRoutes;
import dev.ordergate.http.ConsoleApiRoutes;
import dev.ordergate.http.ConsoleRoutes;
import dev.ordergate.http.SessionRoutes;
import dev.ordergate.http.ApiAuth;
import dev.ordergate.http.AuthThrottle;
import dev.ordergate.http.ContentTypeGuard;
import dev.ordergate.http.RawBody;
import dev.ordergate.http.ExceptionRoutes;
import dev.ordergate.http.OutboxRoutes;
import dev.ordergate.http.CallbackRoutes;
import dev.ordergate.http.ContractRoutes;
import dev.ordergate.http.Failures;
import dev.ordergate.http.HealthRoutes;
import dev.ordergate.http.ConnectionLimits;
import dev.ordergate.http.InputGuard;
import dev.ordergate.http.RejectionLog;
import dev.ordergate.lifecycle.GracefulShutdown;
import dev.ordergate.http.OrderRoutes;
import dev.ordergate.http.ReconcileRoutes;
import dev.ordergate.http.SweepRoutes;
import dev.ordergate.metrics.DatabaseProbe;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.orders.CatalogService;
import dev.ordergate.orders.OrderService;
import dev.ordergate.outbox.OutboxEventType;
import dev.ordergate.outbox.OutboxMetrics;
import dev.ordergate.outbox.OutboxRelay;
import dev.ordergate.outbox.OutboxService;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import dev.ordergate.refund.GatewayRefunds;
import dev.ordergate.channel.Channels;
import dev.ordergate.channel.NotificationLog;
import dev.ordergate.reconcile.GatewayReconciler;
import dev.ordergate.reconcile.ReconcileMonitor;
import dev.ordergate.reconcile.Reconciler;
import dev.ordergate.reminder.Reminders;
import dev.ordergate.sweep.BatchHook;
import dev.ordergate.sweep.SweepMetrics;
import dev.ordergate.sweep.SweepTuning;
import dev.ordergate.sweep.Sweeper;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.List;
import java.util.UUID;

/**
 * The service: migrates the schema, builds the pool and the components, mounts the routes and
 * listens. All wiring is here; the behaviour lives in the packages named after it.
 */
public final class OrdergateVerticle extends VerticleBase {

  private static final Logger log = LoggerFactory.getLogger(OrdergateVerticle.class);
  public static final long BODY_LIMIT_BYTES = 64 * 1024;
  static final String CALLBACKS_PREFIX = "/api/callbacks/";

  private final AppConfig config;
  private final DbUrl dbUrl;
  private final PrometheusMeterRegistry registry;
  private final Clock clock;
  /** The config file watched for live sweep tuning; null: no watching. */
  private final String configPath;
  private Pool pool;
  private PaymentGate paymentGate;
  private HttpServer server;
  private HttpServer managementServer;
  private CallbackCoalescer coalescer;
  private long expiryTimer = -1;
  private ReconcileMonitor reconcileMonitor;
  private GatewayRefunds gatewayRefunds;
  private GatewayReconciler gatewayReconciler;
  private DatabaseProbe databaseProbe;
  private final OutboxSignal outboxSignal = new OutboxSignal();
  private OutboxMetrics outboxMetrics;
  private Sweeper sweeper;
  private SweepTuning sweepTuning;
  private final GracefulShutdown shutdown;
  /** False only in the fuzz test's deliberately broken twin ({@link #withoutInputGuard()}). */
  private boolean inputGuard = true;
  private Router mainRouter;
  private Reminders reminders;
  private BrokerTier broker;

  public OrdergateVerticle(AppConfig config, DbUrl dbUrl, PrometheusMeterRegistry registry, Clock clock) {
    this(config, dbUrl, registry, clock, null);
  }

  public OrdergateVerticle(AppConfig config, DbUrl dbUrl, PrometheusMeterRegistry registry, Clock clock,
                           String configPath) {
    this.config = config;
    this.dbUrl = dbUrl;
    this.registry = registry;
    this.clock = clock;
    this.configPath = configPath;
    this.shutdown = new GracefulShutdown(config.server().shutdownGraceMs(), config.server().shutdownDrainDelayMs());
  }

  /**
   * TEST ONLY: the service without {@link InputGuard}, so the fuzz test can show that it catches
   * a service whose validation is gone. Never used outside the tests.
   */
  public OrdergateVerticle withoutInputGuard() {
    inputGuard = false;
    return this;
  }

  @Override
  public Future<?> start() {
    return vertx.executeBlocking(() -> Migrations.migrate(dbUrl))
        .compose(applied -> {
          log.info("schema ready ({} migrations applied now)", applied);
          pool = PgBuilder.pool()
              .with(new PoolOptions().setMaxSize(config.dbPoolSize()).setName("ordergate"))
              // Prepared statements are parsed and planned once per connection, not on every execution.
              .connectingTo(sessionSettings(dbUrl.connectOptions()).setPipeliningLimit(256)
                  .setCachePreparedStatements(true).setPreparedStatementCacheMaxSize(256)
                  .setPreparedStatementCacheSqlFilter(Sql::keptPrepared))
              .using(vertx)
              .build();
          Router management = Router.router(vertx);
          ConnectionLimits limits = new ConnectionLimits(vertx, config.server(), registry);
          RejectionLog rejections = new RejectionLog(registry, config.server().rejectionLogPerSecond());
          InputGuard guard = new InputGuard(rejections, CALLBACKS_PREFIX);
          Router main = router(management, guard, rejections);
          mainRouter = main;
          // No cleartext HTTP/2 (README, Security): callers speak HTTP/1.1, and h2c only adds attack surface.
          return vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(false))
              .requestHandler(management)
              .listen(config.managementPort(), config.managementHost())
              .compose(m -> {
                managementServer = m;
                log.info("management listener (metrics, health) on {}:{}", config.managementHost(), m.actualPort());
                // The main listener's limits (ConnectionLimits.options turns h2c off as well).
                return vertx.createHttpServer(limits.options(config.httpPort(), config.httpHost()))
                    .connectionHandler(limits::connection)
                    .requestHandler(limits.requests(inputGuard ? guard.beforeRouting(main) : main))
                    .listen();
              });
        })
        .compose(s -> config.outbox().enabled()
            ? vertx.deployVerticle(relay(new OutboxRelay(pool, config.outbox(), config.channels(), outboxMetrics,
                outboxSignal, "relay-" + UUID.randomUUID().toString().substring(0, 8)))).map(s)
            : Future.succeededFuture(s))
        .compose(s -> broker == null ? Future.succeededFuture(s) : broker.start().map(s))
        .onSuccess(s -> {
          server = s;
          reconcileMonitor.start();
          gatewayRefunds.start();
          databaseProbe = new DatabaseProbe(vertx, pool, registry, DatabaseProbe.PERIOD_MS);
          databaseProbe.start();
          log.info("ordergate listening on {}:{}", config.httpHost(), s.actualPort());
        })
        .compose(s -> sweeper.start())
        .compose(v -> reminders == null ? Future.succeededFuture() : reminders.start())
        .compose(v -> configPath == null || config.sweep().configScanMs() <= 0 ? Future.succeededFuture()
            : SweepTuning.watch(vertx, configPath, config.sweep().configScanMs(), sweeper)
                .onSuccess(t -> sweepTuning = t));
  }

  /**
   * What the gate assumes of every session, set at connection start so that a server or database
   * default cannot change it: durable commits (an acknowledged payment survives a crash), READ COMMITTED,
   * and bounded waits, so a row locked by someone else costs a 503 (the gateway retries), not a stall.
   * No JIT: every statement here is short, and JIT compiles a plan whose estimated cost passes
   * {@code jit_above_cost}, whatever it really costs. The outbox relay's claim, planned on a growing table,
   * crossed it and spent 60 to 110 ms compiling each 2 ms claim: the relay drained a 40,000-event backlog
   * at a third of its speed, and fell behind under load (issue 13). With every sink type going to the log,
   * {@code ordergate.outbox_stream}: the events are written for the log sink's cursor (V18).
   */
  private io.vertx.pgclient.PgConnectOptions sessionSettings(io.vertx.pgclient.PgConnectOptions options) {
    if (config.outbox().streams()) {
      // The log sink's events are written for its cursor (OutboxSql.WRITTEN_STATUS, V18).
      options.addProperty(OutboxSql.STREAM_SETTING, "on");
    }
    return options
        .addProperty("jit", "off")
        .addProperty("synchronous_commit", "on")
        .addProperty("default_transaction_isolation", "read committed")
        .addProperty("lock_timeout", Long.toString(config.dbLockTimeoutMs()))
        .addProperty("statement_timeout", Long.toString(config.dbStatementTimeoutMs()));
  }

  private Router router(Router management, InputGuard guard, RejectionLog rejections) {
    Metrics metrics = new Metrics(registry);
    outboxMetrics = new OutboxMetrics(registry);
    OutboxWriter outbox = new OutboxWriter(outboxSignal);
    ExceptionRecorder exceptionRecorder = new ExceptionRecorder(
        new RefundPolicy(config.autoRefundMaxCents(), config.channels()), outboxSignal);
    CancellationEffects cancellationEffects = new CancellationEffects(outbox);
    paymentGate = new PaymentGate(pool, metrics, outbox, exceptionRecorder);
    // Payment attempts and close before cancel (issue 10): outbound calls, never inside a transaction.
    Outbound outbound = new Outbound(WebClient.create(vertx, new io.vertx.ext.web.client.WebClientOptions().setFollowRedirects(false),
            new io.vertx.core.http.PoolOptions().setHttp1MaxSize(Math.max(16, 2 * config.gatewayOps().gatewayConcurrency()))),
            config.gatewayOps().gatewayTimeoutMs(), registry);
    Map<String, GatewayClient> gatewayClients = GatewayClients.all(config.channels(), outbound, clock);
    // Reconciliation against the gateways' bills (issue 10): same outbound clients and the same payment gate.
    gatewayReconciler = GatewayReconciler.create(pool, config.channels(), outbound, clock, paymentGate);
    CloseBeforeCancel closeBeforeCancel = new CloseBeforeCancel(pool, gatewayClients, paymentGate,
        config.gatewayOps(), registry);
    // Refunds through the gateways (issue 10): the outbox's REFUND_REQUESTED route and the refund notifications.
    gatewayRefunds = new GatewayRefunds(vertx, pool, config.channels(), gatewayClients,
        config.gatewayOps().refundQuerySeconds());
    GatewayRefunds refunds = gatewayRefunds;
    NotificationLog notificationLog = new NotificationLog(pool);
    CancelGate cancelGate = new CancelGate(pool, cancellationEffects, metrics, GateHook.NONE, closeBeforeCancel);
    coalescer = new CallbackCoalescer(paymentGate, config.callbacks().maxBatch(), config.callbacks().maxInFlight(),
        config.callbacks().maxQueued(), config.callbacks().queueTimeoutMs(), config.callbacks().spareSlotMinBatch(),
        config.callbacks().spareSlotAfterMs(), CallbackCoalescer.Scheduler.of(vertx), registry);
    CallbackCoalescer queue = coalescer;
    expiryTimer = vertx.setPeriodic(Math.max(50, config.callbacks().queueTimeoutMs() / 4), id -> queue.expire());
    sweeper = new Sweeper(vertx, pool, cancellationEffects, new SweepMetrics(metrics, config.broker().enabled()),
        config.sweep(), Sweeper.defaultInstanceId(), clock, BatchHook.NONE, closeBeforeCancel);
    broker = config.broker().enabled()
        ? new BrokerTier(vertx, config.broker(), cancelGate, registry, sweeper.instanceId()) : null;
    reminders = config.reminders().enabled()
        ? new Reminders(vertx, pool, config.reminders(), outboxSignal, registry, sweeper.instanceId()) : null;
    OrderService orders = new OrderService(pool, metrics, config.paymentTimeoutSeconds(), order -> {
      sweeper.orderCreated(order);
      if (reminders != null) {
        reminders.orderCreated(order);
      }
    }, config.ordersCurrency(), broker == null ? null : outbox);
    CatalogService catalog = new CatalogService(pool);

    Router root = Router.router(vertx);
    root.route().handler(ConsoleRoutes::securityHeaders);
    // No route takes uploads, and only payment notifications take forms (parsed from their raw bytes).
    root.route().handler(new ContentTypeGuard(CALLBACKS_PREFIX));
    root.route(CALLBACKS_PREFIX + "*").handler(new RawBody(BODY_LIMIT_BYTES));
    root.routeWithRegex("^(?!" + CALLBACKS_PREFIX + ").*")
        .handler(BodyHandler.create(false).setBodyLimit(BODY_LIMIT_BYTES));
    // The one validation step for every route, once the body is read (RawBody or BodyHandler).
    root.route().handler(inputGuard ? guard : RoutingContext::next);
    root.get("/health/ready").handler(shutdown::readiness);
    management.get("/health/ready").handler(shutdown::readiness);
    HealthRoutes health = new HealthRoutes(pool, registry, coalescer::oldestRunnableWaitMs,
        config.callbacks().readyMaxWaitMs(), this::optionalHealth);
    health.mount(vertx, root);
    health.mount(vertx, management);
    health.mountMetrics(management);
    new ContractRoutes().mount(vertx, root);
    management.route().failureHandler(Failures::handle);
    ApiAuth apiAuth = new ApiAuth(config.apiKeys());
    for (String guarded : new String[] {"/api/orders", "/api/orders/*", "/api/inventory/*", "/api/coupons/*"}) {
      root.route(guarded).handler(apiAuth);
    }
    root.route("/api/*").subRouter(new OrderRoutes(orders, catalog, cancelGate).router(vertx));
    root.route("/api/*").subRouter(new PaymentRoutes(new PaymentAttempts(pool, config.channels(), gatewayClients))
        .router(vertx));
    root.route("/api/*").subRouter(new CallbackRoutes(Channels.all(config.channels(), clock),
        coalescer::submit, (name, n) -> n.refund() != null ? refunds.notified(name, n) : notificationLog.record(name, n),
        metrics).router(vertx));
    // Operator console (issue 11): sessions or the bearer token in front of every admin route, audited changes.
    AdminAuth adminAuth = new AdminAuth(config.adminToken(), new Sessions(pool, config.console()),
        new AuthThrottle(clock, registry));
    AuditLog audit = new AuditLog(pool);
    root.route("/admin/*").subRouter(new SessionRoutes(adminAuth, new LoginThrottle(pool, config.console()), audit)
        .router(vertx));
    AdminRoutes admin = new AdminRoutes(adminAuth, audit, catalog, cancelGate);
    root.route("/admin/*").subRouter(admin.router(vertx));
    root.route("/admin/*").subRouter(new OutboxRoutes(new OutboxService(pool, outboxSignal), audit)
        .router(vertx, admin::authorize));
    root.route("/admin/*").subRouter(new ExceptionRoutes(new ExceptionService(pool), audit).router(vertx, admin::authorize));
    root.route("/admin/*").subRouter(new SweepRoutes(admin, sweeper).router(vertx));
    reconcileMonitor = new ReconcileMonitor(vertx, new Reconciler(pool), registry, config.reconcile().periodMs());
    root.route("/admin/*").subRouter(new ReconcileRoutes(admin, reconcileMonitor, gatewayReconciler).router(vertx));
    root.route("/admin/*").subRouter(new ConsoleApiRoutes(
        new OrderRecords(pool, orders, List.copyOf(config.channels().keySet())),
        new Overview(pool, sweeper, reconcileMonitor, registry), audit).router(vertx, admin::authorize));
    new ConsoleRoutes().mount(vertx, root);
    root.route().failureHandler(rejections.before(Failures::handle));
    root.errorHandler(404, rejections.before(Failures::handle));
    root.errorHandler(405, rejections.before(Failures::handle));
    return root;
  }

  /** Reconciliation against the gateways' bills (issue 10): the drill and tests call it in process. */
  public GatewayReconciler gatewayReconciler() {
    return gatewayReconciler;
  }

  /** The main listener's router (the bad-input test checks its route catalog against it). */
  public Router mainRouter() {
    return mainRouter;
  }

  /**
   * The relay with its routes: refund requests of gateway channels to their refund APIs (the others to their
   * refundUrl), and the optional tiers' (the broker tier publishes ORDER_TIMEOUT).
   */
  public OutboxRelay relay(OutboxRelay relay) {
    relay.route(OutboxEventType.REFUND_REQUESTED, gatewayRefunds::deliver);
    return broker == null ? relay : relay.route(OutboxEventType.ORDER_TIMEOUT, broker::schedule);
  }

  private JsonObject optionalHealth() {
    JsonObject out = new JsonObject();
    if (broker != null) {
      out.put("broker", broker.ready() ? "UP" : "DOWN");
    }
    Boolean redis = reminders == null ? null : reminders.redisSubscribed();
    if (redis != null) {
      out.put("redis", redis ? "UP" : "DOWN");
    }
    return out;
  }

  /** The port actually bound (useful with port 0 in tests). */
  public int port() {
    return server.actualPort();
  }

  /** The management listener's port (metrics, health). */
  public int managementPort() {
    return managementServer.actualPort();
  }

  public CallbackCoalescer coalescer() {
    return coalescer;
  }

  public PaymentGate paymentGate() {
    return paymentGate;
  }

  public Pool pool() {
    return pool;
  }

  /** The outbox's after-commit signal and meters (tests deploy extra relays with them). */
  public OutboxSignal outboxSignal() {
    return outboxSignal;
  }

  public OutboxMetrics outboxMetrics() {
    return outboxMetrics;
  }

  /** The payment reminders; null when {@code reminders.beforeSeconds} is 0. */
  public Reminders reminders() {
    return reminders;
  }

  /** The broker tier; null unless {@code triggers.broker.enabled}. */
  public BrokerTier broker() {
    return broker;
  }

  public Sweeper sweeper() {
    return sweeper;
  }

  /**
   * Graceful: see {@link GracefulShutdown}; the pool closes last. The relay is a child deployment,
   * which Vert.x stops before this: its stop waits for its deliveries in flight.
   */
  @Override
  public Future<?> stop() {
    if (gatewayRefunds != null) {
      gatewayRefunds.stop();
    }
    if (reconcileMonitor != null) {
      reconcileMonitor.stop();
    }
    if (databaseProbe != null) {
      databaseProbe.stop();
    }
    return shutdown.run(vertx, server, java.util.List.of(
            () -> {
              // After the drain: queued callbacks keep their timeout while they are answered.
              if (expiryTimer >= 0) {
                vertx.cancelTimer(expiryTimer);
              }
              return Future.succeededFuture();
            },
            () -> sweepTuning == null ? Future.succeededFuture() : sweepTuning.close(),
            () -> reminders == null ? Future.succeededFuture() : reminders.stop(),
            () -> broker == null ? Future.succeededFuture() : broker.stop(),
            () -> sweeper == null ? Future.succeededFuture() : sweeper.stop()))
        .compose(v -> pool == null ? Future.succeededFuture() : pool.close());
  }
}
