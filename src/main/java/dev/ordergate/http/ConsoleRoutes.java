package dev.ordergate.http;

import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
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

  /**
   * SHA-256 over every console file's name and bytes (from the jar or from target/classes), 12 hex
   * digits; computed once per JVM, since the files are part of the build.
   */
  static String digest() {
    return Digest.OF_THIS_BUILD;
  }

  private static final class Digest {
    static final String OF_THIS_BUILD = digest(ConsoleRoutes.class.getClassLoader());
  }

  /**
   * The digest of the console files {@code loader} sees. A jar is read through a {@link JarFile} of
   * its own: the JVM-wide zip file system is shared by every caller, and one closing it failed the
   * others with {@code ClosedFileSystemException} when several verticles started at once.
   */
  static String digest(ClassLoader loader) {
    URL index = loader.getResource(ROOT + "/index.html");
    if (index == null) {
      throw new IllegalStateException("console file index.html is missing from the classpath");
    }
    try {
      if (index.getProtocol().equals("jar")) {
        JarURLConnection connection = (JarURLConnection) index.openConnection();
        connection.setUseCaches(false);
        try (JarFile jar = connection.getJarFile()) {
          return digestOfJar(jar);
        }
      }
      return digest(Path.of(index.toURI()).getParent());
    } catch (IOException | URISyntaxException e) {
      throw new IllegalStateException("cannot read the console files", e);
    }
  }

  private static String digestOfJar(JarFile jar) throws IOException {
    String prefix = ROOT + "/";
    SortedMap<String, byte[]> files = new TreeMap<>();
    for (JarEntry f : jar.stream().filter(e -> !e.isDirectory() && e.getName().startsWith(prefix)).toList()) {
      try (InputStream in = jar.getInputStream(f)) {
        files.put(f.getName().substring(prefix.length()), in.readAllBytes());
      }
    }
    return digest(files);
  }

  private static String digest(Path dir) throws IOException {
    SortedMap<String, byte[]> files = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path f : walk.filter(Files::isRegularFile).toList()) {
        files.put(dir.relativize(f).toString(), Files.readAllBytes(f));
      }
    }
    return digest(files);
  }

  /** The one digest of both: each file's name relative to the console root, then its bytes, in name order. */
  private static String digest(SortedMap<String, byte[]> files) {
    MessageDigest md = sha256();
    files.forEach((name, bytes) -> {
      md.update(name.getBytes(StandardCharsets.UTF_8));
      md.update(bytes);
    });
    return HexFormat.of().formatHex(md.digest()).substring(0, 12);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }
}
