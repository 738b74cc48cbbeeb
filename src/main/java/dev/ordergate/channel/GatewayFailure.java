package dev.ordergate.channel;

/**
 * An outbound call that did not give a usable answer. {@code answered}: the gateway answered with an
 * error of its own ({@code code} is the gateway's, e.g. PARAM_ERROR, ACQ.SYSTEM_ERROR,
 * parameter_invalid_integer); otherwise it was unreachable, timed out, answered 5xx or an answer whose
 * signature does not verify ({@code code} UNREACHABLE, TIMEOUT, HTTP_5xx, BAD_RESPONSE_SIGNATURE,
 * MALFORMED_RESPONSE).
 */
public final class GatewayFailure extends RuntimeException {

  private final String channel;
  private final String code;
  private final boolean answered;

  public GatewayFailure(String channel, String code, String message, boolean answered) {
    super(channel + ": " + code + (message == null || message.isEmpty() ? "" : " (" + message + ")"), null, false, false);
    this.channel = channel;
    this.code = code;
    this.answered = answered;
  }

  public static GatewayFailure answered(String channel, String code, String message) {
    return new GatewayFailure(channel, code, message, true);
  }

  public static GatewayFailure unreachable(String channel, String code, String message) {
    return new GatewayFailure(channel, code, message, false);
  }

  public String channel() {
    return channel;
  }

  public String code() {
    return code;
  }

  public boolean answered() {
    return answered;
  }
}
