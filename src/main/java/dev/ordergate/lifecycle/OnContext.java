package dev.ordergate.lifecycle;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.function.Supplier;

/**
 * For components whose mutable state lives on one context (the sweeper, the reminders): their public
 * methods may be called from any thread, and hop to that context before touching it.
 */
public final class OnContext {

  private OnContext() {
  }

  /** Runs {@code work} on {@code context} (at once when already on it) and answers its outcome. */
  public static <T> Future<T> run(Context context, Supplier<Future<T>> work) {
    if (Vertx.currentContext() == context) {
      return work.get();
    }
    Promise<T> promise = Promise.promise();
    context.runOnContext(v -> work.get().onComplete(promise));
    return promise.future();
  }
}
