package dev.ordergate.db;

import dev.ordergate.support.AppTest;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Tx#run}: the work's statements, sent right behind a pipelined {@code BEGIN} (issue 13), run in one
 * transaction that commits when the work succeeds and leaves nothing when it fails; a deadlock is retried.
 */
class TxTest extends AppTest {

  private Pool pool;

  @BeforeEach
  void table() {
    pool = app.verticle.pool();
    app.rows("DROP TABLE IF EXISTS tx_probe");
    app.rows("CREATE TABLE tx_probe (id int PRIMARY KEY, v text)");
    app.rows("INSERT INTO tx_probe VALUES (1, 'a'), (2, 'b')");
  }

  private static String xid(Row r) {
    return r.getString(0);
  }

  @Test
  void theWorksStatementsShareOneTransactionThatCommits() {
    List<String> xids = Tx.run(pool, conn -> conn.query("SELECT pg_current_xact_id()::text").execute()
        .compose(a -> conn.query("UPDATE tx_probe SET v = 'x' WHERE id = 1").execute()
            .compose(u -> conn.query("SELECT pg_current_xact_id()::text").execute())
            .map(b -> List.of(xid(a.iterator().next()), xid(b.iterator().next()))))).await();
    assertEquals(xids.get(0), xids.get(1), "both statements ran in the transaction BEGIN opened");
    assertEquals("x", app.rows("SELECT v FROM tx_probe WHERE id = 1").get(0).getString(0));
    // Outside Tx.run every statement is its own transaction: the check above can tell them apart.
    String first = xid(pool.query("SELECT pg_current_xact_id()::text").execute().await().iterator().next());
    String second = xid(pool.query("SELECT pg_current_xact_id()::text").execute().await().iterator().next());
    assertNotEquals(first, second);
  }

  @Test
  void aFailedWorkLeavesNothing() {
    RuntimeException failure = new IllegalStateException("the work gave up");
    Future<Object> run = Tx.run(pool, conn -> conn.query("UPDATE tx_probe SET v = 'y' WHERE id = 1").execute()
        .compose(u -> Future.failedFuture(failure)));
    Throwable thrown = assertThrows(Throwable.class, run::await);
    assertEquals(failure, thrown instanceof CompletionException ? thrown.getCause() : thrown);
    assertEquals("a", app.rows("SELECT v FROM tx_probe WHERE id = 1").get(0).getString(0));
  }

  @Test
  void aFailedStatementLeavesNothingAndFailsTheRun() {
    Future<Object> run = Tx.run(pool, conn -> conn.query("UPDATE tx_probe SET v = 'z' WHERE id = 1").execute()
        .compose(u -> conn.query("INSERT INTO tx_probe VALUES (2, 'dup')").execute())
        .map(r -> (Object) r));
    Throwable thrown = assertThrows(Throwable.class, run::await);
    Throwable cause = thrown instanceof CompletionException ? thrown.getCause() : thrown;
    assertTrue(Tx.isUniqueViolation(cause), cause.toString());
    assertEquals("a", app.rows("SELECT v FROM tx_probe WHERE id = 1").get(0).getString(0));
    // The connection went back to the pool usable: nothing left open on it.
    assertEquals(0L, app.count("SELECT count(*) FROM pg_stat_activity "
        + "WHERE state = 'idle in transaction (aborted)' AND datname = current_database()"));
  }

  @Test
  void aDeadlockIsRetriedWhole() {
    // Two runs lock the two rows in opposite orders; PostgreSQL aborts one (40P01) and Tx runs it again.
    Future<Integer> one = Tx.run(pool, conn -> lockBoth(conn, 1, 2));
    Future<Integer> two = Tx.run(pool, conn -> lockBoth(conn, 2, 1));
    assertEquals(List.of(1, 1), List.of(one.await(), two.await()));
    assertEquals(2L, app.count("SELECT count(*) FROM tx_probe WHERE v LIKE '%+'"));
    assertFalse(app.rows("SELECT v FROM tx_probe WHERE id = 1").get(0).getString(0).endsWith("++"),
        "the aborted attempt left nothing behind");
  }

  private static Future<Integer> lockBoth(io.vertx.sqlclient.SqlConnection conn, int first, int second) {
    return conn.query("SELECT id FROM tx_probe WHERE id = " + first + " FOR UPDATE").execute()
        .compose(a -> conn.query("SELECT pg_sleep(0.2)").execute())
        .compose(s -> conn.query("SELECT id FROM tx_probe WHERE id = " + second + " FOR UPDATE").execute())
        .compose(b -> conn.query("UPDATE tx_probe SET v = v || '+' WHERE id = " + first).execute())
        .map(u -> 1);
  }
}
