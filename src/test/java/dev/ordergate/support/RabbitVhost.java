package dev.ordergate.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A RabbitMQ virtual host of its own for a test class on the machine's broker (127.0.0.1:5672,
 * guest), made with {@code rabbitmqctl} (AMQP cannot create vhosts; the management plugin is not
 * enabled here) and deleted with everything in it on close. Outages are made per vhost, so other
 * users of the broker are not disturbed: {@link #closeAllConnections()}, and {@link #denyAccess()}
 * (no reconnect succeeds until {@link #allowAccess()}).
 */
public final class RabbitVhost implements AutoCloseable {

  public final String name;

  private RabbitVhost(String name) {
    this.name = name;
  }

  public static RabbitVhost create() {
    RabbitVhost v = new RabbitVhost("ogtest-" + UUID.randomUUID().toString().substring(0, 12));
    ctl("add_vhost", v.name);
    v.allowAccess();
    return v;
  }

  public String uri() {
    return "amqp://guest:guest@127.0.0.1:5672/" + name;
  }

  public void closeAllConnections() {
    ctl("close_all_connections", "-p", name, "test outage");
  }

  public void denyAccess() {
    ctl("clear_permissions", "-p", name, "guest");
  }

  public void allowAccess() {
    ctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*");
  }

  @Override
  public void close() {
    ctl("delete_vhost", name);
  }

  private static String ctl(String... args) {
    List<String> cmd = new ArrayList<>(List.of("rabbitmqctl", "-q"));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", cmd) + ": no answer in 60 s");
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out);
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("rabbitmqctl is needed for the broker tests (RabbitMQ on this machine)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
