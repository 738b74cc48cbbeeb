package dev.ordergate.tools;

import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Thread-safe counts by key, printed and reported in key order. */
public final class Tally {

  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

  public void add(String key) {
    add(key, 1);
  }

  public void add(String key, long n) {
    counts.computeIfAbsent(key, k -> new LongAdder()).add(n);
  }

  public long get(String key) {
    LongAdder a = counts.get(key);
    return a == null ? 0 : a.sum();
  }

  public long total() {
    return counts.values().stream().mapToLong(LongAdder::sum).sum();
  }

  public Map<String, Long> sorted() {
    Map<String, Long> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  public JsonObject toJson() {
    JsonObject o = new JsonObject();
    sorted().forEach(o::put);
    return o;
  }

  public String line() {
    StringBuilder sb = new StringBuilder();
    sorted().forEach((k, v) -> sb.append(sb.length() == 0 ? "" : ", ").append(k).append(' ').append(v));
    return sb.length() == 0 ? "none" : sb.toString();
  }
}
