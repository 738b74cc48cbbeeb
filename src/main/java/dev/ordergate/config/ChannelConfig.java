package dev.ordergate.config;

import java.util.List;

/**
 * One payment channel. Any of {@code secrets} verifies a signature, so a secret can be rotated
 * without downtime. {@code refundUrl} may be null (exceptions then go to manual review).
 */
public record ChannelConfig(String name, List<String> secrets, long toleranceSeconds, String refundUrl) {}
