package dev.ordergate.config;

/** A configuration value that cannot be used; the message names the key. */
public final class ConfigException extends RuntimeException {

  public ConfigException(String key, String problem) {
    super("config " + key + ": " + problem);
  }
}
