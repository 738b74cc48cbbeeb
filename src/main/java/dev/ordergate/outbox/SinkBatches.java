package dev.ordergate.outbox;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Batched webhook delivery, for a sink that takes several events in one POST
 * ({@code outbox.sinks.<TYPE>.batchMax} above 1): the events handed to one URL in one turn of the
 * relay's event loop (a claim starts every order's head at once; marks are coalesced, so the events
 * behind them come due together too) leave as one {@code {"events": [envelope, ...]}} POST of at most
 * {@code batchMax} events. The answer is the answer of each of them: a 2xx delivers all, anything else
 * fails all, and each is retried on its own schedule. Order per order number is the relay's as before
 * (an order's next event is handed over only once the previous one is marked), and the receiver
 * de-duplicates by each envelope's {@code eventId}, as it does with single deliveries.
 * Runs on the relay's context only.
 */
final class SinkBatches {

  /** One POST: the URL, the body, the Idempotency-Key and the deadline in ms. */
  interface Poster {
    Future<Void> post(String url, String idempotencyKey, Buffer body, long deadlineMs);
  }

  private record Waiting(OutboxEvent event, long deadlineMs, Promise<Void> done) {}

  private final Context context;
  private final Poster poster;
  private final Map<String, List<Waiting>> waiting = new HashMap<>();

  SinkBatches(Context context, Poster poster) {
    this.context = context;
    this.poster = poster;
  }

  /** Hands {@code event} to the batch for {@code url}; completes when that batch's POST is answered. */
  Future<Void> deliver(String url, int batchMax, OutboxEvent event, long deadlineMs) {
    Promise<Void> done = Promise.promise();
    List<Waiting> list = waiting.get(url);
    if (list == null) {
      list = new ArrayList<>();
      waiting.put(url, list);
      context.runOnContext(v -> flush(url, batchMax));
    }
    list.add(new Waiting(event, deadlineMs, done));
    if (list.size() >= batchMax) {
      flush(url, batchMax);
    }
    return done.future();
  }

  private void flush(String url, int batchMax) {
    List<Waiting> list = waiting.remove(url);
    if (list == null || list.isEmpty()) {
      return;
    }
    for (int from = 0; from < list.size(); from += batchMax) {
      send(url, list.subList(from, Math.min(list.size(), from + batchMax)));
    }
  }

  private void send(String url, List<Waiting> batch) {
    // {"events": [envelope, ...]}, written straight into the body (each payload as the database wrote it).
    Buffer body = Buffer.buffer(256 * batch.size());
    body.appendString("{\"events\":[");
    long deadline = Long.MAX_VALUE;
    for (int i = 0; i < batch.size(); i++) {
      Waiting w = batch.get(i);
      if (i > 0) {
        body.appendString(",");
      }
      w.event().appendEnvelope(body);
      deadline = Math.min(deadline, w.deadlineMs());
    }
    body.appendString("]}");
    // The key names the batch's first event and its size: a retry of the same events in the same
    // grouping carries the same key; the events' own ids are what the receiver de-duplicates by.
    String key = batch.get(0).event().id() + "+" + batch.size();
    poster.post(url, key, body, deadline)
        .onComplete(ar -> batch.forEach(w -> {
          if (ar.succeeded()) {
            w.done().tryComplete();
          } else {
            w.done().tryFail(ar.cause());
          }
        }));
  }
}
