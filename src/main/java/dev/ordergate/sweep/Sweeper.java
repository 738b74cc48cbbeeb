package dev.ordergate.sweep;

import dev.ordergate.config.SweepConfig;
import dev.ordergate.db.Params;
import dev.ordergate.db.SweepSql;
import dev.ordergate.db.Tx;
import dev.ordergate.domain.TransitionSource;
import dev.ordergate.gate.CancellationEffects;
import dev.ordergate.lifecycle.OnContext;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Supplier;

/**
 * The timeout sweep: cancels pending orders past expiry + grace, in batches, through the one-way gate.
 * <ul>
 *   <li>One run at a time per instance: runs are chained, and the timer is re-armed only after a
 *       run has finished (never {@code setPeriodic}). A manual run waits for the one in flight.</li>
 *   <li>Each batch is one transaction: one statement claims ({@code FOR UPDATE SKIP LOCKED}, oldest
 *       expiry first) and cancels the claimed rows with one conditional set-based UPDATE, then
 *       {@link CancellationEffects} runs for exactly the rows the UPDATE returned; three round trips
 *       in all, with {@code BEGIN} and {@code COMMIT}. Once a batch has come back full, a run keeps
 *       up to {@code batchesInFlight} batches going at once, each on its own connection. Several
 *       instances on one database share the work the same way: a row another transaction holds is
 *       skipped, not waited for.</li>
 *   <li>Precise mode: after a run, the next timer fires at the earliest pending expiry + grace when
 *       that is sooner than the period (never sooner than {@code minDelayMs}); an order created
 *       with an earlier expiry than the armed timer re-arms it.</li>
 *   <li>Every run writes a row to {@code sweep_runs}; a run that fails halfway keeps its committed
 *       batches and says so in its row; the next run does the rest.</li>
 * </ul>
 * All mutable state is touched on the context the sweeper was created on; public methods hop to it.
 */
public final class Sweeper {

  private static final Logger log = LoggerFactory.getLogger(Sweeper.class);
  private static final long PRUNE_EVERY_MS = 3_600_000;

  private final Context context;
  private final Pool pool;
  private final CancellationEffects effects;
  private final SweepMetrics metrics;
  private final String instanceId;
  private final Clock clock;
  private final BatchHook hook;
  private final ClosePass closePass;

  private volatile SweepConfig config;
  /** The last queued run (failures swallowed): the next run starts when it completes. */
  private Future<?> tail = Future.succeededFuture();
  private int queued;
  private boolean started;
  private boolean stopped;
  private long timerId = -1;
  private long timerFiresAt;
  /** App-clock millis when the last run finished; 0 before the first. */
  private long lastFinishedAt;
  private boolean lastRunFailed;
  /**
   * Runs in a row that cancelled nothing although an order was due: its row is locked by someone else
   * (the claim skips locked rows). Precise mode backs off exponentially instead of re-running every
   * minDelayMs; any run that cancels something resets it.
   */
  private int emptyDueRuns;
  /** Earliest known pending expiry, app-clock millis (grace not added); null when none is known. */
  private Long nextExpiryAt;
  /** Expiries of orders created since the last plan query started (it may not have seen them). */
  private Long createdSincePlan;
  /** Database clock minus app clock, measured by the last plan query. */
  private long skewMs;
  private long lastPruneAt;

  public Sweeper(Vertx vertx, Pool pool, CancellationEffects effects, SweepMetrics metrics, SweepConfig config,
                 String instanceId, Clock clock, BatchHook hook) {
    this(vertx, pool, effects, metrics, config, instanceId, clock, hook, ClosePass.NONE);
  }

  /** {@code closePass} runs first in every run (close before cancel, issue 10). */
  public Sweeper(Vertx vertx, Pool pool, CancellationEffects effects, SweepMetrics metrics, SweepConfig config,
                 String instanceId, Clock clock, BatchHook hook, ClosePass closePass) {
    this.closePass = closePass;
    this.context = vertx.getOrCreateContext();
    this.pool = pool;
    this.effects = effects;
    this.metrics = metrics;
    this.config = config;
    this.instanceId = instanceId;
    this.clock = clock;
    this.hook = hook;
  }

  /** {@code $HOSTNAME-pid-xxxx}: tells instances apart in the run log and in transitions. */
  public static String defaultInstanceId() {
    String host = System.getenv("HOSTNAME");
    byte[] salt = new byte[2];
    new SecureRandom().nextBytes(salt);
    return (host == null || host.isBlank() ? "ordergate" : host) + "-" + ProcessHandle.current().pid()
        + "-" + HexFormat.of().formatHex(salt);
  }

  public String instanceId() {
    return instanceId;
  }

  /** The settings in force (changed by {@link #reconfigure}). */
  public SweepConfig config() {
    return config;
  }

