package dev.ordergate.http;

import dev.ordergate.channel.ordergate.OrdergateSignature;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

import static dev.ordergate.support.TestApp.order;
import static dev.ordergate.support.TestApp.payment;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** During {@code legacyV1Until} the old signature form (without the channel name) still verifies. */
class LegacySignatureTransitionTest {

  @Test
  void theLegacyFormVerifiesDuringTheTransition() {
    JsonObject config = TestApp.baseConfig();
    config.getJsonObject("payments").getJsonObject("channels").getJsonObject(TestApp.CHANNEL)
        .put("legacyV1Until", Instant.now().plusSeconds(3600).toString());
    try (TestApp app = TestApp.start(config)) {
      app.setStock("A", 10);
      app.createOrder(order("O1", "u1", null, "A", 1, 500));
      byte[] body = payment("T1", "O1", 500).encode().getBytes(StandardCharsets.UTF_8);
      var resp = app.http.post("/api/callbacks/" + TestApp.CHANNEL)
          .putHeader(OrdergateSignature.HEADER, OrdergateSignature.legacyHeader(TestApp.SECRET, System.currentTimeMillis() / 1000, body))
          .sendBuffer(Buffer.buffer(body)).await();
      assertEquals(200, resp.statusCode(), resp.bodyAsString());
      assertEquals("APPLIED", resp.bodyAsJsonObject().getString("outcome"));
    }
  }
}
