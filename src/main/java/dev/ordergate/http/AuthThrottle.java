package dev.ordergate.http;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Failed admin authentications per client address (an IPv6 client by its /64, which one host can
 * rotate through): after {@code maxFailures} within
 * {@code windowMs} the client is refused (429, even with the right token) for {@code lockoutMs}.
 * A success clears its count. Memory is bounded: at most {@link #MAX_CLIENTS} addresses are
 * tracked, the least recently seen dropped first. Counted in full in
 * {@code ordergate_admin_auth_failures_total} and {@code ordergate_admin_auth_throttled_total}
 * (no client label: the address is the attacker's choice).
 */
public final class AuthThrottle {

  public static final int MAX_FAILURES = 10;
  public static final long WINDOW_MS = 60_000;
  public static final long LOCKOUT_MS = 300_000;
  static final int MAX_CLIENTS = 10_000;

  private record State(int failures, long windowStartMs, long blockedUntilMs) {}

  private final Clock clock;
  private final int maxFailures;
  private final long windowMs;
  private final long lockoutMs;
  private final Counter failed;
  private final Counter throttled;
  private final Map<String, State> clients = new LinkedHashMap<>(256, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, State> eldest) {
      return size() > MAX_CLIENTS;
    }
  };

  public AuthThrottle(Clock clock, MeterRegistry registry) {
    this(clock, registry, MAX_FAILURES, WINDOW_MS, LOCKOUT_MS);
  }

  AuthThrottle(Clock clock, MeterRegistry registry, int maxFailures, long windowMs, long lockoutMs) {
    this.clock = clock;
    this.maxFailures = maxFailures;
    this.windowMs = windowMs;
    this.lockoutMs = lockoutMs;
    failed = Counter.builder("ordergate.admin.auth.failures")
        .description("Admin requests with a missing or wrong token").register(registry);
    throttled = Counter.builder("ordergate.admin.auth.throttled")
        .description("Admin requests refused because their client failed authentication too often").register(registry);
  }

  /** The throttle's key for a peer address: the address itself, or an IPv6 address's /64 prefix. */
  public static String clientKey(String hostAddress) {
    if (hostAddress == null || hostAddress.isEmpty()) {
      return "unknown";
    }
    if (hostAddress.indexOf(':') < 0) {
      return hostAddress;
    }
    try {
      // A literal address: no name lookup happens.
      byte[] a = InetAddress.getByName(hostAddress.replaceAll("%.*$", "")).getAddress();
      if (a.length == 16) {
        return HexFormat.of().formatHex(a, 0, 8) + "::/64";
      }
      return InetAddress.getByAddress(a).getHostAddress();
    } catch (UnknownHostException e) {
      return hostAddress;
    }
  }

  /** Seconds until {@code client} may try again; 0: not blocked. A refused attempt is counted. */
  public synchronized long blockedForSeconds(String client) {
    State s = clients.get(client);
    long now = clock.millis();
    if (s == null || s.blockedUntilMs() <= now) {
      return 0;
    }
    throttled.increment();
    return Math.max(1, (s.blockedUntilMs() - now + 999) / 1000);
  }

  public synchronized void failure(String client) {
    failed.increment();
    long now = clock.millis();
    State s = clients.get(client);
    if (s == null || now - s.windowStartMs() >= windowMs) {
      s = new State(0, now, 0);
    }
    int failures = s.failures() + 1;
    clients.put(client, failures >= maxFailures ? new State(0, now, now + lockoutMs) : new State(failures, s.windowStartMs(), 0));
  }

  public synchronized void success(String client) {
    clients.remove(client);
  }

  synchronized int tracked() {
    return clients.size();
  }
}
