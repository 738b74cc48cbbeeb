package dev.ordergate.sim;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault injection per gateway kind, for its API calls ({@code open}, {@code query}, {@code close},
 * {@code refund}, {@code refund_query}):
 * {@code latencyMs} before the call is handled, {@code status} (a 5xx answered instead) for the next
 * {@code count} calls (-1: every call), {@code hang} (never answered: the caller's timeout fires). And for the
 * notifications of payments: dropped, duplicated, delayed ({@link NotificationFault}).
 */
public final class Faults {

  public record Fault(long latencyMs, int status, int count, boolean hang, Set<String> ops) {

    static Fault of(JsonObject spec) {
      JsonArray ops = spec.getJsonArray("ops");
      return new Fault(spec.getLong("latencyMs", 0L), spec.getInteger("status", 0), spec.getInteger("count", -1),
          spec.getBoolean("hang", false), ops == null ? Set.of("open", "query", "close", "refund", "refund_query")
              : Set.copyOf(ops.stream().map(String::valueOf).toList()));
    }
  }

  /** What to do with one call: wait, then answer {@code status} (0: handle it), or never answer. */
  public record Verdict(long latencyMs, int status, boolean hang) {
    static final Verdict NONE = new Verdict(0, 0, false);
  }

  /**
   * Notification faults per kind, for payments whose request does not say ({@code /sim/trades/KIND/REF/pay}
   * without {@code notify}, {@code duplicates} or {@code delayMs}): drop a {@code dropShare} of them, send a
   * {@code duplicateShare} of them 1..{@code maxDuplicates} more times, delay each by {@code delayMs} plus up to
   * {@code jitterMs}; drawn from a {@link java.util.Random} seeded with {@code seed}.
   */
  public record NotificationFault(double dropShare, double duplicateShare, int maxDuplicates, long delayMs, long jitterMs,
                                  java.util.Random rng) {

    static NotificationFault of(JsonObject spec) {
      return new NotificationFault(spec.getDouble("dropShare", 0.0), spec.getDouble("duplicateShare", 0.0),
          Math.max(1, spec.getInteger("maxDuplicates", 1)), spec.getLong("delayMs", 0L), spec.getLong("jitterMs", 0L),
          new java.util.Random(spec.getLong("seed", 1L)));
    }
  }

  /** What to do with one payment's notification. */
  public record NotificationVerdict(boolean drop, int duplicates, long delayMs) {}

  private final Map<String, NotificationFault> notificationFaults = new ConcurrentHashMap<>();

  public void setNotifications(String kind, JsonObject spec) {
    notificationFaults.put(kind, NotificationFault.of(spec));
  }

  /** The next notification's fate at {@code kind}; null when no notification fault is set. */
  public synchronized NotificationVerdict nextNotification(String kind) {
    NotificationFault f = notificationFaults.get(kind);
    if (f == null) {
      return null;
    }
    boolean drop = f.rng().nextDouble() < f.dropShare();
    int duplicates = f.rng().nextDouble() < f.duplicateShare() ? 1 + f.rng().nextInt(f.maxDuplicates()) : 0;
    long delay = f.delayMs() + (f.jitterMs() > 0 ? (long) (f.rng().nextDouble() * f.jitterMs()) : 0);
    return new NotificationVerdict(drop, duplicates, delay);
  }

  private final Map<String, Fault> faults = new ConcurrentHashMap<>();
  /** Per kind: calls in flight now, the most seen at once, and calls handled (reset by {@link #clear}). */
  private final Map<String, int[]> load = new ConcurrentHashMap<>();
  private final Map<String, Integer> remaining = new ConcurrentHashMap<>();

  public void set(String kind, JsonObject spec) {
    Fault f = Fault.of(spec);
    faults.put(kind, f);
    remaining.put(kind, f.count());
  }

  public void clear() {
    faults.clear();
    notificationFaults.clear();
    remaining.clear();
    load.clear();
  }

  public synchronized void started(String kind) {
    int[] l = load.computeIfAbsent(kind, k -> new int[3]);
    l[0]++;
    l[1] = Math.max(l[1], l[0]);
    l[2]++;
  }

  public synchronized void finished(String kind) {
    load.computeIfAbsent(kind, k -> new int[3])[0]--;
  }

  /** {@code {"inFlight","maxInFlight","calls"}} of one kind's API. */
  public synchronized JsonObject stats(String kind) {
    int[] l = load.getOrDefault(kind, new int[3]);
    return new JsonObject().put("kind", kind).put("inFlight", l[0]).put("maxInFlight", l[1]).put("calls", l[2]);
  }

  public synchronized Verdict next(String kind, String op) {
    Fault f = faults.get(kind);
    if (f == null || !f.ops().contains(op)) {
      return Verdict.NONE;
    }
    boolean failing = f.status() > 0 || f.hang();
    int left = remaining.getOrDefault(kind, -1);
    if (failing && left == 0) {
      return new Verdict(f.latencyMs(), 0, false);
    }
    if (failing && left > 0) {
      remaining.put(kind, left - 1);
    }
    return new Verdict(f.latencyMs(), f.status(), f.hang());
  }

  /** Completes after the verdict's latency (never, for a hang). */
  public static Future<Verdict> apply(Vertx vertx, Verdict v) {
    if (v.hang()) {
      return io.vertx.core.Promise.<Verdict>promise().future();
    }
    if (v.latencyMs() <= 0) {
      return Future.succeededFuture(v);
    }
    return Future.future(p -> vertx.setTimer(v.latencyMs(), id -> p.complete(v)));
  }
}