  /** Arms the timer when enabled: the first run follows after {@code minDelayMs}. */
  public Future<Void> start() {
    return onContext(() -> {
      started = true;
      log.info("timeout sweep on instance {}: {}", instanceId, config.enabled() ? config : "disabled");
      rearm(true);
      return Future.succeededFuture();
    });
  }

  /** Disarms the timer and waits for the run in flight; a run stops between batches. */
  public Future<Void> stop() {
    return onContext(() -> {
      stopped = true;
      cancelTimer();
      return tail.transform(ignored -> Future.<Void>succeededFuture());
    });
  }

  /** Runs one sweep now (after the one in flight, if any) and answers its run-log row. */
  public Future<SweepRun> runNow() {
    return onContext(this::enqueue);
  }

  /** The newest rows of the run log, of every instance, ids below {@code cursor} (null: from the newest). */
  public Future<List<SweepRun>> recentRuns(Long cursor, int limit) {
    return pool.preparedQuery(SweepSql.LIST_RUNS).execute(Params.of(cursor, limit)).map(rows -> {
      List<SweepRun> out = new ArrayList<>();
      rows.forEach(r -> out.add(SweepRun.of(r)));
      return out;
    });
  }

  /** The order service's after-commit hook: an order due before the armed timer re-arms it. */
  public void orderCreated(JsonObject order) {
    String expiresAt = order.getString("expiresAt");
    if (expiresAt == null) {
      return;
    }
    long dbMillis;
    try {
      dbMillis = Instant.parse(expiresAt).toEpochMilli();
    } catch (DateTimeParseException e) {
      log.warn("order {}: cannot read expiresAt {}; the period timer will catch it", order.getString("orderNo"), expiresAt);
      return;
    }
    onContext(() -> {
      long at = dbMillis - skewMs;
      nextExpiryAt = min(nextExpiryAt, at);
      createdSincePlan = min(createdSincePlan, at);
      if (config.precise()) {
        rearm(false);
      }
      return Future.succeededFuture();
    });
  }

  /** Applies new settings (live tuning): logs old and new values, re-arms the timer. */
  public Future<Void> reconfigure(SweepConfig requested) {
    return onContext(() -> {
      SweepConfig old = config;
      SweepConfig next = requested;
      if (next.configScanMs() != old.configScanMs()) {
        log.warn("sweep.configScanMs {} -> {} takes effect after a restart; keeping {} until then",
            old.configScanMs(), next.configScanMs(), old.configScanMs());
        next = next.withConfigScanMs(old.configScanMs());
      }
      List<String> changes = old.changesTo(next);
      if (changes.isEmpty()) {
        return Future.succeededFuture();
      }
      config = next;
      log.info("sweep settings changed on instance {}: {}", instanceId, String.join(", ", changes));
      if (!next.enabled()) {
        cancelTimer();
      } else {
        rearm(true);
      }
      return Future.succeededFuture();
    });
  }

  // ---- scheduling (on the context) ------------------------------------------------------------

  private Future<SweepRun> enqueue() {
    cancelTimer();
    queued++;
    Future<SweepRun> unit = tail
        .transform(ignored -> runOnce())
        .transform(run -> plan().transform(ignored -> run.succeeded()
            ? Future.succeededFuture(run.result()) : Future.<SweepRun>failedFuture(run.cause())));
    tail = unit;
    return unit.andThen(ar -> {
      queued--;
      lastFinishedAt = clock.millis();
      lastRunFailed = ar.failed() || ar.result().failed();
      boolean stillDue = nextExpiryAt != null && nextExpiryAt + config.graceSeconds() * 1000 <= lastFinishedAt;
      emptyDueRuns = ar.succeeded() && ar.result().cancelled() == 0 && stillDue ? Math.min(emptyDueRuns + 1, 30) : 0;
      rearm(true);
    });
  }

  /**
   * Arms the timer for the next run: at the last run's end + period, or, in precise mode, at the
   * earliest pending expiry + grace when sooner; never sooner than minDelayMs from now. With
   * {@code mayDelay} false (an order was created) the timer only ever moves earlier.
   */
  private void rearm(boolean mayDelay) {
    if (!started || stopped || queued > 0) {
      return;
    }
    SweepConfig cfg = config;
    if (!cfg.enabled()) {
      cancelTimer();
      return;
    }
    long now = clock.millis();
    long target = lastFinishedAt + cfg.periodMs();
    if (cfg.precise() && !lastRunFailed && nextExpiryAt != null) {
      long precise = nextExpiryAt + cfg.graceSeconds() * 1000;
      if (emptyDueRuns > 0) {
        precise = Math.max(precise, lastFinishedAt + Math.min(cfg.periodMs(), cfg.minDelayMs() << emptyDueRuns));
      }
      target = Math.min(target, precise);
    }
    long firesAt = now + Math.max(cfg.minDelayMs(), target - now);
    if (timerId != -1 && (firesAt == timerFiresAt || (!mayDelay && firesAt > timerFiresAt))) {
      return;
    }
    cancelTimer();
    timerFiresAt = firesAt;
    timerId = context.owner().setTimer(Math.max(1, firesAt - now), id -> {
      if (id != timerId) {
        return;
      }
      timerId = -1;
      if (!stopped && config.enabled() && queued == 0) {
        enqueue();
      }
    });
  }

