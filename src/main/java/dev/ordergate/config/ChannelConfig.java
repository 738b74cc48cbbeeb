package dev.ordergate.config;

import java.util.List;

/**
 * One payment channel. Any of {@code secrets} verifies a signature, so a secret can be rotated
 * without downtime. {@code refundUrl} may be null (exceptions then go to manual review). A
 * {@code devOnly} channel (or one whose secret carries the {@value AppConfig#DEV_MARKER} marker of the
 * keys this repository publishes) is active only in dev mode.
 */
public record ChannelConfig(String name, List<String> secrets, long toleranceSeconds, String refundUrl,
                            boolean devOnly) {

  public ChannelConfig(String name, List<String> secrets, long toleranceSeconds, String refundUrl) {
    this(name, secrets, toleranceSeconds, refundUrl, false);
  }
}
