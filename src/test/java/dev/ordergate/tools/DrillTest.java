package dev.ordergate.tools;

import dev.ordergate.support.TestApp;
import dev.ordergate.support.TestDatabase;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import dev.ordergate.support.Sandbox;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The drill proves the gate by running it: 300 orders with 2-second timeouts against the service
 * end with zero anomalies; the same drill against a check-then-act cancel reports anomalies, both
 * from the answers the drill got and from the reconciliation.
 */
class DrillTest {

  private static final int ORDERS = 300;

  private static Drill.Options options() {
    return new Drill.Options(ORDERS, 42, 2, 32, 2, 25, 15, 5, 15_000,
        "T" + Long.toString(System.nanoTime() % 1_000_000_000L, 36).toUpperCase(), "sweep");
  }

  private static ServiceClient.Target target(TestApp app) {
    return new ServiceClient.Target("http://127.0.0.1:" + app.verticle.port(), TestApp.ADMIN_TOKEN, TestApp.API_KEY,
        TestApp.CHANNEL, TestApp.SECRET);
  }

  private static final PrintStream QUIET = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

  @Test
  void aDrillOf300OrdersAgainstTheServiceEndsWithoutAnomaly() {
    try (TestApp app = TestApp.start()) {
      Drill.Result result = new Drill(app.vertx, options(), target(app), null, System.out).run();
      System.out.print(result.summary());
      assertTrue(result.ok(), result.summary());
      JsonObject r = result.report();
      assertEquals(ORDERS, r.getLong("created"));
      JsonObject callbacks = r.getJsonObject("callbackOutcomes");
      assertTrue(callbacks.getLong("APPLIED", 0L) > 0, callbacks.encode());
      assertTrue(callbacks.getLong("AMOUNT_MISMATCH", 0L) + callbacks.getLong("LATE_AFTER_CANCEL", 0L)
          + callbacks.getLong("DOUBLE_PAYMENT", 0L) > 0, callbacks.encode());
      assertTrue(r.getJsonObject("cancelOutcomes").getLong("USER:CANCELLED", 0L) > 0);
      assertTrue(r.getJsonObject("reconciliation").getBoolean("ok"));
    }
  }

  /** The same drill once per gateway kind: the simulator's notifications, each gateway's answers. */
  @ParameterizedTest
  @ValueSource(strings = {Sandbox.WECHATPAY, Sandbox.ALIPAY, Sandbox.STRIPE})
  void theDrillThroughEachGatewaysWireFormatEndsWithoutAnomaly(String channel) {
    try (TestApp app = TestApp.start(Sandbox.config())) {
      Drill.Result result = new Drill(app.vertx, options(), Sandbox.target(app, channel), null, QUIET).run();
      System.out.print(channel + ": " + result.summary());
      assertTrue(result.ok(), result.summary());
      JsonObject callbacks = result.report().getJsonObject("callbackOutcomes");
      assertTrue(callbacks.getLong("APPLIED", 0L) > 0, callbacks.encode());
      assertTrue(callbacks.getLong("AMOUNT_MISMATCH", 0L) + callbacks.getLong("LATE_AFTER_CANCEL", 0L)
          + callbacks.getLong("DOUBLE_PAYMENT", 0L) > 0, callbacks.encode());
      assertTrue(callbacks.fieldNames().stream().anyMatch(k -> k.startsWith("duplicate(")), callbacks.encode());
      assertEquals(0, app.count("SELECT count(*) FROM payment_receipts WHERE channel <> $1", channel));
      assertTrue(result.report().getJsonObject("reconciliation").getBoolean("ok"));
    }
  }

