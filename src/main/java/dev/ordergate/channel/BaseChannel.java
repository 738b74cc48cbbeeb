package dev.ordergate.channel;

import dev.ordergate.config.ChannelConfig;

import java.time.Clock;

/** What every channel holds: its config, its kind's typed settings and the clock it checks times with. */
public abstract class BaseChannel<S extends ChannelSettings> implements PaymentChannel {

  protected final ChannelConfig config;
  protected final S settings;
  protected final Clock clock;

  @SuppressWarnings("unchecked")
  protected BaseChannel(ChannelConfig config, Clock clock) {
    this.config = config;
    this.settings = (S) config.settings();
    this.clock = clock;
  }

  @Override
  public String name() {
    return config.name();
  }

  @Override
  public ChannelKind kind() {
    return config.kind();
  }
}
