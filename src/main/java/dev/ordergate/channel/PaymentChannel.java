package dev.ordergate.channel;

import dev.ordergate.domain.CallbackResult;

/**
 * One payment channel speaking one gateway's wire format. The route hands it the raw request; it
 * verifies over those raw bytes before anything parses them, and turns a verified request into a
 * {@link Notification}. It then writes the answer the gateway expects. The gate never sees past it.
 */
public interface PaymentChannel {

  String name();

  ChannelKind kind();

  /**
   * Verifies and parses one inbound request.
   *
   * @throws ChannelRejection for a forged, stale, tampered, undecryptable or malformed request, or
   *                          one addressed to another merchant: it changes nothing
   */
  Notification receive(Inbound request);

  /** The gate committed (or the notification was recorded as not a payment: {@code result} IGNORED). */
  Answer processed(CallbackResult result);

  /** The request was refused; nothing changed. */
  Answer rejected(ChannelRejection rejection);

  /**
   * Our own failure (database down or busy, callbacks overloaded): the answer that makes this gateway
   * deliver again. {@code status} is 5xx; {@code code} and {@code message} are ordergate's error.
   */
  Answer retry(int status, String code, String message);
}
