package dev.ordergate.channel;

import java.util.function.Function;

/** A request as received: the raw body bytes and a case-insensitive header lookup (null when absent). */
public record Inbound(byte[] body, Function<String, String> headers) {

  public String header(String name) {
    return headers.apply(name);
  }
}
