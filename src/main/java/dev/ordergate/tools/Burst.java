package dev.ordergate.tools;

import io.vertx.core.json.JsonObject;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One callback of a replay file (JSON lines): {@code {"offsetMs","channel","format"?,"body":{"txnId",
 * "orderNo","amountCents","status"}}}. The body is kept as the exact bytes to send; the signature is
 * made at send time, so a file never holds a signature that could go stale. {@code format} (absent:
 * {@code ordergate}) names a gateway's wire format: the body then describes the payment, and the
 * replay sends it as that (simulated) gateway would.
 */
public record Burst(long offsetMs, String channel, String txnId, byte[] body, String format) {

  public static final String ORDERGATE = "ordergate";

  public static Burst of(long offsetMs, String channel, JsonObject body) {
    return of(offsetMs, channel, body, ORDERGATE);
  }

  public static Burst of(long offsetMs, String channel, JsonObject body, String format) {
    return new Burst(offsetMs, channel, body.getString("txnId"), body.encode().getBytes(StandardCharsets.UTF_8),
        format == null ? ORDERGATE : format);
  }

  public boolean gatewayFormat() {
    return !ORDERGATE.equals(format);
  }

  public JsonObject bodyJson() {
    return new JsonObject(new String(body, StandardCharsets.UTF_8));
  }

  public JsonObject toJson() {
    JsonObject o = new JsonObject().put("offsetMs", offsetMs).put("channel", channel);
    if (gatewayFormat()) {
      o.put("format", format);
    }
    return o.put("body", bodyJson());
  }

  public static void write(Path file, List<Burst> bursts) throws IOException {
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (Burst b : bursts) {
        w.write(b.toJson().encode());
        w.newLine();
      }
    }
  }

  public static List<Burst> read(Path file) throws IOException {
    List<Burst> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int n = 0;
      while ((line = r.readLine()) != null) {
        n++;
        if (line.isBlank()) {
          continue;
        }
        try {
          JsonObject o = new JsonObject(line);
          out.add(of(o.getLong("offsetMs", 0L), o.getString("channel"), o.getJsonObject("body"), o.getString("format")));
        } catch (RuntimeException e) {
          throw new IllegalArgumentException(file + " line " + n + " is not a callback: " + e.getMessage());
        }
      }
    }
    return out;
  }
}
