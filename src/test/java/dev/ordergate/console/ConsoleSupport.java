package dev.ordergate.console;

import dev.ordergate.auth.PasswordHash;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The console's test fixtures: a service with operator accounts, and a signed-in HTTP session. */
public final class ConsoleSupport {

  public static final String OPERATOR = "alice";
  public static final String PASSWORD = "correct horse battery staple";
  public static final String OTHER = "bob";
  public static final String OTHER_PASSWORD = "bob's long passphrase";
  public static final String SECOND_CHANNEL = "backup";
  /** Made once per JVM (the minimum iteration count keeps test logins quick). */
  private static final String HASH = PasswordHash.create(PASSWORD.toCharArray(), PasswordHash.MIN_ITERATIONS);
  private static final String OTHER_HASH = PasswordHash.create(OTHER_PASSWORD.toCharArray(), PasswordHash.MIN_ITERATIONS);
  private static final Pattern NEXT = Pattern.compile("<([^>]+)>; rel=\"next\"");

  private ConsoleSupport() {
  }

  public static JsonObject config() {
    JsonObject config = TestApp.baseConfig();
    config.getJsonObject("payments").getJsonObject("channels").put(SECOND_CHANNEL,
        new JsonObject().put("secrets", new io.vertx.core.json.JsonArray().add("second-channel-secret-0")));
    config.getJsonObject("admin")
        .put("operators", new JsonObject()
            .put(OPERATOR, new JsonObject().put("passwordHash", HASH))
            .put(OTHER, new JsonObject().put("passwordHash", OTHER_HASH)))
        .put("login", new JsonObject().put("failureDelayMs", 50).put("maxFailures", 3).put("lockoutMaxSeconds", 60));
    return config;
  }

  /** A signed-in browser-like client: its session cookie and CSRF token. */
  public record Session(TestApp app, String cookie, String csrf) {

    public static Session login(TestApp app, String name, String password) {
      HttpResponse<Buffer> resp = app.http.post("/admin/login").putHeader("Content-Type", "application/json")
          .sendBuffer(Buffer.buffer(new JsonObject().put("name", name).put("password", password).encode())).await();
      TestApp.expect(resp, 200);
      String setCookie = resp.headers().getAll("Set-Cookie").stream().filter(c -> c.startsWith("og_session="))
          .findFirst().orElseThrow(() -> new AssertionError("no session cookie: " + resp.headers()));
      return new Session(app, setCookie.substring(0, setCookie.indexOf(';')), resp.bodyAsJsonObject().getString("csrfToken"));
    }

    public HttpResponse<Buffer> get(String path) {
      return app.http.get(path).putHeader("Cookie", cookie).send().await();
    }

    public HttpResponse<Buffer> post(String path, JsonObject body) {
      return send(HttpMethod.POST, path, body, req -> req.putHeader("X-CSRF-Token", csrf));
    }

    public HttpResponse<Buffer> send(HttpMethod method, String path, JsonObject body,
                                     Consumer<io.vertx.ext.web.client.HttpRequest<Buffer>> extra) {
      var req = app.http.request(method, path).putHeader("Cookie", cookie).putHeader("Content-Type", "application/json");
      extra.accept(req);
      return (body == null ? req.send() : req.sendBuffer(Buffer.buffer(body.encode()))).await();
    }
  }

  /** The next link of a paged answer, or null. */
  public static String next(HttpResponse<Buffer> resp) {
    String link = resp.getHeader("Link");
    if (link == null) {
      return null;
    }
    Matcher m = NEXT.matcher(link);
    if (!m.find()) {
      throw new AssertionError("Link header without rel=next: " + link);
    }
    return m.group(1);
  }

  /**
   * Follows next links from {@code first} (each page read by {@code get}), running {@code between}
   * after every page; answers every row seen, in order.
   */
  public static List<JsonObject> follow(String first, java.util.function.Function<String, HttpResponse<Buffer>> get,
                                        Runnable between) {
    List<JsonObject> out = new ArrayList<>();
    String url = first;
    for (int pages = 0; url != null; pages++) {
      if (pages > 1000) {
        throw new AssertionError("next links do not end");
      }
      HttpResponse<Buffer> resp = TestApp.expect(get.apply(url), 200);
      JsonArray rows = resp.bodyAsJsonArray();
      rows.forEach(r -> out.add((JsonObject) r));
      url = next(resp);
      between.run();
    }
    return out;
  }
}
