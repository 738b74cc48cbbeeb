package dev.ordergate.support;

import dev.ordergate.OrdergateVerticle;
import dev.ordergate.config.AppConfig;
import dev.ordergate.db.DbUrl;
import dev.ordergate.exceptions.ExceptionRecorder;
import dev.ordergate.exceptions.RefundPolicy;
import dev.ordergate.gate.GateHook;
import dev.ordergate.gate.PaymentGate;
import dev.ordergate.metrics.Metrics;
import dev.ordergate.outbox.OutboxSignal;
import dev.ordergate.outbox.OutboxWriter;
import io.micrometer.core.instrument.MeterRegistry;
import dev.ordergate.channel.ordergate.OrdergateSignature;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The service deployed on a fresh database, with an HTTP client and a pool of its own for
 * assertions. Tests run their steps with {@code await()}: the JUnit thread is not an event loop.
 */
public final class TestApp implements AutoCloseable {

  public static final String CHANNEL = "sandbox";
  public static final String SECRET = "test-secret-0123456789";
  public static final String ADMIN_TOKEN = "test-admin-token-0123456789";
  public static final String API_KEY = "test-api-key-abcdefghij-0123456789";

  public final Vertx vertx;
  public final DbUrl db;
  public final Pool pool;
  public final WebClient http;
  public final PrometheusMeterRegistry registry;
  public final OrdergateVerticle verticle;
  private final String deploymentId;

