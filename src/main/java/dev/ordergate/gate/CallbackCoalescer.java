package dev.ordergate.gate;

import dev.ordergate.domain.CallbackResult;
import dev.ordergate.domain.PaymentCallback;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Group commit for payment callbacks. Every answered callback must be durable, so one
 * transaction per callback is capped by commit latency; instead, callbacks that arrive while
 * {@code maxInFlight} transactions are already running wait in a queue and go together into the
 * next transaction when one returns (a batch closes at {@code maxBatch}). When idle a callback
 * starts its own transaction at once: there is no timer that adds latency.
 *
 * <p>Each caller is answered after the commit with its own outcome. The batch runs the same
 * {@link PaymentGate} code as a single callback, so the semantics are the same; if a batch fails,
 * the gate retries its callbacks one by one so a poisoned one fails alone.
 */
public final class CallbackCoalescer {

  private record Pending(PaymentCallback callback, Promise<CallbackResult> promise) {}

  private final PaymentGate gate;
  private final int maxBatch;
  private final int maxInFlight;
  private final DistributionSummary batchSizes;
  private final ArrayDeque<Pending> queue = new ArrayDeque<>();
  private int inFlight;

  public CallbackCoalescer(PaymentGate gate, int maxBatch, int maxInFlight, MeterRegistry registry) {
    this.gate = gate;
    this.maxBatch = maxBatch;
    this.maxInFlight = maxInFlight;
    this.batchSizes = DistributionSummary.builder("ordergate.callback.batch.size")
        .description("Callbacks per group-commit transaction")
        .publishPercentiles(0.5, 0.99)
        .register(registry);
  }

  public Future<CallbackResult> submit(PaymentCallback callback) {
    Promise<CallbackResult> promise = Promise.promise();
    List<Pending> batch;
    synchronized (this) {
      queue.add(new Pending(callback, promise));
      batch = takeBatch();
    }
    run(batch);
    return promise.future();
  }

  /** The next batch to start, or null when all slots are busy (or nothing waits). Call locked. */
  private List<Pending> takeBatch() {
    if (inFlight >= maxInFlight || queue.isEmpty()) {
      return null;
    }
    inFlight++;
    List<Pending> batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
    while (!queue.isEmpty() && batch.size() < maxBatch) {
      batch.add(queue.poll());
    }
    return batch;
  }

  private void run(List<Pending> batch) {
    if (batch == null) {
      return;
    }
    batchSizes.record(batch.size());
    List<PaymentCallback> callbacks = batch.stream().map(Pending::callback).toList();
    gate.apply(callbacks).onComplete(ar -> {
      List<Pending> next;
      synchronized (this) {
        inFlight--;
        next = takeBatch();
      }
      if (ar.succeeded()) {
        for (int i = 0; i < batch.size(); i++) {
          batch.get(i).promise().complete(ar.result().get(i));
        }
      } else if (ar.cause() instanceof PaymentGate.PartialBatchFailure partial) {
        for (int i = 0; i < batch.size(); i++) {
          Future<CallbackResult> own = partial.singles().get(i);
          Promise<CallbackResult> promise = batch.get(i).promise();
          own.onComplete(promise);
        }
      } else {
        batch.forEach(p -> p.promise().fail(ar.cause()));
      }
      run(next);
    });
  }

  /** Callbacks waiting for a transaction slot (for tests and metrics). */
  public synchronized int queued() {
    return queue.size();
  }
}