  @Test
  void theSameDrillAgainstACheckThenActCancelReportsAnomalies() {
    try (TestApp app = TestApp.start()) {
      CheckThenActCancel.removeSafetyNets(app.pool);
      Pool pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(16)).connectingTo(app.db.connectOptions())
          .using(app.vertx).build();
      try {
        Drill.Result result = new Drill(app.vertx, options(), target(app), new CheckThenActCancel(app.vertx, pool),
            QUIET).run();
        System.out.println("expected: the drill against the check-then-act cancel must fail");
        System.out.print(result.summary());
        assertFalse(result.ok());
        Set<String> kinds = new TreeSet<>();
        result.anomalies().forEach(a -> kinds.add(a.kind()));
        assertTrue(kinds.contains("PAID_AND_CANCELLED"), kinds.toString());
        assertTrue(kinds.stream().anyMatch(k -> k.startsWith("RECONCILE_")), kinds.toString());
        assertFalse(result.report().getJsonObject("reconciliation").getBoolean("ok"));
      } finally {
        pool.close().await();
      }
    }
  }

  /**
   * {@code drill --gateway-sim}, small: the same seed with closeBeforeCancel {@code off} and {@code required}.
   * Both hold the gate (no anomaly); {@code required} meets the target (no money taken on a cancelled order,
   * every payment taken at the gateway recorded, lost notifications recovered by the query) while {@code off}
   * takes money on cancelled orders, so the target check can fail.
   */
  @Test
  void theGatewayDrillMeetsTheTargetWithRequiredAndOffTakesMoneyOnCancelledOrders() throws Exception {
    var db = TestDatabase.freshDatabase();
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      GatewayDrill drill = GatewayDrill.start(vertx, QUIET, 0.0001);
      Drill.Options o = new Drill.Options(60, 5, 4, 32, 2, 25, 15, 5, 15_000,
          "G" + Long.toString(System.nanoTime() % 1_000_000_000L, 36).toUpperCase(), "sweep");
      var runs = drill.run(Sandbox.config(), java.util.List.of("off", "required"), o, db.uri());
      System.out.print(GatewayDrill.table(runs));
      Drill.Result off = runs.get(0).result();
      Drill.Result required = runs.get(1).result();
      assertTrue(off.ok(), off.summary());
      assertTrue(required.ok(), required.summary());
      assertEquals(java.util.List.of(), GatewayDrill.targetMissed(required.report()), required.summary());
      assertFalse(GatewayDrill.targetMissed(off.report()).isEmpty(), "off must miss the target: " + off.summary());
      JsonObject offMoney = off.report().getJsonObject("gateway").getJsonObject("moneyOnCancelledOrders");
      assertTrue(offMoney.getLong("count") > 0 && offMoney.getLong("amountCents") > 0, offMoney.encode());
      JsonObject g = required.report().getJsonObject("gateway");
      assertTrue(g.getLong("takenAtGateway") > 0, g.encode());
      JsonObject lost = g.getJsonObject("lostNotifications");
      assertEquals(lost.getLong("dropped"), lost.getLong("recoveredByQuery"), lost.encode());
      assertEquals(off.report().getJsonObject("schedule"), required.report().getJsonObject("schedule"), "the same seed");
      assertTrue(required.report().getJsonObject("schedule").getLong("notification.dropped", 0L) > 0);
      assertTrue(required.report().getJsonObject("reconciliation").getBoolean("ok"));
      // Reconciliation against the gateways' bills: clean with required; with off it finds every payment recorded
      // nowhere (a lost notification), applies it, and then nothing is recorded nowhere.
      JsonObject requiredBills = g.getJsonObject("gatewayReconcile");
      assertTrue(requiredBills.getBoolean("available") && requiredBills.getBoolean("ok"), requiredBills.encode());
      JsonObject offGateway = off.report().getJsonObject("gateway");
      JsonObject offBills = offGateway.getJsonObject("gatewayReconcile");
      long lostOff = offGateway.getJsonObject("unrecordedPayments").getLong("count");
      assertTrue(lostOff > 0, offGateway.encode());
      assertEquals(lostOff, offBills.getJsonObject("before").getLong("missingReceipts"), offBills.encode());
      assertEquals(0, offBills.getJsonObject("unrecordedAfterApply").getLong("count"), offBills.encode());
      assertTrue(offBills.getJsonObject("after").getBoolean("ok"), offBills.encode());
    } finally {
      vertx.close().await();
      TestDatabase.drop(db);
    }
  }

  @Test
  void theSameSeedGivesTheSameSchedule() {
    DrillPlan a = DrillPlan.generate("R", 500, 7, 3, 5);
    DrillPlan b = DrillPlan.generate("R", 500, 7, 3, 5);
    DrillPlan c = DrillPlan.generate("R", 500, 8, 3, 5);
    assertEquals(a.orders, b.orders);
    assertEquals(a.shape(), b.shape());
    assertFalse(a.orders.equals(c.orders));
    java.util.List<String> channels = java.util.List.of("sandbox-alipay", "sandbox-stripe", "sandbox-wechatpay");
    DrillPlan g = DrillPlan.generateGateway("R", 900, 7, 1800, 5, channels);
    assertEquals(g.orders, DrillPlan.generateGateway("R", 900, 7, 1800, 5, channels).orders);
    // At full scale (1800 s) the proportions are the real ones: paid at 29:58, notified at 30:20.
    var lastSecond = g.orders.stream().flatMap(o -> o.actions().stream())
        .filter(x -> x.kind() == DrillPlan.Kind.GATEWAY_PAY && x.timing() == DrillPlan.Timing.LAST_SECOND).toList();
    assertFalse(lastSecond.isEmpty());
    lastSecond.forEach(x -> {
      assertEquals(-2_000, x.offsetMs());
      assertEquals(22_000, x.notifyDelayMs());
    });
    assertEquals(300, g.shape().getLong("channel.sandbox-stripe"));
  }

  @Test
  void theCommandStartsTheServiceItselfAndWritesItsReport(@TempDir Path dir) throws Exception {
    var db = TestDatabase.freshDatabase();
    try {
      Path report = dir.resolve("drill.json");
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      int status = new DrillCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(new String[] {
          "--db-url", db.uri(), "--orders", "40", "--timeout-seconds", "2", "--seed", "3", "--settle-seconds", "10",
          "--report", report.toString()});
      String printed = buf.toString(StandardCharsets.UTF_8);
      assertEquals(Tools.OK, status, printed);
      assertTrue(printed.contains("DRILL PASSED"), printed);
      JsonObject json = new JsonObject(Files.readString(report));
      assertEquals(0, json.getInteger("anomalyCount"));
      assertEquals(40, json.getInteger("created"));
      assertTrue(new DrillCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(new String[] {"--help"}) == 0);
    } finally {
      TestDatabase.drop(db);
    }
  }
}
