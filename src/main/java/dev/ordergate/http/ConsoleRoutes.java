package dev.ordergate.http;

import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The operator console: {@code /console/} answers {@code index.html} (never cached), whose script and
 * style URLs carry {@link #version()}, a digest of every console file; the files themselves are
 * served by {@link StaticHandler} under {@code /console/<version>/} and cached for a year, so a new
 * build is fetched at once and an unchanged one never again. The security headers of every answer
 * (CSP and the rest) are {@link #securityHeaders}.
 */
public final class ConsoleRoutes {

  static final String ROOT = "console";
  /** No inline script or style anywhere; nothing may frame the console. */
  static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
      + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; "
      + "require-trusted-types-for 'script'";

  private final String version;
  private final String index;

  public ConsoleRoutes() {
    this.version = digest();
    this.index = read("index.html").replace("%VERSION%", version);
  }

  public String version() {
    return version;
  }

  /** On every answer: CSP, no framing, no sniffing, no referrer; API answers are never stored. */
  public static void securityHeaders(RoutingContext ctx) {
    var h = ctx.response().headers();
    h.set("Content-Security-Policy", CSP);
    h.set("X-Frame-Options", "DENY");
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "no-referrer");
    h.set("Cross-Origin-Opener-Policy", "same-origin");
    String path = ctx.request().path();
    if (!path.startsWith("/console/")) {
      h.set("Cache-Control", "no-store");
    }
    ctx.next();
  }

  public void mount(Vertx vertx, Router root) {
    // Vert.x matches "/console" for "/console/" too: the path tells them apart.
    root.get("/console").handler(ctx -> {
      if (!ctx.request().path().endsWith("/")) {
        ctx.redirect("/console/");
        return;
      }
      ctx.response().putHeader("Content-Type", "text/html; charset=utf-8").putHeader("Cache-Control", "no-cache")
          .end(index);
    });
    root.route("/console/" + version + "/*").handler(StaticHandler.create(ROOT)
        .setCachingEnabled(true).setMaxAgeSeconds(365L * 24 * 3600).setFilesReadOnly(true)
        .setIncludeHidden(false).setDirectoryListing(false).setDefaultContentEncoding("UTF-8"));
  }

  private static String read(String name) {
    try (InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(ROOT + "/" + name)) {
      if (in == null) {
        throw new IllegalStateException("console file " + name + " is missing from the classpath");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SHA-256 over every console file's name and bytes (from the jar or from target/classes), 12 hex digits. */
  static String digest() {
    try {
      URI uri = ConsoleRoutes.class.getClassLoader().getResource(ROOT + "/index.html").toURI();
      if (uri.getScheme().equals("jar")) {
        try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
          return digest(fs.getPath("/" + ROOT));
        } catch (java.nio.file.FileSystemAlreadyExistsException open) {
          return digest(FileSystems.getFileSystem(uri).getPath("/" + ROOT));
        }
      }
      return digest(Path.of(uri).getParent());
    } catch (IOException | URISyntaxException e) {
      throw new IllegalStateException("cannot read the console files", e);
    }
  }

  private static String digest(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      List<Path> files = walk.filter(Files::isRegularFile).sorted().toList();
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      for (Path f : files) {
        md.update(dir.relativize(f).toString().getBytes(StandardCharsets.UTF_8));
        md.update(Files.readAllBytes(f));
      }
      return HexFormat.of().formatHex(md.digest()).substring(0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }
}
