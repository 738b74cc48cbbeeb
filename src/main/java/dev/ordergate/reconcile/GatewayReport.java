package dev.ordergate.reconcile;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;

/**
 * One channel's day reconciled against its gateway's bill. {@code ok}: no finding (a finding resolved by
 * --apply still counts: the next run is the clean one). Counts: the bill's payments and refunds, our SUCCESS
 * receipts of that day, and those of them the bill did not list but the gateway's query confirmed (billed
 * on a neighbouring day).
 */
public record GatewayReport(String channel, LocalDate date, String zone, boolean apply, Instant startedAt,
                            long durationMs, int billPayments, int billRefunds, int receiptsOfDay, int confirmedByQuery,
                            List<GatewayFinding> findings) {

  public boolean ok() {
    return findings.isEmpty();
  }

  public List<GatewayFinding> of(GatewayCheck check) {
    return findings.stream().filter(f -> f.check() == check).toList();
  }

  public JsonObject toJson() {
    JsonArray checks = new JsonArray();
    for (GatewayCheck c : GatewayCheck.values()) {
      JsonArray listed = new JsonArray();
      of(c).forEach(f -> listed.add(f.toJson()));
      checks.add(new JsonObject().put("check", c.name()).put("description", c.description())
          .put("findings", listed.size()).put("listed", listed));
    }
    return new JsonObject().put("channel", channel).put("date", date.toString()).put("zone", zone).put("apply", apply)
        .put("startedAt", startedAt.toString()).put("durationMs", durationMs).put("ok", ok())
        .put("findings", findings.size())
        .put("bill", new JsonObject().put("payments", billPayments).put("refunds", billRefunds))
        .put("ours", new JsonObject().put("receiptsOfDay", receiptsOfDay).put("confirmedByQuery", confirmedByQuery))
        .put("checks", checks);
  }

  /** Reads a report back from {@link #toJson()} (a tool asking a running service). */
  public static GatewayReport fromJson(JsonObject j) {
    List<GatewayFinding> findings = new ArrayList<>();
    for (Object c : j.getJsonArray("checks", new JsonArray())) {
      for (Object f : ((JsonObject) c).getJsonArray("listed", new JsonArray())) {
        findings.add(GatewayFinding.fromJson((JsonObject) f));
      }
    }
    JsonObject bill = j.getJsonObject("bill", new JsonObject());
    JsonObject ours = j.getJsonObject("ours", new JsonObject());
    return new GatewayReport(j.getString("channel"), LocalDate.parse(j.getString("date")), j.getString("zone"),
        j.getBoolean("apply", false), Instant.parse(j.getString("startedAt")), j.getLong("durationMs", 0L),
        bill.getInteger("payments", 0), bill.getInteger("refunds", 0), ours.getInteger("receiptsOfDay", 0),
        ours.getInteger("confirmedByQuery", 0), List.copyOf(findings));
  }

  public String summary() {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format("gateway reconciliation of %s for %s (%s day), %d ms: %s%n", channel, date, zone, durationMs,
        ok() ? "the bill and our books agree" : findings.size() + " finding(s)"));
    sb.append(String.format("  bill: %d payment(s), %d refund(s); ours: %d receipt(s) that day, %d confirmed by query%n",
        billPayments, billRefunds, receiptsOfDay, confirmedByQuery));
    for (GatewayCheck c : GatewayCheck.values()) {
      int n = of(c).size();
      sb.append(String.format("  %-24s %s%n", c.name(), n == 0 ? "ok" : n + " finding(s)"));
    }
    findings.forEach(f -> sb.append("  ! ").append(f.line()).append(System.lineSeparator()));
    if (!apply && !of(GatewayCheck.MISSING_RECEIPT).isEmpty()) {
      sb.append("  (run with --apply to apply the missing payments through the payment gate)").append(System.lineSeparator());
    }
    return sb.toString();
  }
}