  private TestApp(Vertx vertx, DbUrl db, OrdergateVerticle verticle, String deploymentId,
                  PrometheusMeterRegistry registry) {
    this.vertx = vertx;
    this.db = db;
    this.verticle = verticle;
    this.deploymentId = deploymentId;
    this.registry = registry;
    this.pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(4))
        .connectingTo(db.connectOptions()).using(vertx).build();
    this.http = WebClient.create(vertx, new WebClientOptions()
        .setDefaultHost("127.0.0.1").setDefaultPort(verticle.port()),
        new io.vertx.core.http.PoolOptions().setHttp1MaxSize(64));
  }

  public static JsonObject baseConfig() {
    return new JsonObject()
        .put("http", new JsonObject().put("port", 0).put("host", "127.0.0.1"))
        .put("management", new JsonObject().put("port", 0).put("host", "127.0.0.1"))
        .put("api", new JsonObject().put("keys", new JsonArray().add(API_KEY)))
        .put("db", new JsonObject().put("poolSize", 8))
        .put("admin", new JsonObject().put("token", ADMIN_TOKEN))
        // The timeout sweep stays off unless a test turns it on: its timer would disturb other classes.
        .put("sweep", new JsonObject().put("enabled", false))
        .put("payments", new JsonObject().put("channels", new JsonObject()
            .put(CHANNEL, new JsonObject().put("secrets", new JsonArray().add("old-secret-rotated-out-0").add(SECRET))
                .put("toleranceSeconds", 300))));
  }

  public static TestApp start() {
    return start(baseConfig());
  }

  /** A service whose own outbox relay is off: the test runs the relay it needs, or none. */
  public static TestApp startWithoutRelay() {
    JsonObject config = baseConfig();
    config.put("outbox", new JsonObject().put("enabled", false));
    return start(config);
  }

  public static TestApp start(JsonObject config) {
    return start(config, TestDatabase.freshDatabase());
  }

  public static TestApp start(JsonObject config, DbUrl db) {
    return start(config, db, null);
  }

  /** With {@code configPath} set, the service watches that file for live sweep tuning. */
  public static TestApp start(JsonObject config, DbUrl db, String configPath) {
    return start(config, db, configPath, java.util.function.UnaryOperator.identity());
  }

  /** With {@code customize} applied to the verticle before it deploys (the fuzz test's broken twin). */
  public static TestApp start(JsonObject config, DbUrl db, String configPath,
                              java.util.function.UnaryOperator<OrdergateVerticle> customize) {
    // The production registry and Vert.x meters, so tests see what /metrics shows.
    PrometheusMeterRegistry registry = dev.ordergate.metrics.Metrics.newRegistry();
    Vertx vertx = dev.ordergate.metrics.Metrics.vertx(registry);
    OrdergateVerticle verticle = customize.apply(new OrdergateVerticle(AppConfig.from(config), db, registry,
        Clock.systemUTC(), configPath));
    String id = vertx.deployVerticle(verticle).await();
    return new TestApp(vertx, db, verticle, id, registry);
  }

  /**
   * Empties every table, so a test's fixtures are all there is. The relay or sweeper of the
   * previous test may still be writing: a TRUNCATE that deadlocks with them is simply repeated.
   */
  public void truncate() {
    for (int attempt = 1; ; attempt++) {
      try {
        pool.query("TRUNCATE orders, order_items, order_transitions, inventory, inventory_ledger, coupons, "
            + "payment_receipts, payment_notifications, exception_orders, exception_history, outbox_events, sweep_runs CASCADE").execute().await();
        return;
      } catch (RuntimeException e) {
        if (attempt >= 5 || !dev.ordergate.db.Tx.isRetryable(e)) {
          throw e;
        }
      }
    }
  }

  // ---- HTTP -----------------------------------------------------------------------------------

  public HttpResponse<Buffer> call(HttpMethod method, String path, JsonObject body, boolean admin) {
    return callAsync(method, path, body, admin).await();
  }

  public Future<HttpResponse<Buffer>> callAsync(HttpMethod method, String path, JsonObject body, boolean admin) {
    var req = http.request(method, path);
    if (admin) {
      req.putHeader("Authorization", "Bearer " + ADMIN_TOKEN);
    } else if (path.startsWith("/api/") && !path.startsWith("/api/callbacks/")) {
      req.putHeader("Authorization", "Bearer " + API_KEY);
    }
    return body == null ? req.send() : req.sendBuffer(Buffer.buffer(body.encode()));
  }

  public void setStock(String sku, int available) {
    expect(call(HttpMethod.PUT, "/admin/inventory/" + sku, new JsonObject().put("available", available), true), 200);
  }

  public void createCoupon(String code, String userId, long discountCents) {
    expect(call(HttpMethod.POST, "/admin/coupons", new JsonObject().put("code", code).put("userId", userId)
        .put("discountCents", discountCents), true), 201);
  }

  public static JsonObject order(String orderNo, String userId, String coupon, Object... skuQtyPrice) {
    JsonArray items = new JsonArray();
    for (int i = 0; i < skuQtyPrice.length; i += 3) {
      items.add(new JsonObject().put("sku", skuQtyPrice[i]).put("qty", skuQtyPrice[i + 1])
          .put("unitPriceCents", skuQtyPrice[i + 2]));
    }
    JsonObject o = new JsonObject().put("orderNo", orderNo).put("userId", userId).put("items", items);
    if (coupon != null) {
      o.put("couponCode", coupon);
    }
    return o;
  }

  public JsonObject createOrder(JsonObject order) {
    return expect(call(HttpMethod.POST, "/api/orders", order, false), 201).bodyAsJsonObject();
  }

  public JsonObject getOrder(String orderNo) {
    return expect(call(HttpMethod.GET, "/api/orders/" + orderNo, null, false), 200).bodyAsJsonObject();
  }

  public static JsonObject payment(String txnId, String orderNo, long amountCents) {
    return new JsonObject().put("txnId", txnId).put("orderNo", orderNo).put("amountCents", amountCents)
        .put("status", "SUCCESS");
  }

  /** Sends a callback signed now with the channel's current secret. */
  public Future<HttpResponse<Buffer>> callbackAsync(JsonObject body) {
    byte[] raw = body.encode().getBytes(StandardCharsets.UTF_8);
    long t = System.currentTimeMillis() / 1000;
    return http.post("/api/callbacks/" + CHANNEL)
        .putHeader(OrdergateSignature.HEADER, OrdergateSignature.header(SECRET, t, CHANNEL, raw))
        .sendBuffer(Buffer.buffer(raw));
  }

  public JsonObject callback(JsonObject body) {
    return expect(callbackAsync(body).await(), 200).bodyAsJsonObject();
  }

  /**
   * A payment gate of its own on {@code pool} (the service's, or this app's), counting into {@code registry}, with
   * no automatic refund: every exception it opens goes to manual review.
   */
  public static PaymentGate paymentGate(Pool pool, MeterRegistry registry, GateHook hook) {
    OutboxSignal signal = new OutboxSignal();
    return new PaymentGate(pool, new Metrics(registry), new OutboxWriter(signal),
        new ExceptionRecorder(new RefundPolicy(0, Map.of()), signal), hook);
  }

  public static HttpResponse<Buffer> expect(HttpResponse<Buffer> resp, int status) {
    if (resp.statusCode() != status) {
      throw new AssertionError("expected HTTP " + status + " but got " + resp.statusCode() + ": " + resp.bodyAsString());
    }
    return resp;
  }

  // ---- database reads for assertions ---------------------------------------------------------

  /**
   * Makes every connection of the service's pool report its table counters to {@code pg_stat_user_tables}.
   * PostgreSQL 14 (the embedded server) sends a backend's counters only at the end of a transaction at least
   * 500 ms after its last report, so a connection left idle after the work never sends them; 15 and later
   * also report after a second of idleness. So: wait past that interval, then one transaction on each.
   */
  public void reportTableStats() {
    try {
      Thread.sleep(600);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    Pool service = verticle.pool();
    List<Future<SqlConnection>> held = new ArrayList<>();
    for (int i = 0; i < Math.max(1, service.size()); i++) {
      held.add(service.getConnection());
    }
    Future.all(held).await();
    for (Future<SqlConnection> c : held) {
      c.result().query("SELECT 1").execute().await();
      c.result().close().await();
    }
  }

  /**
   * The table's updates, HOT updates and inserts in {@code pg_stat_user_tables}, after {@link
   * #reportTableStats}.
   */
  public long[] tableUpdates(String table) {
    reportTableStats();
    Row r = rows("SELECT n_tup_upd, n_tup_hot_upd, n_tup_ins FROM pg_stat_user_tables WHERE relname = $1", table)
        .get(0);
    return new long[] {r.getLong(0), r.getLong(1), r.getLong(2)};
  }

  public List<Row> rows(String sql, Object... params) {
    List<Row> out = new ArrayList<>();
    pool.preparedQuery(sql).execute(Tuple.wrap(params)).await().forEach(out::add);
    return out;
  }

  public long count(String sql, Object... params) {
    return rows(sql, params).get(0).getLong(0);
  }

  public int stock(String sku) {
    return rows("SELECT available FROM inventory WHERE sku = $1", sku).get(0).getInteger(0);
  }

  public String couponStatus(String code) {
    return rows("SELECT status FROM coupons WHERE code = $1", code).get(0).getString(0);
  }

  /** {@code GET /metrics} from the management listener. */
  public String scrape() {
    return expect(http.get(verticle.managementPort(), "127.0.0.1", "/metrics").send().await(), 200).bodyAsString();
  }

  public double metric(String name, String... tagKeyValues) {
    var search = registry.find(name);
    for (int i = 0; i < tagKeyValues.length; i += 2) {
      search = search.tag(tagKeyValues[i], tagKeyValues[i + 1]);
    }
    return search.counters().stream().mapToDouble(c -> c.count()).sum();
  }

  @Override
  public void close() {
    http.close();
    pool.close().await();
    vertx.undeploy(deploymentId).await();
    vertx.close().await();
    TestDatabase.drop(db);
  }
}
