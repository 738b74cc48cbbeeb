package dev.ordergate.reconcile;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** The result of one reconciliation: every invariant's check, taken in one database snapshot. */
public record ReconcileReport(Instant startedAt, long durationMs, List<CheckResult> checks) {

  public long violationCount() {
    return checks.stream().mapToLong(CheckResult::total).sum();
  }

  public boolean ok() {
    return violationCount() == 0;
  }

  public List<Violation> violations() {
    List<Violation> out = new ArrayList<>();
    checks.forEach(c -> out.addAll(c.violations()));
    return out;
  }

  public JsonObject toJson() {
    JsonArray list = new JsonArray();
    checks.forEach(c -> list.add(c.toJson()));
    return new JsonObject().put("startedAt", startedAt.toString()).put("durationMs", durationMs)
        .put("ok", ok()).put("violations", violationCount()).put("checks", list);
  }

  /** Reads a report back from {@link #toJson()} (the drill gets it over HTTP from a running service). */
  public static ReconcileReport fromJson(JsonObject json) {
    List<CheckResult> checks = new ArrayList<>();
    for (Object o : json.getJsonArray("checks", new JsonArray())) {
      JsonObject c = (JsonObject) o;
      Invariant inv = Invariant.valueOf(c.getString("invariant"));
      List<Violation> vs = new ArrayList<>();
      for (Object v : c.getJsonArray("listed", new JsonArray())) {
        JsonObject j = (JsonObject) v;
        vs.add(new Violation(inv, j.getString("orderNo"), j.getString("sku"), j.getString("detail")));
      }
      checks.add(new CheckResult(inv, c.getLong("violations", 0L), List.copyOf(vs), c.getString("skipped")));
    }
    return new ReconcileReport(Instant.parse(json.getString("startedAt")), json.getLong("durationMs", 0L),
        List.copyOf(checks));
  }

  /** A human summary: one line per invariant, then every listed violation. */
  public String summary() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("reconciliation at %s (%d ms): %s%n", startedAt, durationMs,
        ok() ? "all invariants hold" : violationCount() + " violation(s)"));
    for (CheckResult c : checks) {
      String state = c.skipped() != null ? "skipped (" + c.skipped() + ")"
          : c.total() == 0 ? "ok" : c.total() + " violation(s)";
      sb.append(String.format("  %-30s %s%n", c.invariant().name(), state));
    }
    for (CheckResult c : checks) {
      c.violations().forEach(v -> sb.append("  ! ").append(v.line()).append(System.lineSeparator()));
      if (c.total() > c.violations().size()) {
        sb.append(String.format("  ! %s: %d more not listed%n", c.invariant().name(), c.total() - c.violations().size()));
      }
    }
    return sb.toString();
  }
}
