package dev.ordergate.tools;

import dev.ordergate.support.Sandbox;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code replay generate --format}: bursts in each gateway's own wire format, applied once per order. */
class ReplayFormatsTest {

  private static TestApp app;
  private static String url;

  @BeforeAll
  static void start() {
    app = TestApp.start(Sandbox.config());
    url = "http://127.0.0.1:" + app.verticle.port();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static int run(String... args) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status = new ReplayCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(args);
    System.out.print(buf.toString(StandardCharsets.UTF_8));
    return status;
  }

  @ParameterizedTest
  @CsvSource({"wechatpay-v3,sandbox-wechatpay,204", "alipay,sandbox-alipay,200", "stripe,sandbox-stripe,200"})
  void burstsInAGatewaysFormatApplyOncePerOrderAndCountDuplicates(String format, String channel, String status,
                                                                  @TempDir Path dir) throws Exception {
    Path file = dir.resolve("bursts.jsonl");
    assertEquals(Tools.OK, run("generate", "--orders", "150", "--duplicates", "0.3", "--format", format,
        "--file", file.toString(), "--url", url, "--admin-token", TestApp.ADMIN_TOKEN, "--api-key", TestApp.API_KEY,
        "--seed", "9"));
    List<Burst> bursts = Burst.read(file);
    assertTrue(bursts.stream().allMatch(b -> b.format().equals(format) && b.channel().equals(channel)));
    Path report = dir.resolve("replay.json");
    assertEquals(Tools.OK, run("run", "--file", file.toString(), "--url", url, "--connections", "16",
        "--report", report.toString()));
    JsonObject r = new JsonObject(Files.readString(report));
    assertEquals(bursts.size(), r.getJsonObject("status").getLong(status));
    JsonObject outcomes = r.getJsonObject("outcomes");
    assertEquals(150, outcomes.getLong("APPLIED"), outcomes.encode());
    assertEquals(bursts.size() - 150, outcomes.getLong("APPLIED/duplicate", 0L), outcomes.encode());
    assertEquals(150, app.count("SELECT count(*) FROM payment_receipts WHERE channel = $1", channel));
  }
}
