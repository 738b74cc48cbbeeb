package dev.ordergate.http;

import io.vertx.core.VertxException;
import io.vertx.core.impl.NoStackTraceTimeoutException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which failures are "the database is unavailable" (503) and which are ours (500). */
class FailuresTest {

  @Test
  void everyWayOfLosingTheDatabaseIs503() {
    assertTrue(Failures.isDatabaseUnavailable(new ConnectException("Connection refused")));
    assertTrue(Failures.isDatabaseUnavailable(new IOException("Connection reset by peer")));
    assertTrue(Failures.isDatabaseUnavailable(ClosedConnectionException.INSTANCE));
    assertTrue(Failures.isDatabaseUnavailable(new NoStackTraceTimeoutException("Timeout waiting for a connection")));
    assertTrue(Failures.isDatabaseUnavailable(new VertxException("Connection is not active now, current status: CLOSED")));
    for (String state : new String[] {"57P01", "57P02", "57P03", "08006", "08001", "53300"}) {
      assertTrue(Failures.isDatabaseUnavailable(new PgException("down", "FATAL", state, null)), state);
    }
    assertTrue(Failures.isDatabaseUnavailable(new IllegalStateException("wrapped", new ConnectException("refused"))));
  }

  @Test
  void ourOwnMistakesAreNot() {
    assertFalse(Failures.isDatabaseUnavailable(new PgException("bad", "ERROR", "22021", null)));
    assertFalse(Failures.isDatabaseUnavailable(new PgException("dup", "ERROR", "23505", null)));
    assertFalse(Failures.isDatabaseUnavailable(new NullPointerException()));
    assertFalse(Failures.isDatabaseUnavailable(new VertxException("something else")));
  }
}
