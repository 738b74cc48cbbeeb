package dev.ordergate.sweep;

import dev.ordergate.db.Rows;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;

import java.time.OffsetDateTime;

/**
 * One row of the run log. {@code batches}, {@code claimed} and {@code cancelled} count committed
 * batches only; {@code finishedAt == null} means the run never ended; {@code error} says why a run
 * stopped early (its committed batches stay done, the rest is left to the next run).
 */
public record SweepRun(long id, String instanceId, OffsetDateTime startedAt, OffsetDateTime finishedAt,
                       int batches, int claimed, int cancelled, String error) {

  public static SweepRun of(Row r) {
    return new SweepRun(r.getLong("id"), r.getString("instance_id"), r.getOffsetDateTime("started_at"),
        r.getOffsetDateTime("finished_at"), r.getInteger("batches"), r.getInteger("claimed"),
        r.getInteger("cancelled"), r.getString("error"));
  }

  public boolean failed() {
    return error != null;
  }

  public JsonObject toJson() {
    return new JsonObject()
        .put("id", id)
        .put("instanceId", instanceId)
        .put("startedAt", Rows.instant(startedAt))
        .put("finishedAt", Rows.instant(finishedAt))
        .put("batches", batches)
        .put("claimed", claimed)
        .put("cancelled", cancelled)
        .put("error", error);
  }
}
