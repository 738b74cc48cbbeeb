package dev.ordergate.config;

/**
 * Payment attempts and close before cancel (issue 10), under {@code payments.}:
 * <ul>
 *   <li>{@code closeBeforeCancel}: {@code required} (default) keeps an order pending while a gateway
 *       cannot confirm its trade is closed, at most {@code closeDeferMaxSeconds} (default 600), then
 *       cancels anyway with a warning; {@code bestEffort} cancels at once; {@code off} cancels without
 *       closing or querying anything (as before issue 10: the drill's baseline), the attempts become UNCLOSED.</li>
 *   <li>{@code gatewayConcurrency}: calls in flight per channel during a sweep (default 8).</li>
 *   <li>{@code gatewayTimeoutMs}: the whole of one outbound call, connect included (default 5000).</li>
 *   <li>{@code refundQuerySeconds}: how often a refund the gateway accepted but has not settled
 *       (REFUND_PROCESSING) is queried there, if its notification has not come (default 60; 0: never).</li>
 * </ul>
 */
public record GatewayOpsConfig(CloseMode closeBeforeCancel, long closeDeferMaxSeconds, int gatewayConcurrency,
                               long gatewayTimeoutMs, long refundQuerySeconds) {

  public enum CloseMode {
    REQUIRED, BEST_EFFORT, OFF
  }

  public static final GatewayOpsConfig DEFAULTS = new GatewayOpsConfig(CloseMode.REQUIRED, 600, 8, 5_000, 60);

  public static GatewayOpsConfig from(ConfigReader r) {
    String mode = r.string("payments.closeBeforeCancel", "required");
    CloseMode closeMode = switch (mode) {
      case "required" -> CloseMode.REQUIRED;
      case "bestEffort" -> CloseMode.BEST_EFFORT;
      case "off" -> CloseMode.OFF;
      default -> throw new ConfigException("payments.closeBeforeCancel", "must be \"required\", \"bestEffort\" or \"off\"");
    };
    return new GatewayOpsConfig(closeMode,
        r.integer("payments.closeDeferMaxSeconds", 600, 0, 7L * 24 * 3600),
        r.intValue("payments.gatewayConcurrency", 8, 1, 256),
        r.integer("payments.gatewayTimeoutMs", 5_000, 100, 120_000),
        r.integer("payments.refundQuerySeconds", 60, 0, 24L * 3600));
  }
}
