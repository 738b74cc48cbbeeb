package dev.ordergate.channel.ordergate;

import dev.ordergate.channel.ChannelKind;
import dev.ordergate.channel.ChannelSettings;
import dev.ordergate.channel.Pem;
import dev.ordergate.config.ConfigException;
import dev.ordergate.config.ConfigReader;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * {@code kind: "ordergate"}: {@code secrets} (any verifies: rotation) and {@code legacyV1Until}, an
 * ISO instant until which the legacy v1 signature (without the channel name) still verifies; absent:
 * v2 only.
 */
public record OrdergateSettings(List<String> secrets, Instant legacyV1Until, boolean usesDevelopmentKeys)
    implements ChannelSettings {

  public static OrdergateSettings from(ConfigReader r, String prefix) {
    List<String> secrets = r.strings(prefix + "secrets");
    if (secrets.isEmpty()) {
      throw new ConfigException(prefix + "secrets", "needs at least one secret");
    }
    String until = r.string(prefix + "legacyV1Until", null);
    Instant legacy = null;
    if (until != null) {
      try {
        legacy = Instant.parse(until);
      } catch (DateTimeParseException e) {
        throw new ConfigException(prefix + "legacyV1Until", "must be an ISO-8601 instant such as 2027-01-31T00:00:00Z");
      }
    }
    boolean dev = secrets.stream().anyMatch(s -> s.contains("DEVELOPMENT-ONLY") || s.contains(Pem.DEV_MARKER));
    return new OrdergateSettings(secrets, legacy, dev);
  }

  @Override
  public ChannelKind kind() {
    return ChannelKind.ORDERGATE;
  }
}
