package dev.ordergate.reconcile;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * One invariant's result. {@code total} counts every violation; {@code violations} lists at most
 * the reconciler's limit of them. {@code skipped} names why a check did not run (a missing table).
 */
public record CheckResult(Invariant invariant, long total, List<Violation> violations, String skipped) {

  public JsonObject toJson() {
    JsonArray list = new JsonArray();
    violations.forEach(v -> list.add(v.toJson()));
    return new JsonObject().put("invariant", invariant.name()).put("description", invariant.description())
        .put("violations", total).put("skipped", skipped).put("listed", list);
  }
}
