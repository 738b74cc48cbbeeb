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
 * One callback of a replay file (JSON lines): {@code {"offsetMs","channel","body":{"txnId","orderNo",
 * "amountCents","status"}}}. The body is kept as the exact bytes to send; the signature is made at
 * send time, so a file never holds a signature that could go stale.
 */
public record Burst(long offsetMs, String channel, String txnId, byte[] body) {

  public static Burst of(long offsetMs, String channel, JsonObject body) {
    return new Burst(offsetMs, channel, body.getString("txnId"), body.encode().getBytes(StandardCharsets.UTF_8));
  }

  public JsonObject toJson() {
    return new JsonObject().put("offsetMs", offsetMs).put("channel", channel)
        .put("body", new JsonObject(new String(body, StandardCharsets.UTF_8)));
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
          out.add(of(o.getLong("offsetMs", 0L), o.getString("channel"), o.getJsonObject("body")));
        } catch (RuntimeException e) {
          throw new IllegalArgumentException(file + " line " + n + " is not a callback: " + e.getMessage());
        }
      }
    }
    return out;
  }
}
