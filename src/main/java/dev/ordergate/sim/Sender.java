package dev.ordergate.sim;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.WebClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Delivers a notification as its gateway does: POST to the notify URL, and redeliver the same bytes
 * on the gateway's retry schedule (each delay times {@code retryScale}, so a test or a demo does not
 * wait hours) until the answer is the gateway's success answer or the schedule is used up.
 */
public final class Sender {

  /** One delivery attempt: HTTP status (0: no answer), body, and ordergate's outcome header if any. */
  public record Attempt(int status, String body, String outcome) {}

  /** All attempts of one notification; {@code accepted} when the last one was the success answer. */
  public record Result(List<Attempt> attempts, boolean accepted) {}

  private final Vertx vertx;
  private final WebClient client;
  private final double retryScale;
  private final int maxAttempts;

  public Sender(Vertx vertx, WebClient client, double retryScale, int maxAttempts) {
    this.vertx = vertx;
    this.client = client;
    this.retryScale = retryScale;
    this.maxAttempts = maxAttempts;
  }

  public Future<Result> deliver(String url, Delivery d, Gateway gateway) {
    Promise<Result> done = Promise.promise();
    attempt(url, d, gateway, new ArrayList<>(), done);
    return done.future();
  }

  private void attempt(String url, Delivery d, Gateway gateway, List<Attempt> attempts, Promise<Result> done) {
    var req = client.postAbs(url).timeout(10_000);
    d.headers().forEach(req::putHeader);
    req.sendBuffer(Buffer.buffer(d.body())).onComplete(ar -> {
      Attempt a = ar.succeeded()
          ? new Attempt(ar.result().statusCode(), ar.result().bodyAsString() == null ? "" : ar.result().bodyAsString(),
              ar.result().getHeader("X-Ordergate-Outcome"))
          : new Attempt(0, ar.cause().toString(), null);
      attempts.add(a);
      boolean ok = a.status() > 0 && gateway.accepted(a.status(), a.body());
      List<Duration> schedule = gateway.retrySchedule();
      int retry = attempts.size() - 1;
      if (ok || attempts.size() >= maxAttempts || retry >= schedule.size()) {
        done.complete(new Result(List.copyOf(attempts), ok));
        return;
      }
      long delay = Math.max(1, (long) (schedule.get(retry).toMillis() * retryScale));
      vertx.setTimer(delay, id -> attempt(url, d, gateway, attempts, done));
    });
  }
}
