package dev.ordergate.outbox;

import dev.ordergate.config.ChannelConfig;
import dev.ordergate.config.OutboxConfig;
import dev.ordergate.config.Secrets;
import dev.ordergate.db.OutboxSql;
import dev.ordergate.db.Params;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Delivers outbox events after their transaction committed, at least once, in order per order
 * number. All state is in the database, so a restart loses nothing:
 * <ol>
 *   <li>claim: one short statement takes up to {@code batchSize} due events with
 *       {@code FOR UPDATE SKIP LOCKED} and sets a lease ({@code claimed_until}, a fresh claim
 *       token) and counts the attempt. Other relays skip claimed rows, so several instances never
 *       deliver one event at the same time. An event waits while an earlier event of its order is
 *       pending;</li>
 *   <li>deliver over HTTP ({@code Idempotency-Key} = event id; 2xx and the whole answer read =
 *       delivered) or to the log. Each delivery has one hard deadline from connect to last byte,
 *       {@code httpTimeoutMs} and always inside the lease: past it the request is reset, so a sink that
 *       drips its answer cannot keep a delivery alive past its claim, and no two deliveries of one event
 *       overlap. An event that used its {@code maxAttempts} is never claimed again: it goes DEAD;</li>
 *   <li>mark under the claim token: DELIVERED, or back-off ({@code baseDelayMs * 2^(attempt-1)},
 *       capped at {@code maxDelayMs}), or DEAD after {@code maxAttempts}. A relay that stops waits
 *       a few seconds for its deliveries in flight and marks them; one that died, or a delivery
 *       still running after that wait, marks nothing: its lease runs out and it is delivered again.</li>
 * </ol>
 * Events written as STREAM (a service whose sinks are all the log or webhooks that take batches) skip the
 * claim, the lease and the mark: the cursor ({@link #stream}) delivers them in batches and moves one position;
 * those it cannot deliver come to the claim path as retries.
 * <p>Claims never overlap on one instance: a timer re-armed after each claim, a nudge after a commit
 * that wrote events ({@link OutboxSignal}) or a delivery that may have unblocked its order's next
 * event, and a wake-up when a retry falls due. Deliveries run concurrently, at most
 * {@code outbox.maxInFlight} in flight per relay; the next claim does not wait for a slow one.
 */
public final class OutboxRelay extends VerticleBase {

  private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
  private static final Logger SINK_LOG = LoggerFactory.getLogger("dev.ordergate.outbox.LogSink");
  private static final long GAUGE_REFRESH_MS = 5_000;
  private static final int ERROR_MAX = 500;
  /** A delivery ends this long before its lease does, at the latest (clock and scheduling slack). */
  private static final long LEASE_MARGIN_MS = 500;
  private static final long MIN_DELIVERY_MS = 100;
  private static final int PRUNE_BATCH = 1_000;
  private static final long VACUUM_AFTER_ROWS = 5_000;
  /** At most this many of one order's events in one claim. */
  private static final int MAX_CHAIN = 8;
  /**
   * The log sink's statement takes up to this many times {@code batchSize} orders: it holds no lease and its
   * locks only while it runs, and a batch that comes back full lets the webhook claim take log-sink heads too,
   * the dearer way (issue 13: with 100 orders a fifth of the log events went that way under load).
   */
  static final int LOG_BATCH_FACTOR = 4;
  /**
   * With every sink type going to the log, the claim only has refund requests, broker timeout messages and
   * retries to take: while the log statement keeps up and the last claim was not full, it runs at most this
   * often instead of every cycle (issue 13: under open load half the relay's transactions, each with its
   * custom plan, found nothing). Such an event leaves at most this much later.
   */
  static final long IDLE_CLAIM_MS = 100;

  private final Pool pool;
  private final OutboxConfig config;
  private final Map<String, ChannelConfig> channels;
  private final OutboxMetrics metrics;
  private final OutboxSignal signal;
  private final String instanceId;
  private final Runnable listener = this::nudgeFromAnyThread;
  /** Event types without a sink URL: delivered to the log in one statement ({@link OutboxSql#DELIVER_TO_LOG}). */
  private final String[] logTypes;
  /** Some sink type has a URL and its events are not the cursor's: the claim runs every cycle. */
  private final boolean webhooks;
  private long idleClaimMs = IDLE_CLAIM_MS;
  private long lastClaimMs;
  private boolean lastClaimFull;
  /** At most this many events in one read of the log sink's cursor: {@code batchSize} times this. */
  static final int STREAM_BATCH_FACTOR = 8;
  /** A new delivery-time mark of the cursor at most this often (V18). */
  static final long MARK_EVERY_MS = 100;
  /** When the log sink's statement for PENDING events (written without the stream setting) last ran, and whether it found any. */
  private long lastLogMs;
  private boolean lastLogFound = true;
  /** The cursor's last read found events, and when it last read. */
  private boolean streamFound;
  private long lastStreamMs;
  /** Claim statements run (tests read it from their own thread). */
  private volatile long claims;

  private HttpClientAgent client;
  private SinkBatches batches;
  private long timerId = -1;
  private long pruneTimer = -1;
  private long timerDueAt;
  private long wakeAt = Long.MAX_VALUE;
  /** No claim before this (ms) unless a retry falls due: the linger after a cycle that was not full. */
  private long lingerUntil;
  private int inFlight;
  private boolean running;
  private boolean again;
  private boolean stopped;
  /** Set by {@link #stop()} while deliveries are in flight; completed when the last one is marked. */
  private Promise<Void> drained;
  /** The stop stopped waiting: what finishes now is left unmarked for its lease to bring back. */
  private boolean abandoned;
  static final long STOP_DRAIN_MS = 5000;
  private long gaugesRefreshedAt;
  /** Rows the retention deleted since this relay's last vacuum of the outbox. */
  private long deletedSinceVacuum;
  private final List<Delivered> deliveredQueue = new ArrayList<>();
  private boolean marking;
  /** Log-sink statements per claim cycle: 1, or {@code outbox.concurrency} while batches come back full. */
  private int logLanes = 1;
  /**
   * An xid below which no fresh event is pending, now or later ({@link OutboxSql#FLOOR}, taken every
   * {@link #FLOOR_REFRESH_MS}). A fresh event's first delivery changes no indexed column, so the walks
   * cannot use the status to skip delivered events; a walk from the floor passes only the events delivered
   * since the oldest one still pending (issue 13). Loaded at start from {@code outbox_floor}, where each
   * FLOOR statement records it.
   */
  private long floor;
  /**
   * Where each walk starts between two floors: past the fresh heads its own last statements took (never
   * past the xmin of their snapshot, so an event committed late is not passed over). A floor stays at the
   * oldest event in flight, and walks from it would pass every event delivered since: under load with slow
   * webhook answers, thousands of rows per cycle. What a walk from its frontier passes over for good (an
   * event queued behind an event in flight, beyond a claim's chain) is found by its next walk from the
   * floor, at most {@link #FLOOR_REFRESH_MS} later. One frontier each: the log statement passes over every
   * head of a type it does not take (and the claim, while the log statement keeps up, over the log sink's
   * heads), so one walk's frontier says nothing of what the other has looked at. Shared, the log statement
   * moved it past the webhook events in every cycle, the floor's cycle included (it runs first), and a
   * webhook event waited as long as log traffic kept coming (OutboxRelayTest).
   */
  private long claimFrontier;
  private long logFrontier;
  /**
   * The highest snapshot xmin a walking statement answered. A walk that came back short (fewer heads than its
   * LIMIT) looked at every fresh event it could see from its frontier; its snapshot was taken after that xmin,
   * so every transaction below it was visible: its frontier may move up to it. Without this, a claim that
   * takes nothing (a log-only relay's, between refund requests) walked from the floor every time, past every
   * event the log statement had delivered since.
   */
  private long seenXmin;
  private long floorTakenAt;
  static final long FLOOR_REFRESH_MS = 500;
  /** How many fresh pending events one {@link OutboxSql#FLOOR} looks at. */
  static final int FLOOR_SCAN = 256;
  /** Event types delivered by another component instead of HTTP or the log (the broker tier's ORDER_TIMEOUT). */
  private final Map<OutboxEventType, Function<OutboxEvent, Future<Void>>> routes = new EnumMap<>(OutboxEventType.class);

  public OutboxRelay(Pool pool, OutboxConfig config, Map<String, ChannelConfig> channels, OutboxMetrics metrics,
                     OutboxSignal signal, String instanceId) {
    this.pool = pool;
    this.config = config;
    this.channels = channels;
    this.metrics = metrics;
    this.signal = signal;
    this.instanceId = instanceId;
    this.logTypes = OutboxConfig.SINK_TYPES.stream().filter(t -> !config.sinkUrls().containsKey(t)).sorted()
        .toArray(String[]::new);
    this.webhooks = logTypes.length < OutboxConfig.SINK_TYPES.size() && !config.streams();
  }

  /**
   * Delivers events of {@code type} with {@code deliverer} (success = delivered; a null answer: not this
   * deliverer's event, it goes to HTTP or the log as usual); call before deploying.
   */
  public OutboxRelay route(OutboxEventType type, Function<OutboxEvent, Future<Void>> deliverer) {
    routes.put(type, deliverer);
    return this;
  }

  /** Where the claim's fresh walk starts (tests). */
  long claimFrontier() {
    return claimFrontier;
  }

  /** {@link #IDLE_CLAIM_MS} for this relay (tests); call before deploying. */
  OutboxRelay idleClaimMs(long ms) {
    idleClaimMs = ms;
    return this;
  }

  /** How many claim statements this relay ran (tests). */
  long claimStatements() {
    return claims;
  }

  @Override
  public Future<?> start() {
    client = vertx.createHttpClient(new HttpClientOptions()
        .setConnectTimeout((int) Math.min(Integer.MAX_VALUE, config.httpTimeoutMs())));
    batches = new SinkBatches(context, this::post);
    log.info("outbox relay {} started (poll {} ms, batch {}, {} attempts, lease {} ms)", instanceId,
        config.pollMs(), config.batchSize(), config.maxAttempts(), config.leaseMs());
    if (config.retentionHours() > 0) {
      pruneTimer = vertx.setTimer(config.pruneIntervalMs(), t -> prune());
    }
    // No cycle before the floor is known: a walk from xid 0 would pass every event in the table once.
    return pool.query(OutboxSql.LOAD_FLOOR).execute().map(rows -> {
      floor = rows.iterator().next().getLong("lo");
      claimFrontier = floor;
      logFrontier = floor;
      signal.listen(listener);
      context.runOnContext(v -> run());
      return null;
    });
  }

  /**
   * Stops claiming and waits up to {@link #STOP_DRAIN_MS} for the deliveries in flight to finish
   * and be marked; those still running then are abandoned unmarked (as after a crash), and their
   * leases bring them back.
   */
  @Override
  public Future<?> stop() {
    stopped = true;
    signal.unlisten(listener);
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
    }
    if (pruneTimer >= 0) {
      vertx.cancelTimer(pruneTimer);
    }
    if (inFlight > 0) {
      Promise<Void> p = Promise.promise();
      drained = p;
      vertx.setTimer(STOP_DRAIN_MS, t -> {
        abandoned = true;
        p.tryComplete();
      });
    }
    return (drained == null ? Future.<Void>succeededFuture() : drained.future()).onComplete(v -> client.close());
  }

  private void nudgeFromAnyThread() {
    context.runOnContext(v -> nudge());
  }

  /**
   * Claims soon: at once, or when the linger after the last short cycle ends; a claim going on is
   * followed by another.
   */
  void nudge() {
    if (stopped) {
      return;
    }
    if (running) {
      again = true;
      return;
    }
    long wait = lingerUntil - System.currentTimeMillis();
    if (wait > 0) {
      wakeIn(wait);
      return;
    }
    run();
  }

  /** Makes sure a claim happens within {@code delayMs} (a retry falls due then). */
  private void wakeIn(long delayMs) {
    long dueAt = System.currentTimeMillis() + delayMs;
    wakeAt = Math.min(wakeAt, dueAt);
    if (stopped || running || (timerId >= 0 && timerDueAt <= dueAt)) {
      return;
    }
    arm(delayMs);
  }

  private void arm(long delayMs) {
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
    }
    long delay = Math.max(1, delayMs);
    timerDueAt = System.currentTimeMillis() + delay;
    timerId = vertx.setTimer(delay, t -> {
      timerId = -1;
      run();
    });
  }

  private void run() {
    if (stopped) {
      return;
    }
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    running = true;
    again = false;
    claim().onComplete(ar -> {
      running = false;
      if (ar.failed()) {
        log.warn("outbox relay {}: claim failed: {}", instanceId, ar.cause().toString());
      }
      if (!stopped) {
        long now = System.currentTimeMillis();
        long untilWake = wakeAt - now;
        wakeAt = Long.MAX_VALUE;
        boolean full = ar.succeeded() && ar.result();
        // A short cycle: events that arrive next gather for lingerMs and leave together (issue 13).
        lingerUntil = full ? 0 : now + config.lingerMs();
        arm(full ? 1 : again ? Math.max(1, config.lingerMs()) : Math.min(config.pollMs(), untilWake));
      }
    });
  }

  /**
   * Claims what fits next to the deliveries still in flight (at most {@code batchSize} per
   * relay) and starts delivering them; does not wait for them, so one slow endpoint does not hold
   * up the other orders' events. Answers whether the claim was full (more may be due).
   */
  private Future<Boolean> claim() {
    return refreshGauges()
        .compose(v -> advanceFloor())
        .compose(v -> streamDue() ? stream() : Future.succeededFuture(false))
        .compose(streamFull -> (logTypes.length == 0 ? Future.succeededFuture(false) : deliverToLog())
            .compose(logFull -> claimForSinks(logFull).map(full -> full || logFull || streamFull)));
  }

  /**
   * The cursor (V18): a transaction reads the committed STREAM events past the position and takes the longest run
   * of them whose orders' earlier events are all in it ({@link #deliverable}). A run for the log alone is logged
   * and the position moved in that transaction: the lines are written before the commit, so a crash in between
   * logs them again (at least once). A run with events for a webhook takes a lease on the position instead (V20)
   * and commits; its POSTs run outside any transaction, each order's next event only once its previous one was
   * accepted ({@link #handOut}), and a second transaction moves the position while the lease is still this
   * relay's ({@link #passLeased}). An event whose POST failed, and the events of its order behind it, leave the
   * cursor for the claim path's retries ({@link OutboxSql#STREAM_DEMOTE}) in the transaction that moves the
   * position. Every relay runs it, whatever its own sinks: a STREAM event was meant for the cursor when it was
   * written. Answers whether more may be waiting.
   */
  private Future<Boolean> stream() {
    int window = config.batchSize() * STREAM_BATCH_FACTOR;
    boolean lines = SINK_LOG.isDebugEnabled();
    boolean posts = !config.sinkUrls().isEmpty();
    List<OutboxEventType> types = new ArrayList<>();
    List<Demoted> demoted = new ArrayList<>();
    UUID token = UUID.randomUUID();
    long[] leasedAt = new long[1];
    List<Row> leased = new ArrayList<>();
    Row[] last = new Row[1];
    return pool.withTransaction(conn -> conn.query(OutboxSql.CLAIM_PLAN).execute()
            .compose(x -> conn.preparedQuery(lines || posts ? OutboxSql.STREAM_READ : OutboxSql.STREAM_READ_QUIET)
                .execute(Params.of(window)))
            .compose(rows -> {
              List<Row> read = new ArrayList<>(rows.size());
              rows.forEach(read::add);
              streamFound = !read.isEmpty();
              int n = deliverable(read);
              if (n == 0) {
                if (read.isEmpty()) {
                  return Future.succeededFuture(false);
                }
                // The first event waits for an earlier one of its order beyond this batch: delivered ahead of the
                // cursor (by a relay with webhooks: left to the claim path) when all of them have ended, else the
                // next cycle's horizon lets it through.
                Row first = read.get(0);
                return conn.preparedQuery(OutboxSql.STREAM_AHEAD).execute(Params.of(first.getString("order_no"),
                        first.getLong("seq"), instanceId, first.getLong("xmin"), posts))
                    .map(ahead -> {
                      List<Row> sorted = new ArrayList<>(ahead.size());
                      ahead.forEach(sorted::add);
                      if (posts) {
                        sorted.forEach(r -> demoted.add(demotion(r, null)));
                      } else {
                        logLines(sorted, true, types);
                      }
                      return !sorted.isEmpty();
                    });
              }
              List<Row> batch = new ArrayList<>(read.subList(0, n));
              // The position goes past the last row in (tx, seq) order; handOut sorts the batch by seq.
              last[0] = batch.get(n - 1);
              boolean more = read.size() >= window || n < read.size();
              int type = at(batch, "type");
              if (batch.stream().anyMatch(r -> config.sinkUrls().containsKey(r.getString(type)))) {
                leased.addAll(batch);
                // Taken before the lease's now(): the relay's deadlines end no later than the lease does.
                leasedAt[0] = System.nanoTime();
                return conn.preparedQuery(OutboxSql.STREAM_LEASE).execute(Params.of(token, config.leaseMs()))
                    .map(more);
              }
              // Only the log: handed out (no network call) and passed in this transaction, the position locked.
              return handOut(batch, lines, types, demoted, leasedAt[0])
                  .compose(v -> pass(conn, last[0], null, demoted))
                  .map(more);
            }))
        .compose(more -> leased.isEmpty() ? Future.succeededFuture(more)
            : passLeased(leased, last[0], token, leasedAt[0], lines, types, demoted).map(more))
        .onSuccess(more -> {
          types.forEach(type -> metrics.delivery(type, "delivered"));
          demoted(demoted);
        });
  }

  /**
   * A batch under this relay's lease on the position, token {@code token} taken at {@code leasedAt}, {@code last}
   * its last row in {@code (tx, seq)} order: handed out
   * with no transaction open ({@link #handOut}), then passed in one transaction while the lease is still there.
   * A batch not passed (the relay stops mid-POST, the lease ran out, a statement failed) gives the lease back if it
   * can; the next read delivers the batch again (at least once).
   */
  private Future<Void> passLeased(List<Row> batch, Row last, UUID token, long leasedAt, boolean lines,
                                  List<OutboxEventType> types, List<Demoted> demoted) {
    return handOut(batch, lines, types, demoted, leasedAt)
        .compose(v -> pool.withTransaction(conn -> pass(conn, last, token, demoted)))
        .recover(err -> pool.preparedQuery(OutboxSql.STREAM_RELEASE).execute(Params.of(token))
            .transform(ar -> Future.failedFuture(err)));
  }

  /**
   * Moves the position past {@code last} ({@link OutboxSql#STREAM_ADVANCE}; {@code token}: the lease it must still
   * hold, null when {@code conn}'s transaction read the batch) and, only then, passes {@code demoted} to the claim
   * path. Fails when the lease was lost, so the transaction rolls back.
   */
  private Future<Void> pass(io.vertx.sqlclient.SqlConnection conn, Row last, UUID token, List<Demoted> demoted) {
    return conn.preparedQuery(OutboxSql.STREAM_ADVANCE)
        .execute(Params.of(last.getLong("tx"), last.getLong("seq"), MARK_EVERY_MS, token))
        .compose(rows -> rows.iterator().next().getLong("moved") == 0
            ? Future.failedFuture(new IllegalStateException("the cursor's lease ran out before its batch was passed"))
            : demoted.isEmpty() ? Future.<Void>succeededFuture()
            : conn.preparedQuery(OutboxSql.STREAM_DEMOTE).execute(Params.of(
                demoted.stream().map(Demoted::id).toArray(UUID[]::new),
                demoted.stream().map(Demoted::error).toArray(String[]::new), config.maxAttempts(),
                (double) config.baseDelayMs(), (double) config.maxDelayMs(), instanceId)).mapEmpty());
  }

  /** A STREAM event the cursor passes to the claim path: the error of its failed POST, or null (not attempted). */
  private record Demoted(UUID id, OutboxEventType type, String orderNo, String error) {}

  /**
   * After the cursor's commit: what its failed POSTs left to the claim path, counted and logged; a claim when
   * they fall due.
   */
  private void demoted(List<Demoted> demoted) {
    if (demoted.isEmpty()) {
      return;
    }
    boolean dead = config.maxAttempts() <= 1;
    for (Demoted d : demoted) {
      if (d.error() == null) {
        continue;
      }
      metrics.delivery(d.type(), dead ? "dead" : "retry");
      if (dead) {
        log.error("outbox {} {} order {} is DEAD after 1 attempt: {}", d.type(), d.id(), d.orderNo(), d.error());
      } else {
        log.warn("outbox {} {} order {} attempt 1 failed ({}); retry in {} ms", d.type(), d.id(), d.orderNo(),
            d.error(), Math.min(config.baseDelayMs(), config.maxDelayMs()));
      }
    }
    log.debug("outbox relay {}: {} event(s) left the cursor for the claim path", instanceId, demoted.size());
    lastClaimFull = true;
    nudge();
    wakeIn(Math.min(config.baseDelayMs(), config.maxDelayMs()));
  }

  /**
   * Delivers a cursor batch ({@code rows}, any order; each order's events go in seq order). Only log-sink events,
   * none behind a pending event of its order: logged at once ({@link #logLines}). Otherwise in rounds: the
   * first remaining event of each order, its POSTs (one per URL and {@code batchMax}) sent side by side; an order
   * whose event failed (added to {@code demoted} with its error), or whose event is {@code behind} its order's
   * pending event on the claim path, has the rest of its events added to {@code demoted} unattempted. Fails only
   * when the relay is stopping with POSTs that failed: nothing is passed on, the lease is given back. Deadlines end
   * inside the lease taken at {@code leasedAt} (the run for the log alone takes none and POSTs nothing).
   */
  private Future<Void> handOut(List<Row> rows, boolean lines, List<OutboxEventType> types, List<Demoted> demoted,
                               long leasedAt) {
    int seq = at(rows, "seq");
    int behind = at(rows, "behind");
    int type = at(rows, "type");
    rows.sort(Comparator.comparingLong(r -> r.getLong(seq)));
    boolean simple = true;
    for (Row row : rows) {
      if (row.getBoolean(behind) || config.sinkUrls().containsKey(row.getString(type))) {
        simple = false;
        break;
      }
    }
    if (simple) {
      logLines(rows, lines, types);
      return Future.succeededFuture();
    }
    int orderNo = at(rows, "order_no");
    Map<String, List<Row>> byOrder = new LinkedHashMap<>();
    for (Row row : rows) {
      byOrder.computeIfAbsent(row.getString(orderNo), k -> new ArrayList<>()).add(row);
    }
    return round(new ArrayList<>(byOrder.values()), 0, lines, types, demoted, leasedAt);
  }

  /** Round {@code k} of {@link #handOut}: each order's {@code k}-th event; then the next round. */
  private Future<Void> round(List<List<Row>> orders, int k, boolean lines, List<OutboxEventType> types,
                             List<Demoted> demoted, long leasedAt) {
    List<Row> sent = new ArrayList<>();
    List<Future<Void>> posts = new ArrayList<>();
    List<List<Row>> next = new ArrayList<>();
    List<Row> any = orders.isEmpty() ? List.of() : orders.get(0);
    int behind = at(any, "behind");
    int type = at(any, "type");
    int orderNo = at(any, "order_no");
    for (List<Row> chain : orders) {
      if (k >= chain.size()) {
        continue;
      }
      Row row = chain.get(k);
      if (row.getBoolean(behind)) {
        chain.subList(k, chain.size()).forEach(r -> demoted.add(demotion(r, null)));
        continue;
      }
      next.add(chain);
      String url = config.sinkUrls().get(row.getString(type));
      if (url == null) {
        logLines(new ArrayList<>(List.of(row)), lines, types);
        continue;
      }
      OutboxEvent event = OutboxEvent.of(row);
      int batchMax = config.batchMax(event.type().name());
      long deadline = deadlineMs(leasedAt);
      sent.add(row);
      posts.add(deadline < MIN_DELIVERY_MS
          ? Future.failedFuture(new IllegalStateException("not delivered: the cursor's lease is nearly over"))
          : batchMax > 1 ? batches.deliver(url, batchMax, event, deadline)
          : post(url, event.id().toString(), event.envelope(), deadline));
    }
    if (posts.isEmpty()) {
      return next.isEmpty() ? Future.succeededFuture() : round(next, k + 1, lines, types, demoted, leasedAt);
    }
    return Future.join(posts).transform(all -> {
      List<List<Row>> going = new ArrayList<>(next);
      for (int i = 0; i < sent.size(); i++) {
        Row row = sent.get(i);
        Future<Void> post = posts.get(i);
        if (post.succeeded()) {
          types.add(OutboxEventType.valueOf(row.getString(type)));
          continue;
        }
        if (stopped) {
          return Future.failedFuture(post.cause());
        }
        demoted.add(demotion(row, errorText(post.cause())));
        String failed = row.getString(orderNo);
        going.removeIf(chain -> {
          if (!chain.get(k).getString(orderNo).equals(failed)) {
            return false;
          }
          chain.subList(k + 1, chain.size()).forEach(r -> demoted.add(demotion(r, null)));
          return true;
        });
      }
      return going.isEmpty() ? Future.succeededFuture() : round(going, k + 1, lines, types, demoted, leasedAt);
    });
  }

  private static Demoted demotion(Row row, String error) {
    return new Demoted(row.getUUID("id"), OutboxEventType.valueOf(row.getString("type")), row.getString("order_no"),
        error);
  }

  /** A failed attempt's error as stored in last_error (GET /admin/outbox) and logged: never a URL's credentials. */
  private static String errorText(Throwable cause) {
    String error = Secrets.redactUrls(String.valueOf(cause.getMessage() == null ? cause.toString() : cause.getMessage()));
    return error.length() > ERROR_MAX ? error.substring(0, ERROR_MAX) : error;
  }

  /**
   * Whether this cycle reads the cursor: always in a service that writes STREAM events ({@link
   * OutboxConfig#streams}); in one that does not (a sink type has a URL), only for those another instance or an
   * earlier configuration wrote, at most every {@code idleClaimMs} while the last read found none, so the
   * webhook path's busy cycles do not each pay a transaction for it.
   */
  private boolean streamDue() {
    long now = System.currentTimeMillis();
    if (config.streams() || streamFound || now - lastStreamMs >= idleClaimMs) {
      lastStreamMs = now;
      return true;
    }
    return false;
  }

  /** Writes a cursor batch's lines in seq order (each order's events in its order), counting each event's type. */
  private static void logLines(List<Row> batch, boolean lines, List<OutboxEventType> types) {
    int seq = at(batch, "seq");
    int type = at(batch, "type");
    batch.sort(Comparator.comparingLong(r -> r.getLong(seq)));
    for (Row row : batch) {
      if (lines && SINK_LOG.isDebugEnabled()) {
        OutboxEvent e = OutboxEvent.of(row);
        SINK_LOG.debug("{} {} order {}: {}", e.type(), e.id(), e.orderNo(), e.payloadJson());
      }
      types.add(OutboxEventType.valueOf(row.getString(type)));
    }
  }

  /**
   * Where {@code column} is in {@code rows} (-1 when they are none): looked up once per batch, as every row of a list
   * here comes from one statement. {@code Row.getLong(String)} scans the statement's column names on each call, and
   * the cursor's batches read four to six columns per event, the sort's key on each comparison: 5 % of the service's
   * samples with the webhook sink before (issue 13).
   */
  private static int at(List<Row> rows, String column) {
    return rows.isEmpty() ? -1 : rows.get(0).getColumnIndex(column);
  }

  /**
   * How many of the cursor's rows (in {@code (tx, seq)} order) may be delivered together: the longest run from
   * the first whose end is at or past every position its rows wait for ({@code wait_tx, wait_seq}: an earlier
   * event of the order that comes later by xid). A run shorter than the rows is cut where the next row waits
   * for something beyond it; 0 when the first row does.
   */
  static int deliverable(List<Row> rows) {
    long needTx = Long.MIN_VALUE;
    long needSeq = Long.MIN_VALUE;
    int n = 0;
    int waitTxAt = at(rows, "wait_tx");
    int waitSeqAt = at(rows, "wait_seq");
    int txAt = at(rows, "tx");
    int seqAt = at(rows, "seq");
    for (int i = 0; i < rows.size(); i++) {
      Row row = rows.get(i);
      Long waitTx = row.getLong(waitTxAt);
      if (waitTx != null) {
        long waitSeq = row.getLong(waitSeqAt);
        if (waitTx > needTx || (waitTx == needTx && waitSeq > needSeq)) {
          needTx = waitTx;
          needSeq = waitSeq;
        }
      }
      long tx = row.getLong(txAt);
      long seq = row.getLong(seqAt);
      if (tx > needTx || (tx == needTx && seq >= needSeq)) {
        n = i + 1;
      }
    }
    return n;
  }

  /**
   * One relay statement in its own transaction under {@link OutboxSql#CLAIM_PLAN}: a custom plan each
   * time, never the generic one cached while the outbox was nearly empty (it joined the marks against a
   * whole index scan; issue 13).
   */
  private Future<io.vertx.sqlclient.RowSet<Row>> planned(String sql, io.vertx.sqlclient.Tuple params) {
    return planned(sql, params, rows -> rows);
  }

  /** {@link #planned(String, io.vertx.sqlclient.Tuple)}, with {@code beforeCommit} applied to the rows inside the transaction. */
  private <T> Future<T> planned(String sql, io.vertx.sqlclient.Tuple params,
                                Function<io.vertx.sqlclient.RowSet<Row>, T> beforeCommit) {
    return pool.withTransaction(conn -> conn.query(OutboxSql.CLAIM_PLAN).execute()
        .compose(x -> conn.preparedQuery(sql).execute(params)).map(beforeCommit));
  }

  /**
   * Every {@link #FLOOR_REFRESH_MS}: takes the floor ({@link OutboxSql#FLOOR}; it only ever rises), and this
   * cycle's walks start from it.
   */
  private Future<Void> advanceFloor() {
    long now = System.currentTimeMillis();
    if (now - floorTakenAt < FLOOR_REFRESH_MS) {
      return Future.succeededFuture();
    }
    floorTakenAt = now;
    return planned(OutboxSql.FLOOR, Params.of(floor, FLOOR_SCAN)).map(rows -> {
      Row row = rows.iterator().next();
      floor = Math.max(floor, row.getLong("lo"));
      claimFrontier = floor;
      logFrontier = floor;
      long moved = row.getLong("moved");
      if (moved > 0) {
        log.debug("outbox relay {}: {} fresh event(s) wait behind a retry of their order (lane RETRY)", instanceId,
            moved);
      }
      return null;
    });
  }

  /**
   * The log sink: each lane's transaction marks a batch of log-sunk events delivered and writes their
   * lines before it commits (at least once, no lease). One lane while the batches come back short;
   * {@code outbox.concurrency} lanes at once while they come back full, so a backlog is worked off
   * with more than one connection's share of the database. Answers whether a batch was full.
   */
  private Future<Boolean> deliverToLog() {
    long now = System.currentTimeMillis();
    if (streamFound && !lastLogFound && now - lastLogMs < idleClaimMs) {
      // The log events come as STREAM (OutboxConfig.streams, V18): this statement only finds those written
      // without the stream setting, and while it finds none it runs at most every idleClaimMs.
      return Future.succeededFuture(false);
    }
    lastLogMs = now;
    int lanes = logLanes;
    List<Future<LogBatch>> runs = new ArrayList<>(lanes);
    for (int i = 0; i < lanes; i++) {
      runs.add(deliverToLogLane());
    }
    return Future.all(runs).map(all -> {
      boolean full = false;
      boolean found = false;
      for (Future<LogBatch> run : runs) {
        LogBatch batch = run.result();
        full |= batch.full();
        found |= !batch.types().isEmpty();
        batch.types().forEach(type -> metrics.delivery(type, "delivered"));
      }
      logLanes = full ? config.concurrency() : 1;
      lastLogFound = found;
      return full;
    });
  }

  /** What one log-sink statement delivered: whether its batch was full, and each event's type (counted after commit). */
  private record LogBatch(boolean full, List<OutboxEventType> types) {}

  /** One log-sink statement, its fresh walk from the log statement's frontier. */
  private Future<LogBatch> deliverToLogLane() {
    int orders = config.batchSize() * LOG_BATCH_FACTOR;
    boolean lines = SINK_LOG.isDebugEnabled();
    // The lines are written before the transaction commits: a crash in between logs them again.
    return planned(lines ? OutboxSql.DELIVER_TO_LOG : OutboxSql.DELIVER_TO_LOG_QUIET,
        Params.of(orders, MAX_CHAIN, logTypes, instanceId, logFrontier), rows -> {
          logFrontier = advanced(logFrontier, rows, shortOf(rows, orders));
          Set<String> orderNos = new HashSet<>();
          List<OutboxEventType> types = new ArrayList<>(rows.size());
          for (Row row : rows) {
            if (lines) {
              OutboxEvent e = OutboxEvent.of(row);
              SINK_LOG.debug("{} {} order {}: {}", e.type(), e.id(), e.orderNo(), e.payloadJson());
            }
            orderNos.add(row.getString("order_no"));
            types.add(OutboxEventType.valueOf(row.getString("type")));
          }
          return new LogBatch(orderNos.size() >= orders, types);
        });
  }

  /**
   * The claim for the deliveries that are not the log sink's statement (webhooks, routes) ({@link OutboxSql#CLAIM}).
   * {@code logBehind}: the log-sink statement's last batch was full, so the claim may take log-sink heads too
   * and help work off the backlog; otherwise it leaves them to that statement.
   */
  private Future<Boolean> claimForSinks(boolean logBehind) {
    int room = config.maxInFlight() - inFlight;
    if (room <= 0) {
      return Future.succeededFuture(false);
    }
    long now = System.currentTimeMillis();
    if (!webhooks && !logBehind && !lastClaimFull && now - lastClaimMs < idleClaimMs) {
      wakeIn(idleClaimMs - (now - lastClaimMs));
      return Future.succeededFuture(false);
    }
    lastClaimMs = now;
    claims++;
    UUID token = UUID.randomUUID();
    long[] claimedAt = new long[1];
    int orders = Math.max(1, Math.min(config.batchSize(), room / 2));
    return Future.succeededFuture()
        .compose(v -> {
          // Taken before the claim's now(): the lease ends no sooner than claimedAt + leaseMs.
          claimedAt[0] = System.nanoTime();
          return planned(OutboxSql.CLAIM,
              Params.of(orders, config.leaseMs(), instanceId, token, config.maxAttempts(), MAX_CHAIN, claimFrontier,
                  logBehind, logTypes));
        })
        .map(rows -> {
          claimFrontier = advanced(claimFrontier, rows, shortOf(rows, orders));
          Map<String, List<OutboxEvent>> chains = new LinkedHashMap<>();
          List<OutboxEvent> all = new ArrayList<>();
          rows.forEach(row -> {
            OutboxEvent e = OutboxEvent.of(row);
            all.add(e);
            if (row.getInteger("counted") == 0) {
              uncounted.add(e.id());
            }
          });
          all.sort(Comparator.comparingLong(OutboxEvent::seq));
          for (OutboxEvent e : all) {
            chains.computeIfAbsent(e.orderNo(), k -> new ArrayList<>()).add(e);
          }
          chains.values().forEach(chain -> startChain(chain, 0, token, claimedAt[0]));
          lastClaimFull = chains.size() >= orders;
          return lastClaimFull;
        });
  }

  /**
   * A walk's frontier past the fresh heads its statement took ({@link OutboxSql#CLAIM}, {@link OutboxSql#DELIVER_TO_LOG}
   * answer each row's xid and the statement's xmin): the fresh walk goes in xid order, so what lies before
   * the last head was looked at, by that walk. Never past the xmin: a transaction still running then may
   * commit events with a lower xid. A walk that came back {@code short} looked at everything it could see:
   * up to {@link #seenXmin}.
   */
  private long advanced(long frontier, io.vertx.sqlclient.RowSet<Row> rows, boolean isShort) {
    long last = -1;
    long xmin = Long.MAX_VALUE;
    for (Row row : rows) {
      xmin = Math.min(xmin, row.getLong("xmin"));
      if (row.getBoolean("fresh_head")) {
        last = Math.max(last, row.getLong("tx"));
      }
    }
    if (xmin != Long.MAX_VALUE) {
      seenXmin = Math.max(seenXmin, xmin);
    }
    if (isShort) {
      return Math.max(frontier, seenXmin);
    }
    return last >= 0 ? Math.max(frontier, Math.min(last, xmin)) : frontier;
  }

  /** Whether a walk's rows hold fewer orders than its LIMIT of {@code orders} heads. */
  private static boolean shortOf(io.vertx.sqlclient.RowSet<Row> rows, int orders) {
    Set<String> seen = new HashSet<>();
    for (Row row : rows) {
      if (seen.add(row.getString("order_no")) && seen.size() >= orders) {
        return false;
      }
    }
    return true;
  }

  /** What is left of the lease, less a safety margin: a delivery must end inside it. */
  private long deadlineMs(long claimedAt) {
    long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - claimedAt);
    return Math.min(config.httpTimeoutMs(), config.leaseMs() - elapsed - LEASE_MARGIN_MS);
  }

  /**
   * Delivers one order's claimed events one after the other, in seq order: the next starts when the
   * previous one is marked delivered. When one fails, the rest of the chain is given back unattempted;
   * it waits behind the failed one as before.
   */
  private void startChain(List<OutboxEvent> chain, int i, UUID token, long claimedAt) {
    OutboxEvent event = chain.get(i);
    if (i > 0 && deadlineMs(claimedAt) < MIN_DELIVERY_MS) {
      release(chain.subList(i, chain.size()), token);
      nudge();
      return;
    }
    inFlight++;
    deliver(event, claimedAt)
        .transform(ar -> abandoned ? Future.succeededFuture(-1L)
            : ar.succeeded() ? markDelivered(event, token) : markFailed(event, token, ar.cause()))
        .onComplete(ar -> {
          inFlight--;
          boolean delivered = ar.succeeded() && ar.result() == 0 && deliveredMarked(event);
          if (delivered && i + 1 < chain.size() && !stopped) {
            startChain(chain, i + 1, token, claimedAt);
            return;
          }
          if (i + 1 < chain.size()) {
            release(chain.subList(i + 1, chain.size()), token);
          }
          if (ar.failed()) {
            log.warn("outbox relay {}: marking {} failed: {}", instanceId, event.id(), ar.cause().toString());
          } else if (ar.result() == 0) {
            nudge();
          } else if (ar.result() > 0) {
            wakeIn(ar.result());
          }
          if (drained != null && inFlight == 0) {
            drained.tryComplete();
          }
        });
  }

  private final Set<UUID> justDelivered = new HashSet<>();
  /** Claimed events behind their order's head: their attempt is counted when their delivery is marked. */
  private final Set<UUID> uncounted = new HashSet<>();

  /** Whether {@code event} was the one marked DELIVERED (a 0 answer also means "dead, its order is free"). */
  private boolean deliveredMarked(OutboxEvent event) {
    return justDelivered.remove(event.id());
  }

  private void release(List<OutboxEvent> rest, UUID token) {
    rest.forEach(e -> uncounted.remove(e.id()));
    if (stopped) {
      return;
    }
    planned(OutboxSql.RELEASE, Params.of(rest.stream().map(OutboxEvent::id).toArray(UUID[]::new), token))
        .onFailure(err -> log.warn("outbox relay {}: releasing {} events failed (their lease brings them back): {}",
            instanceId, rest.size(), err.toString()));
  }

  private Future<Void> deliver(OutboxEvent event, long claimedAt) {
    Function<OutboxEvent, Future<Void>> route = routes.get(event.type());
    Future<Void> routed = route == null ? null : route.apply(event);
    if (routed != null) {
      return routed;
    }
    String url;
    JsonObject refund = null;
    if (event.type() == OutboxEventType.REFUND_REQUESTED) {
      refund = event.payload();
      ChannelConfig channel = channels.get(refund.getString("channel"));
      url = channel == null ? null : channel.refundUrl();
      if (url == null) {
        return Future.failedFuture(new IllegalStateException(
            "channel " + refund.getString("channel") + " has no refundUrl"));
      }
    } else {
      url = config.sinkUrls().get(event.type().name());
    }
    if (url == null) {
      // The log sink (no URL configured): one DEBUG line per event on its own logger, so production logs
      // are not an echo of every payload; the line is built only when that logger is on.
      if (SINK_LOG.isDebugEnabled()) {
        SINK_LOG.debug("{} {} order {}: {}", event.type(), event.id(), event.orderNo(), event.payloadJson());
      }
      return Future.succeededFuture();
    }
    long deadline = deadlineMs(claimedAt);
    if (deadline < MIN_DELIVERY_MS) {
      return Future.failedFuture(new IllegalStateException("not delivered: the claim's lease is nearly over"));
    }
    if (refund != null) {
      return post(url, event.id().toString(), event.refundRequest(refund).toBuffer(), deadline);
    }
    int batchMax = config.batchMax(event.type().name());
    if (batchMax > 1) {
      return batches.deliver(url, batchMax, event, deadline);
    }
    return post(url, event.id().toString(), event.envelope(), deadline);
  }

  /**
   * One POST with a hard deadline from connect to the answer's last byte: when it passes, the request
   * is reset (its connection closed) and the attempt fails. 2xx with the whole answer read = delivered.
   */
  private Future<Void> post(String url, String idempotencyKey, Buffer body, long deadlineMs) {
    Promise<Void> done = Promise.promise();
    long timer = vertx.setTimer(deadlineMs, t -> done.tryFail(new TimeoutException(
        "no complete answer within " + deadlineMs + " ms from " + url)));
    client.request(new RequestOptions().setMethod(HttpMethod.POST).setAbsoluteURI(url)
            .putHeader("Content-Type", "application/json").putHeader("User-Agent", "ordergate-outbox")
            .putHeader("Idempotency-Key", idempotencyKey))
        .onFailure(done::tryFail)
        .onSuccess(req -> {
          done.future().onFailure(err -> req.reset(0, err));
          req.send(body)
              .compose(resp -> resp.body().map(b -> resp.statusCode()))
              .onComplete(ar -> {
                if (ar.failed()) {
                  done.tryFail(ar.cause());
                } else if (ar.result() / 100 == 2) {
                  done.tryComplete();
                } else {
                  done.tryFail(new IllegalStateException("HTTP " + ar.result() + " from " + url));
                }
              });
        });
    return done.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  /**
   * Marks a delivery; answers 0: the order's next event may be due now. Marks are coalesced: while
   * one marking statement runs, the deliveries that finish queue up and are marked together by
   * the next one, so a burst costs one statement per batch instead of one per event.
   */
  private Future<Long> markDelivered(OutboxEvent event, UUID token) {
    Promise<Long> marked = Promise.promise();
    deliveredQueue.add(new Delivered(event, token, marked));
    flushDelivered();
    return marked.future();
  }

  private record Delivered(OutboxEvent event, UUID token, Promise<Long> marked) {}

  private void flushDelivered() {
    if (marking || deliveredQueue.isEmpty()) {
      return;
    }
    marking = true;
    List<Delivered> batch = new ArrayList<>(deliveredQueue);
    deliveredQueue.clear();
    planned(OutboxSql.MARK_DELIVERED, Params.of(
            batch.stream().map(d -> d.event().id()).toArray(UUID[]::new),
            batch.stream().map(Delivered::token).toArray(UUID[]::new), instanceId,
            batch.stream().map(d -> uncounted.remove(d.event().id()) ? 1 : 0).toArray(Integer[]::new)))
        .onComplete(ar -> {
          marking = false;
          if (ar.failed()) {
            batch.forEach(d -> d.marked().fail(ar.cause()));
          } else {
            Set<UUID> done = new HashSet<>();
            ar.result().forEach(row -> done.add(row.getUUID("id")));
            for (Delivered d : batch) {
              OutboxEvent event = d.event();
              if (done.contains(event.id())) {
                justDelivered.add(event.id());
                metrics.delivery(event.type(), "delivered");
                log.debug("outbox {} {} order {} delivered (attempt {})", event.type(), event.id(), event.orderNo(),
                    event.attempts());
                d.marked().complete(0L);
              } else {
                log.warn("outbox {} {} delivered, but no longer under this claim (lease ran out, or the event is gone)",
                    event.type(), event.id());
                d.marked().complete(-1L);
              }
            }
          }
          flushDelivered();
        });
  }

  /** Marks a failed attempt; answers how soon the event is due again (0: now, a dead event unblocks its order). */
  private Future<Long> markFailed(OutboxEvent event, UUID token, Throwable cause) {
    String reason = errorText(cause);
    int notCounted = uncounted.remove(event.id()) ? 1 : 0;
    return planned(OutboxSql.MARK_FAILED, Params.of(event.id(), token, reason,
            config.maxAttempts(), (double) config.baseDelayMs(), (double) config.maxDelayMs(), instanceId, notCounted))
        .map(rows -> {
          if (rows.size() == 0) {
            return -1L;
          }
          Row r = rows.iterator().next();
          if ("DEAD".equals(r.getString("status"))) {
            metrics.delivery(event.type(), "dead");
            log.error("outbox {} {} order {} is DEAD after {} attempts: {}", event.type(), event.id(),
                event.orderNo(), r.getInteger("attempts"), reason);
            return 0L;
          }
          metrics.delivery(event.type(), "retry");
          long retryIn = r.getLong("retry_in_ms");
          log.warn("outbox {} {} order {} attempt {} failed ({}); retry in {} ms", event.type(), event.id(),
              event.orderNo(), r.getInteger("attempts"), reason, retryIn);
          return Math.max(1, retryIn);
        });
  }

  /**
   * The retention: deletes delivered events older than {@code retentionHours} in batches of
   * {@value #PRUNE_BATCH} until a batch comes back short (those marked DELIVERED, below the seq of the first
   * event written within the retention, taken once per prune ({@link OutboxSql#PRUNE_DELIVERED_BOUND}), so the
   * short batch does not read on through every event kept; then the STREAM events behind the cursor's marks,
   * then those marks: V18), then waits {@code pruneIntervalMs}.
   */
  private void prune() {
    if (stopped) {
      return;
    }
    double seconds = config.retentionHours() * 3600;
    pool.preparedQuery(OutboxSql.PRUNE_DELIVERED_BOUND).execute(Params.of(seconds))
        .compose(rows -> pruneBatches(OutboxSql.PRUNE_DELIVERED,
            Params.of(seconds, PRUNE_BATCH, rows.iterator().next().getLong("upto")), 0))
        .compose(delivered -> pruneBatches(OutboxSql.PRUNE_STREAMED, Params.of(seconds, PRUNE_BATCH), delivered))
        .compose(total -> pool.preparedQuery(OutboxSql.PRUNE_MARKS).execute(Params.of(seconds)).map(total))
        .onComplete(ar -> {
          if (stopped) {
            return;
          }
          long total = ar.succeeded() ? ar.result() : 0;
          if (ar.failed()) {
            log.warn("outbox relay {}: pruning delivered events failed: {}", instanceId, ar.cause().toString());
          } else if (total > 0) {
            metrics.pruned(total);
            log.debug("outbox relay {}: pruned {} delivered events older than {} h", instanceId, total,
                config.retentionHours());
          }
          // Deleted rows give their space back only once vacuumed (until then every insert extends the
          // table): once VACUUM_AFTER_ROWS were deleted since the last vacuum, by one prune or by several
          // short ones, vacuum now rather than at autovacuum's next turn, so the table's size stays flat.
          deletedSinceVacuum += total;
          boolean vacuumNow = deletedSinceVacuum >= VACUUM_AFTER_ROWS;
          if (vacuumNow) {
            deletedSinceVacuum = 0;
          }
          Future<?> vacuum = vacuumNow
              ? pool.query(OutboxSql.VACUUM).execute().onFailure(err -> log.warn("outbox relay {}: vacuum failed: {}",
                  instanceId, err.toString()))
              : Future.succeededFuture();
          vacuum.onComplete(v -> {
            if (!stopped) {
              pruneTimer = vertx.setTimer(config.pruneIntervalMs(), t -> prune());
            }
          });
        });
  }

  /**
   * Runs one prune statement ({@code params}: the retention in seconds and the batch size first) batch after
   * batch until one comes back short; answers {@code soFar} plus the rows deleted.
   */
  private Future<Long> pruneBatches(String sql, Tuple params, long soFar) {
    if (stopped) {
      return Future.succeededFuture(soFar);
    }
    return pool.preparedQuery(sql).execute(params).compose(rows -> {
      long total = soFar + rows.rowCount();
      return rows.rowCount() == PRUNE_BATCH ? pruneBatches(sql, params, total) : Future.succeededFuture(total);
    });
  }

  /**
   * Every few seconds: the events whose last attempt was lost with its lease go DEAD, and the gauges.
   */
  private Future<Void> refreshGauges() {
    long now = System.currentTimeMillis();
    if (now - gaugesRefreshedAt < GAUGE_REFRESH_MS) {
      return Future.succeededFuture();
    }
    gaugesRefreshedAt = now;
    return pool.preparedQuery(OutboxSql.EXHAUST).execute(Params.of(config.maxAttempts(), instanceId, floor))
        .map(rows -> {
          long n = rows.iterator().next().getLong("n");
          if (n > 0) {
            log.error("outbox relay {}: {} event(s) DEAD: their last attempt was never answered within its lease",
                instanceId, n);
            metrics.exhausted(n);
          }
          return (Void) null;
        })
        .compose(v -> metrics.refresh(pool, floor))
        .recover(err -> {
          log.warn("outbox relay {}: gauges not refreshed: {}", instanceId, err.toString());
          return Future.succeededFuture();
        });
  }
}
