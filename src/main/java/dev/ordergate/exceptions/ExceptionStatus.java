package dev.ordergate.exceptions;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where an exception order stands. OPEN exists only inside the transaction that opens it: the same
 * transaction routes it to {@link #REFUND_PENDING} or {@link #MANUAL_REVIEW}.
 * <pre>
 *   OPEN -> REFUND_PENDING -> REFUNDED
 *                          -> REFUND_PROCESSING -> REFUNDED | REFUND_FAILED   (a gateway settles it later)
 *                          -> REFUND_FAILED -> (retry) REFUND_PENDING | RESOLVED | (the gateway's proof) REFUNDED
 *   OPEN -> MANUAL_REVIEW  -> RESOLVED
 * </pre>
 */
public enum ExceptionStatus {
  OPEN,
  MANUAL_REVIEW,
  REFUND_PENDING,
  /** The gateway accepted the refund and settles it later; its notification or a refund query decides. */
  REFUND_PROCESSING,
  REFUNDED,
  REFUND_FAILED,
  RESOLVED;

  /** Not yet closed: the {@code status=OPEN} filter and {@code ordergate_exceptions_open} count these. */
  public static final Set<ExceptionStatus> UNRESOLVED = EnumSet.of(OPEN, MANUAL_REVIEW, REFUND_PENDING,
      REFUND_PROCESSING, REFUND_FAILED);

  /** A person may resolve these; a refund in flight must finish (or die) first. */
  public boolean resolvable() {
    return this == OPEN || this == MANUAL_REVIEW || this == REFUND_FAILED;
  }
}
