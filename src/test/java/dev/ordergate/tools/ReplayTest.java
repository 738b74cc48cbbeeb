package dev.ordergate.tools;

import dev.ordergate.domain.CallbackOutcome;
import dev.ordergate.support.TestApp;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The replay tool's counts are the server's counts: every callback it sent is counted once by the service. */
class ReplayTest {

  private static TestApp app;
  private static String url;

  @BeforeAll
  static void start() {
    app = TestApp.start();
    url = "http://127.0.0.1:" + app.verticle.port();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static int run(String... args) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    int status;
    try {
      status = new ReplayCommand(new PrintStream(buf, true, StandardCharsets.UTF_8)).run(args);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    System.out.print(buf.toString(StandardCharsets.UTF_8));
    return status;
  }

  private static double served(String outcome, boolean duplicate) {
    return app.metric("ordergate.callbacks", "channel", TestApp.CHANNEL, "outcome", outcome,
        "duplicate", Boolean.toString(duplicate));
  }

  @Test
  void aThousandReplayedCallbacksAreCountedAlikeByTheToolAndTheServer(@TempDir Path dir) throws Exception {
    Path generated = dir.resolve("generated.jsonl");
    assertEquals(Tools.OK, run("generate", "--orders", "900", "--duplicates", "0.2", "--file", generated.toString(),
        "--url", url, "--admin-token", TestApp.ADMIN_TOKEN, "--api-key", TestApp.API_KEY, "--channel", TestApp.CHANNEL, "--seed", "5"));
    List<Burst> all = Burst.read(generated);
    assertTrue(all.size() >= 1000, "generated " + all.size());
    Path file = dir.resolve("bursts.jsonl");
    Burst.write(file, all.subList(0, 1000));
    double[] before = new double[CallbackOutcome.values().length * 2];
    for (CallbackOutcome o : CallbackOutcome.values()) {
      before[o.ordinal() * 2] = served(o.name(), false);
      before[o.ordinal() * 2 + 1] = served(o.name(), true);
    }
    Path report = dir.resolve("replay.json");
    assertEquals(Tools.OK, run("run", "--file", file.toString(), "--url", url, "--secret", TestApp.SECRET,
        "--connections", "16", "--report", report.toString()));
    JsonObject r = new JsonObject(Files.readString(report));
    assertEquals(1000, r.getLong("requests"));
    assertEquals(1000, r.getJsonObject("status").getLong("200"));
    JsonObject outcomes = r.getJsonObject("outcomes");
    long sum = 0;
    for (CallbackOutcome o : CallbackOutcome.values()) {
      long first = outcomes.getLong(o.name(), 0L);
      long dup = outcomes.getLong(o.name() + "/duplicate", 0L);
      sum += first + dup;
      assertEquals(first, served(o.name(), false) - before[o.ordinal() * 2], o + " first deliveries");
      assertEquals(dup, served(o.name(), true) - before[o.ordinal() * 2 + 1], o + " duplicates");
    }
    assertEquals(1000, sum);
    assertTrue(outcomes.getLong("APPLIED") > 0 && outcomes.getLong("APPLIED/duplicate", 0L) > 0, outcomes.encode());
    JsonObject latency = r.getJsonObject("latencyMs");
    assertTrue(latency.getDouble("p50") <= latency.getDouble("p99") && latency.getDouble("p99") <= latency.getDouble("max"));
  }

  @Test
  void openLoopSendsEveryCallbackAndAWrkScriptIsPreSigned(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("small.jsonl");
    assertEquals(Tools.OK, run("generate", "--orders", "100", "--file", file.toString(), "--url", url,
        "--admin-token", TestApp.ADMIN_TOKEN, "--api-key", TestApp.API_KEY, "--channel", TestApp.CHANNEL));
    int lines = Burst.read(file).size();
    Path report = dir.resolve("open.json");
    assertEquals(Tools.OK, run("run", "--file", file.toString(), "--url", url, "--secret", TestApp.SECRET,
        "--rate", "400", "--connections", "8", "--report", report.toString()));
    assertEquals(lines, new JsonObject(Files.readString(report)).getJsonObject("status").getLong("200"));
    Path lua = dir.resolve("requests.lua");
    assertEquals(Tools.OK, run("run", "--file", file.toString(), "--secret", TestApp.SECRET, "--emit-wrk", lua.toString()));
    String script = Files.readString(lua);
    assertEquals(lines, script.split(",v2=", -1).length - 1);
    assertTrue(script.contains("function request()"));
    assertEquals(Tools.ANOMALY, run("run", "--file", file.toString(), "--url", url, "--secret", "wrong-secret-000000",
        "--connections", "4"));
  }
}
