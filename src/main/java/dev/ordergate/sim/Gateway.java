package dev.ordergate.sim;

import java.time.Duration;
import java.util.List;

/**
 * One simulated gateway: builds the notifications it would send, knows its success answer and its
 * retry schedule. (Part 2 of the channels work, issue 10, adds its open/query/close/refund APIs and
 * bills here, one method group per API, served by {@link GatewaySim}.)
 */
public interface Gateway {

  /** The kind id, as in {@code payments.channels.<name>.kind}. */
  String kind();

  /** A signed (and for WeChat Pay encrypted) notification of {@code payment}, timestamped {@code nowSeconds}. */
  Delivery notification(Payment payment, long nowSeconds);

  /** True when the answer makes this gateway stop retrying. */
  boolean accepted(int status, String body);

  /** Delays before each redelivery after an answer that is not {@link #accepted}. */
  List<Duration> retrySchedule();
}
