package dev.ordergate.domain;

/**
 * A request we refuse for a reason the client can act on; the HTTP layer answers it as
 * {@code {"error": code, "message": message}} with {@code status}. No stack trace: it is not a bug.
 */
public final class Rejection extends RuntimeException {

  private final int status;
  private final String code;

  public Rejection(int status, String code, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
  }

  public static Rejection badRequest(String message) {
    return new Rejection(400, "VALIDATION_FAILED", message);
  }

  public static Rejection notFound(String what) {
    return new Rejection(404, "NOT_FOUND", what + " not found");
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }
}
