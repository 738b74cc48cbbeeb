package dev.ordergate.tools;

import dev.ordergate.db.DbUrl;
import dev.ordergate.support.TestDatabase;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The small chaos run CI does: the drill while the service (a child process) is SIGKILLed and
 * restarted and its database connections are cut; nothing acknowledged is lost, no order leaves
 * PENDING_PAYMENT twice, the invariants hold. (That the drill's checks catch a broken gate is
 * shown by DrillTest with its check-then-act twin.)
 */
class ChaosTest {

  @Test
  void killsAndCutConnectionsLoseNoAcknowledgedPaymentAndNoOrderExitsTwice() throws Exception {
    DbUrl db = TestDatabase.freshDatabase();
    Path dir = Files.createTempDirectory("ordergate-chaos-test");
    try {
      Path report = dir.resolve("chaos.json");
      int exit = Tools.run("chaos", new String[] {"--orders", "150", "--timeout-seconds", "6", "--kills", "1",
          "--cuts", "2", "--connections", "16", "--db-url", db.uri(), "--work-dir", dir.toString(),
          "--report", report.toString()});
      JsonObject r = new JsonObject(Files.readString(report));
      JsonObject chaos = r.getJsonObject("chaos");
      System.out.println("chaos (CI size): " + chaos.encode());
      assertEquals(Tools.OK, exit, r.getJsonArray("anomalies").encodePrettily());
      assertEquals(1, chaos.getInteger("kills"));
      assertTrue(chaos.getInteger("cuts") >= 1, chaos.encode());
      assertEquals(0, chaos.getLong("lostAcknowledgedPayments"));
      assertEquals(0, chaos.getLong("doubleExits"));
      assertEquals(0, chaos.getLong("invariantViolations"));
      assertTrue(r.getLong("created") > 0 && r.getJsonObject("callbackOutcomes").getLong("APPLIED", 0L) > 0, r.encode());
    } finally {
      TestDatabase.drop(db);
    }
  }
}
