package dev.ordergate.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** Typed, validated access to a JSON config tree by dotted key; every failure names the key. */
public final class ConfigReader {

  private final JsonObject root;

  public ConfigReader(JsonObject root) {
    this.root = root;
  }

  public Object raw(String key) {
    Object node = root;
    for (String part : key.split("\\.")) {
      if (!(node instanceof JsonObject obj)) {
        return null;
      }
      node = obj.getValue(part);
    }
    return node;
  }

  public String string(String key, String fallback) {
    Object v = raw(key);
    if (v == null) {
      return fallback;
    }
    if (!(v instanceof String s)) {
      throw new ConfigException(key, "must be a string, got " + Secrets.shown(key, v));
    }
    return s.isBlank() ? fallback : s;
  }

  public long integer(String key, long fallback, long min, long max) {
    Object v = raw(key);
    long value;
    if (v == null) {
      value = fallback;
    } else if (v instanceof Integer || v instanceof Long) {
      value = ((Number) v).longValue();
    } else if (v instanceof String s && s.matches("-?\\d{1,18}")) {
      value = Long.parseLong(s);
    } else {
      throw new ConfigException(key, "must be a whole number, got " + Secrets.shown(key, v));
    }
    if (value < min || value > max) {
      throw new ConfigException(key, "must be between " + min + " and " + max + ", got " + Secrets.shown(key, value));
    }
    return value;
  }

  /** A number (fractions allowed) between {@code min} and {@code max}. */
  public double number(String key, double fallback, double min, double max) {
    Object v = raw(key);
    if (v == null) {
      return fallback;
    }
    double value;
    if (v instanceof Number n) {
      value = n.doubleValue();
    } else {
      try {
        value = Double.parseDouble(String.valueOf(v));
      } catch (NumberFormatException e) {
        throw new ConfigException(key, "must be a number");
      }
    }
    if (!(value >= min && value <= max)) {
      throw new ConfigException(key, "must be between " + min + " and " + max);
    }
    return value;
  }

  public int intValue(String key, int fallback, int min, int max) {
    return (int) integer(key, fallback, min, max);
  }

  public boolean bool(String key, boolean fallback) {
    Object v = raw(key);
    if (v == null) {
      return fallback;
    }
    if (v instanceof Boolean b) {
      return b;
    }
    if (v instanceof String s && (s.equals("true") || s.equals("false"))) {
      return Boolean.parseBoolean(s);
    }
    throw new ConfigException(key, "must be true or false, got " + Secrets.shown(key, v));
  }

  public JsonObject object(String key) {
    Object v = raw(key);
    if (v == null) {
      return new JsonObject();
    }
    if (!(v instanceof JsonObject obj)) {
      throw new ConfigException(key, "must be an object, got " + Secrets.shown(key, v));
    }
    return obj;
  }

  public List<String> strings(String key) {
    Object v = raw(key);
    if (v == null) {
      return List.of();
    }
    if (!(v instanceof JsonArray arr)) {
      throw new ConfigException(key, "must be a list of strings, got " + Secrets.shown(key, v));
    }
    List<String> out = new ArrayList<>();
    for (Object item : arr) {
      if (!(item instanceof String s) || s.isEmpty()) {
        throw new ConfigException(key, "must be a list of non-empty strings, got " + Secrets.shown(key, v));
      }
      out.add(s);
    }
    return List.copyOf(out);
  }

  /** A list of objects, e.g. {@code platformKeys}; an item that is not an object names its index. */
  public List<JsonObject> objects(String key) {
    Object v = raw(key);
    if (v == null) {
      return List.of();
    }
    if (!(v instanceof JsonArray arr)) {
      throw new ConfigException(key, "must be a list of objects");
    }
    List<JsonObject> out = new ArrayList<>();
    for (int i = 0; i < arr.size(); i++) {
      if (!(arr.getValue(i) instanceof JsonObject obj)) {
        throw new ConfigException(key + "[" + i + "]", "must be an object");
      }
      out.add(obj);
    }
    return List.copyOf(out);
  }

  /** A required non-blank string. */
  public String required(String key) {
    String s = string(key, null);
    if (s == null) {
      throw new ConfigException(key, "is required");
    }
    return s;
  }

  /** An optional http(s) URL; null when absent. */
  public String url(String key) {
    String s = string(key, null);
    if (s != null && !s.matches("https?://[^\\s]+")) {
      throw new ConfigException(key, "must be an http(s) URL, got " + Secrets.redactUrls(s));
    }
    return s;
  }
}
