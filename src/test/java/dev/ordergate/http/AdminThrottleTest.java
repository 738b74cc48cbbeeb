package dev.ordergate.http;

import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Failed admin authentications are counted and throttled per client address. */
class AdminThrottleTest extends AppTest {

  private static HttpResponse<Buffer> reconcile(WebClient client, String token) {
    var req = client.get("/admin/reconcile");
    if (token != null) {
      req.putHeader("Authorization", "Bearer " + token);
    }
    return req.send().await();
  }

  private static WebClient clientFrom(String localAddress) {
    return WebClient.create(app.vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(app.verticle.port()).setLocalAddress(localAddress));
  }

  @Test
  void aClientThatKeepsGuessingIsLockedOutWhileOthersAreNot() {
    WebClient attacker = clientFrom("127.0.0.2");
    WebClient operator = clientFrom("127.0.0.3");
    try {
      double failedBefore = app.metric("ordergate.admin.auth.failures");
      for (int i = 0; i < AuthThrottle.MAX_FAILURES; i++) {
        assertEquals(401, reconcile(attacker, "guess-" + i).statusCode());
      }
      assertEquals(AuthThrottle.MAX_FAILURES, app.metric("ordergate.admin.auth.failures") - failedBefore, 0.0);
      // Locked out now, even with the right token, and told when to come back.
      HttpResponse<Buffer> locked = reconcile(attacker, TestApp.ADMIN_TOKEN);
      assertEquals(429, locked.statusCode(), locked.bodyAsString());
      assertEquals("TOO_MANY_FAILED_LOGINS", locked.bodyAsJsonObject().getString("error"));
      long retryAfter = Long.parseLong(locked.getHeader("Retry-After"));
      assertTrue(retryAfter > 0 && retryAfter <= AuthThrottle.LOCKOUT_MS / 1000, "Retry-After " + retryAfter);
      assertEquals(1, app.metric("ordergate.admin.auth.throttled"), 0.0);
      // Another client is not affected.
      assertEquals(200, reconcile(operator, TestApp.ADMIN_TOKEN).statusCode());
    } finally {
      attacker.close();
      operator.close();
    }
  }

  @Test
  void anIpv6ClientIsThrottledByItsSlash64() {
    assertEquals(AuthThrottle.clientKey("2001:db8:1:2:aaaa::1"), AuthThrottle.clientKey("2001:db8:1:2:ffff:1:2:3"));
    assertTrue(!AuthThrottle.clientKey("2001:db8:1:2::1").equals(AuthThrottle.clientKey("2001:db8:1:3::1")));
    assertEquals("127.0.0.2", AuthThrottle.clientKey("127.0.0.2"));
    assertEquals("unknown", AuthThrottle.clientKey(null));
    assertEquals(AuthThrottle.clientKey("fe80::1%eth0"), AuthThrottle.clientKey("fe80::2"));
  }

  @Test
  void theLockoutEndsAndASuccessClearsTheCount() {
    AtomicLong now = new AtomicLong(1_000_000);
    Clock clock = new Clock() {
      @Override
      public ZoneOffset getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        return Instant.ofEpochMilli(now.get());
      }
    };
    AuthThrottle t = new AuthThrottle(clock, new SimpleMeterRegistry(), 3, 60_000, 300_000);
    t.failure("a");
    t.failure("a");
    t.success("a");
    t.failure("a");
    t.failure("a");
    assertEquals(0, t.blockedForSeconds("a"), "a success cleared the earlier failures");
    now.addAndGet(61_000);
    t.failure("a");
    t.failure("a");
    assertEquals(0, t.blockedForSeconds("a"), "failures outside the window do not add up");
    t.failure("a");
    assertEquals(300, t.blockedForSeconds("a"));
    assertEquals(0, t.blockedForSeconds("b"));
    now.addAndGet(299_000);
    assertEquals(1, t.blockedForSeconds("a"));
    now.addAndGet(1_000);
    assertEquals(0, t.blockedForSeconds("a"));
    for (int i = 0; i < AuthThrottle.MAX_CLIENTS + 50; i++) {
      t.failure("c" + i);
    }
    assertEquals(AuthThrottle.MAX_CLIENTS, t.tracked(), "memory stays bounded");
  }
}
