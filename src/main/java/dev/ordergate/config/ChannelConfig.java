package dev.ordergate.config;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.channel.ordergate.OrdergateSettings;

import java.util.List;

/**
 * One payment channel: its wire format ({@code kind}) with that kind's typed {@code settings}, the
 * currency its notifications are in unless they say otherwise, the time tolerance where the gateway
 * signs a time, and {@code refundUrl} (may be null: exceptions then go to manual review).
 * {@code devOnly} marks a channel that uses development-only keys.
 */
public record ChannelConfig(String name, ChannelKind kind, boolean devOnly, String currency, long toleranceSeconds,
                            String refundUrl, ChannelSettings settings) {

  /** The HMAC secrets of an {@code ordergate} channel (any verifies); empty for other kinds. */
  public List<String> secrets() {
    return settings instanceof OrdergateSettings o ? o.secrets() : List.of();
  }
}