  private void cancelTimer() {
    if (timerId != -1) {
      context.owner().cancelTimer(timerId);
      timerId = -1;
    }
  }

  // ---- one run --------------------------------------------------------------------------------

  private Future<SweepRun> runOnce() {
    SweepConfig cfg = config;
    long t0 = System.nanoTime();
    return closePass.run(cfg.graceSeconds(), cfg.batchSize() * cfg.maxBatchesPerRun())
        .recover(err -> {
          log.warn("close-before-cancel pass failed on instance {}: {}; orders with open attempts wait for the next run",
              instanceId, err.toString());
          return Future.succeededFuture();
        })
        .compose(v -> pool.preparedQuery(SweepSql.START_RUN).execute(Params.of(instanceId)))
        .map(rows -> SweepRun.of(rows.iterator().next()).id())
        .compose(runId -> {
          Tally tally = new Tally();
          return batches(runId, cfg, tally)
              .transform(ar -> finish(runId, tally, ar.failed() ? ar.cause() : null));
        })
        .andThen(ar -> {
          metrics.run(ar.succeeded() && !ar.result().failed(), System.nanoTime() - t0);
          if (ar.failed()) {
            log.error("sweep run on instance {} could not be recorded: {}", instanceId, ar.cause().toString());
          }
        })
        .compose(run -> prune(cfg).map(run));
  }

  /**
   * The batches of one run, each in its own transaction (on its own connection): the first alone, and once a
   * batch has come back full, up to {@code batchesInFlight} at once, each taking the next batch number, until a
   * batch comes back short, one fails, the run has had {@code maxBatchesPerRun} or the sweeper stops. Batches in
   * flight together claim different orders (the claim skips locked rows). After a failure no batch starts;
   * those in flight finish, and the run fails with the first failure. A run over a few due orders is one batch.
   */
  private Future<Void> batches(long runId, SweepConfig cfg, Tally tally) {
    Lanes lanes = new Lanes(runId, cfg, tally);
    fill(lanes);
    return lanes.done.future();
  }

  /** Starts batches while the run may go on and lanes are free; ends the run when none is left in flight. */
  private void fill(Lanes lanes) {
    SweepConfig cfg = lanes.cfg;
    int lanesOpen = lanes.started == 0 ? 1 : cfg.batchesInFlight();
    while (lanes.inFlight < lanesOpen && !lanes.exhausted && lanes.failure == null && !stopped
        && lanes.started < cfg.maxBatchesPerRun()) {
      int batchNo = ++lanes.started;
      lanes.inFlight++;
      Tx.run(pool, conn -> batch(conn, lanes.runId, batchNo, cfg)).onComplete(ar -> {
        lanes.inFlight--;
        if (ar.failed()) {
          if (lanes.failure == null) {
            lanes.failure = new BatchFailure(batchNo, ar.cause());
          }
        } else {
          Batch b = ar.result();
          if (b.claimed() > 0) {
            lanes.tally.add(b);
            metrics.cancelled(b.lateness());
          }
          if (b.claimed() < cfg.batchSize()) {
            lanes.exhausted = true;
          }
        }
        fill(lanes);
      });
    }
    if (lanes.inFlight == 0) {
      if (lanes.failure == null) {
        lanes.done.tryComplete();
      } else {
        lanes.done.tryFail(lanes.failure);
      }
    }
  }

  private Future<Batch> batch(SqlConnection conn, long runId, int batchNo, SweepConfig cfg) {
    return conn.preparedQuery(SweepSql.CLAIM_AND_CANCEL).execute(Params.of(cfg.graceSeconds(), cfg.batchSize()))
        .compose(rows -> {
          int claimed = 0;
          List<String> winners = new ArrayList<>(rows.size());
          double[] lateness = new double[rows.size()];
          for (Row r : rows) {
            claimed = r.getLong("claimed").intValue();
            String orderNo = r.getString("order_no");
            if (orderNo != null) {
              lateness[winners.size()] = r.getDouble("lateness_seconds");
              winners.add(orderNo);
            }
          }
          if (claimed == 0) {
            return Future.succeededFuture(Batch.EMPTY);
          }
          Batch done = new Batch(claimed, winners.size(), Arrays.copyOf(lateness, winners.size()));
          String reference = "sweep-run:" + runId;
          return effects.apply(conn, new CancellationEffects.Cancelled(winners,
                  Collections.nCopies(winners.size(), instanceId), Collections.nCopies(winners.size(), reference)),
                  TransitionSource.TIMEOUT_SWEEP)
              .compose(v -> hook.beforeCommit(runId, batchNo, winners))
              .map(done);
        });
  }

