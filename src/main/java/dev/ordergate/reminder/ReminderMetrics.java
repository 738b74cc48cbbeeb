package dev.ordergate.reminder;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code ordergate_reminders_sent_total{trigger}} and {@code ordergate_reminder_lateness_seconds{trigger}}
 * (sent - due, histogram), plus {@code ordergate_reminder_redis_events_total{result}}: expiry events
 * received, and Redis keys that could not be written.
 */
final class ReminderMetrics {

  private static final Duration[] BUCKETS = {
      Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
      Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10),
      Duration.ofSeconds(30), Duration.ofMinutes(1), Duration.ofMinutes(5)};

  private final Map<Reminders.Trigger, Counter> sent = new EnumMap<>(Reminders.Trigger.class);
  private final Map<Reminders.Trigger, Timer> lateness = new EnumMap<>(Reminders.Trigger.class);
  private final Counter events;
  private final Counter keyFailures;

  ReminderMetrics(MeterRegistry registry) {
    for (Reminders.Trigger t : Reminders.Trigger.values()) {
      sent.put(t, Counter.builder("ordergate.reminders.sent").description("Payment reminders sent, by trigger")
          .tag("trigger", t.name()).register(registry));
      lateness.put(t, Timer.builder("ordergate.reminder.lateness")
          .description("Time between a reminder's due time and its sending, by trigger")
          .tag("trigger", t.name()).serviceLevelObjectives(BUCKETS).register(registry));
    }
    events = Counter.builder("ordergate.reminder.redis.events").tag("result", "received")
        .description("Redis reminder expiry events, and reminder keys not written").register(registry);
    keyFailures = Counter.builder("ordergate.reminder.redis.events").tag("result", "key_not_written")
        .description("Redis reminder expiry events, and reminder keys not written").register(registry);
  }

  void sent(Reminders.Trigger trigger, double latenessSeconds) {
    sent.get(trigger).increment();
    lateness.get(trigger).record((long) (latenessSeconds * 1e9), TimeUnit.NANOSECONDS);
  }

  void event() {
    events.increment();
  }

  void keyNotWritten() {
    keyFailures.increment();
  }
}
