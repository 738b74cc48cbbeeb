package dev.ordergate.sim;

import java.util.Map;

/** One notification as a gateway sends it: the headers and the raw body bytes. */
public record Delivery(Map<String, String> headers, byte[] body) {}