  private Future<SweepRun> finish(long runId, Tally t, Throwable err) {
    String error = err == null ? null : describe(err, t);
    return pool.preparedQuery(SweepSql.FINISH_RUN)
        .execute(Params.of(runId, t.batches, t.claimed, t.cancelled, error))
        .map(rows -> SweepRun.of(rows.iterator().next()))
        .andThen(ar -> {
          if (err != null) {
            log.warn("sweep run {} on instance {} failed: {}", runId, instanceId, error, err);
          } else if (ar.succeeded() && t.cancelled > 0) {
            log.info("sweep run {} on instance {} cancelled {} orders in {} batches", runId, instanceId,
                t.cancelled, t.batches);
          } else {
            log.debug("sweep run {} on instance {}: nothing due", runId, instanceId);
          }
        });
  }

  private static String describe(Throwable err, Tally t) {
    String head = err instanceof BatchFailure bf
        ? "batch " + bf.batchNo + " failed: " + bf.getCause()
        : "run failed: " + err;
    return head + "; " + t.batches + " committed batch(es) with " + t.cancelled
        + " cancellation(s) stay done, the rest is left to the next run";
  }

  /** Reads the backlog (the overdue gauge) and the earliest pending expiry (precise mode). */
  private Future<Void> plan() {
    SweepConfig cfg = config;
    createdSincePlan = null;
    return pool.preparedQuery(SweepSql.PLAN).execute(Params.of(cfg.graceSeconds()))
        .map(rows -> {
          Row r = rows.iterator().next();
          skewMs = r.getLong("db_now_ms") - clock.millis();
          metrics.overdue(r.getLong("overdue"));
          Long next = r.getLong("next_expiry_ms");
          nextExpiryAt = min(next == null ? null : next - skewMs, createdSincePlan);
          return (Void) null;
        })
        .recover(err -> {
          log.warn("sweep plan query failed on instance {}: {}", instanceId, err.toString());
          nextExpiryAt = createdSincePlan;
          return Future.succeededFuture();
        });
  }

  /** Deletes run-log rows past retention, at most once an hour per instance. */
  private Future<Void> prune(SweepConfig cfg) {
    long now = clock.millis();
    if (now - lastPruneAt < PRUNE_EVERY_MS) {
      return Future.succeededFuture();
    }
    lastPruneAt = now;
    return pool.preparedQuery(SweepSql.PRUNE_RUNS).execute(Params.of(cfg.runLogRetentionDays()))
        .<Void>map(rows -> {
          if (rows.rowCount() > 0) {
            log.info("pruned {} sweep run-log rows older than {} days", rows.rowCount(), cfg.runLogRetentionDays());
          }
          return null;
        })
        .recover(err -> {
          log.warn("pruning the sweep run log failed: {}", err.toString());
          return Future.succeededFuture();
        });
  }

  private <T> Future<T> onContext(Supplier<Future<T>> work) {
    return OnContext.run(context, work);
  }

  private static Long min(Long a, Long b) {
    if (a == null) {
      return b;
    }
    if (b == null) {
      return a;
    }
    return Math.min(a, b);
  }

  private record Batch(int claimed, int cancelled, double[] lateness) {
    static final Batch EMPTY = new Batch(0, 0, new double[0]);
  }

  /** One run's batches: what they share, touched on the sweeper's context only. */
  private static final class Lanes {
    final long runId;
    final SweepConfig cfg;
    final Tally tally;
    /** Completes (failed with the first failure, if any) when the run's last batch has ended. */
    final Promise<Void> done = Promise.promise();
    /** Batch numbers handed out so far. */
    int started;
    int inFlight;
    /** A batch came back short: the due orders are taken (or held by others). */
    boolean exhausted;
    /** The first batch that failed. */
    BatchFailure failure;

    Lanes(long runId, SweepConfig cfg, Tally tally) {
      this.runId = runId;
      this.cfg = cfg;
      this.tally = tally;
    }
  }

  /** Counts of the committed batches of one run. */
  private static final class Tally {
    int batches;
    int claimed;
    int cancelled;

    void add(Batch b) {
      batches++;
      claimed += b.claimed();
      cancelled += b.cancelled();
    }
  }

  /** A batch's transaction failed (and was rolled back); earlier batches of the run stay committed. */
  static final class BatchFailure extends RuntimeException {
    final int batchNo;

    BatchFailure(int batchNo, Throwable cause) {
      super("batch " + batchNo + " failed", cause, false, false);
      this.batchNo = batchNo;
    }
  }
}
