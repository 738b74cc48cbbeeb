package dev.ordergate.channel;

/** An HTTP answer in a gateway's dialect; {@code body} null means no body. */
public record Answer(int status, String contentType, String body) {

  public static Answer json(int status, String body) {
    return new Answer(status, "application/json", body);
  }

  public static Answer text(int status, String body) {
    return new Answer(status, "text/plain; charset=utf-8", body);
  }

  /** ordergate's own error body {@code {"error","message"}}. */
  public static Answer error(int status, String code, String message) {
    return json(status, new io.vertx.core.json.JsonObject().put("error", code).put("message", message).encode());
  }

  public static Answer empty(int status) {
    return new Answer(status, null, null);
  }
}
