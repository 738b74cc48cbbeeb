package dev.ordergate.tools;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The service as a child process ({@code java -cp <this classpath> dev.ordergate.Main serve}) on a
 * config file of its own, so that it can be sent SIGTERM or SIGKILL (the chaos run, the shutdown
 * test). Its output is appended to {@code logFile}.
 */
public final class ServiceProcess implements AutoCloseable {

  private final Path configFile;
  private final Path logFile;
  private final int port;
  private final Map<String, String> env;
  private Process process;

  private ServiceProcess(Path configFile, Path logFile, int port, Map<String, String> env) {
    this.configFile = configFile;
    this.logFile = logFile;
    this.port = port;
    this.env = env;
  }

  /** Writes {@code config} (its {@code http} block set to 127.0.0.1 and a free port) and starts the service. */
  public static ServiceProcess start(JsonObject config, Path dir) throws IOException {
    return start(config, dir, Map.of());
  }

  /** {@link #start(JsonObject, Path)} with {@code env} added to the service's environment (each start). */
  public static ServiceProcess start(JsonObject config, Path dir, Map<String, String> env) throws IOException {
    int port = freePort();
    JsonObject c = config.copy();
    c.put("http", c.getJsonObject("http", new JsonObject()).copy().put("host", "127.0.0.1").put("port", port));
    c.put("management", new JsonObject().put("host", "127.0.0.1").put("port", freePort()));
    Files.createDirectories(dir);
    Path file = dir.resolve("config.json");
    Files.writeString(file, c.encodePrettily());
    ServiceProcess p = new ServiceProcess(file, dir.resolve("service.log"), port, Map.copyOf(env));
    p.restart();
    return p;
  }

  /** Starts the service again on the same config and port (after it exited or was killed). */
  public void restart() throws IOException {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("the service is still running");
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder(List.of(java, "-Xms64m", "-Xmx384m", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), "dev.ordergate.Main", "serve"));
    pb.environment().put("ORDERGATE_CONF", configFile.toString());
    for (String name : List.of("ORDERGATE_DB_URL", "ORDERGATE_HTTP_PORT", "ORDERGATE_ADMIN_TOKEN", "ORDERGATE_API_KEYS",
        "ORDERGATE_MODE", "ORDERGATE_MANAGEMENT_PORT")) {
      pb.environment().remove(name);
    }
    pb.environment().putAll(env);
    pb.redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    process = pb.start();
  }

  public String url() {
    return "http://127.0.0.1:" + port;
  }

  public Path logFile() {
    return logFile;
  }

  /** Polls {@code /health/ready} until it answers 200; false if the process died or time ran out. */
  public boolean awaitReady(long timeoutMs) throws InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline && process.isAlive()) {
      try {
        HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create(url() + "/health/ready"))
            .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return true;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    return false;
  }

  /** SIGTERM: the graceful shutdown. */
  public void terminate() {
    process.destroy();
  }

  /** SIGKILL: a crash. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /** The exit status once the process ended within {@code ms}, else null. */
  public Integer waitFor(long ms) throws InterruptedException {
    return process.waitFor(ms, TimeUnit.MILLISECONDS) ? process.exitValue() : null;
  }

  public boolean alive() {
    return process != null && process.isAlive();
  }

  @Override
  public void close() throws InterruptedException {
    if (alive()) {
      kill();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
