package dev.ordergate.channel;

/** The typed, validated config block of one channel kind (see the records in each kind's package). */
public interface ChannelSettings {

  ChannelKind kind();

  /** True when some key material of the block is marked development-only ({@link Pem#DEV_MARKER}). */
  boolean usesDevelopmentKeys();
}
