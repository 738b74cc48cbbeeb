package dev.ordergate.outbox;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.ordergate.support.TestApp;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import static dev.ordergate.outbox.FakeEndpoint.eventually;
import static dev.ordergate.support.TestApp.expect;
import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A sink URL with credentials that fails: its password is in neither {@code /admin/outbox} nor the log. */
class OutboxCredentialsTest {

  private static final String PASSWORD = "Pw-never-shown-4411";

  @Test
  void aFailingSinkWithCredentialsIsReportedWithoutThem() {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    Logger root = (Logger) LoggerFactory.getLogger("dev.ordergate");
    root.addAppender(logged);
    try (FakeEndpoint endpoint = new FakeEndpoint()) {
      endpoint.responder = (path, n, body) -> 500;
      String url = endpoint.url("/paid").replace("http://", "http://shop:" + PASSWORD + "@");
      JsonObject config = TestApp.baseConfig().put("outbox", new JsonObject().put("pollMs", 100)
          .put("baseDelayMs", 60_000).put("sinks", new JsonObject().put("ORDER_PAID", new JsonObject().put("url", url))));
      try (TestApp app = TestApp.start(config)) {
        app.setStock("A", 1);
        long amount = app.createOrder(order("O1", "u1", null, "A", 1, 500)).getLong("amountCents");
        app.callback(payment("T1", "O1", amount));
        eventually("the sink was called and failed", () -> !endpoint.at("/paid").isEmpty()
            && app.count("SELECT count(*) FROM outbox_events_shown WHERE last_error IS NOT NULL") > 0);
        JsonArray pending = expect(app.call(HttpMethod.GET, "/admin/outbox?status=PENDING", null, true), 200)
            .bodyAsJsonArray();
        String listed = pending.encode();
        assertTrue(listed.contains("HTTP 500"), listed);
        assertTrue(listed.contains("http://***@127.0.0.1"), listed);
        assertFalse(listed.contains(PASSWORD), "GET /admin/outbox shows the sink's password: " + listed);
      }
    } finally {
      root.detachAppender(logged);
    }
    assertTrue(logged.list.stream().anyMatch(e -> e.getFormattedMessage().contains("HTTP 500")), "the failure was logged");
    logged.list.forEach(e -> assertFalse(e.getFormattedMessage().contains(PASSWORD), e.getFormattedMessage()));
  }
}
