package dev.ordergate.channel;

/**
 * A request refused before it reached the gate; nothing changed. {@code code} is one of
 * BAD_SIGNATURE (forged, tampered, wrong key, stale or future timestamp), WRONG_MERCHANT (a
 * notification for another mchid / app_id, treated like a forgery), UNDECRYPTABLE and MALFORMED.
 */
public final class ChannelRejection extends RuntimeException {

  private final int status;
  private final String code;
  /** MALFORMED because the body itself could not be read (not JSON, not a form), not one field. */
  private final boolean unreadable;

  private ChannelRejection(int status, String code, String message, boolean unreadable) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.unreadable = unreadable;
  }

  private ChannelRejection(int status, String code, String message) {
    this(status, code, message, false);
  }

  public static ChannelRejection badSignature(String message) {
    return new ChannelRejection(401, "BAD_SIGNATURE", message);
  }

  public static ChannelRejection wrongMerchant(String message) {
    return new ChannelRejection(401, "WRONG_MERCHANT", message);
  }

  public static ChannelRejection undecryptable(String message) {
    return new ChannelRejection(400, "UNDECRYPTABLE", message);
  }

  public static ChannelRejection malformed(String message) {
    return new ChannelRejection(400, "MALFORMED", message);
  }

  /** The body as a whole cannot be read (invalid JSON, not an object, a broken form). */
  public static ChannelRejection unreadable(String message) {
    return new ChannelRejection(400, "MALFORMED", message, true);
  }

  public boolean unreadable() {
    return unreadable;
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
