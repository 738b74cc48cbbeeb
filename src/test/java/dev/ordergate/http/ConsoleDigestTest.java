package dev.ordergate.http;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The console's version digest, from a jar as the service runs and from a directory as the tests
 * run. Several verticles deployed at once in one JVM (the trigger bench starts two cases together)
 * computed it at the same moment: one closed the jar's file system under the other, which failed
 * with {@code ClosedFileSystemException}.
 */
class ConsoleDigestTest {

  private static final Map<String, String> FILES = new TreeMap<>(Map.of(
      "console/index.html", "<!doctype html><script src=\"/console/%VERSION%/app.js\"></script>",
      "console/app.js", "console.log('x');",
      "console/css/site.css", "body { margin: 0 }",
      "console/img/logo.svg", "<svg/>"));

  @Test
  void aJarAndADirectoryWithTheSameFilesHaveTheSameDigest(@TempDir Path tmp) throws Exception {
    Path dir = directory(tmp.resolve("classes"), FILES);
    Path jar = jar(tmp.resolve("console.jar"), FILES);
    try (URLClassLoader fromDir = loader(dir); URLClassLoader fromJar = loader(jar)) {
      String d = ConsoleRoutes.digest(fromDir);
      assertEquals(12, d.length(), d);
      assertEquals(d, ConsoleRoutes.digest(fromJar));
    }
    Map<String, String> changed = new TreeMap<>(FILES);
    changed.put("console/css/site.css", "body { margin: 1px }");
    try (URLClassLoader a = loader(jar(tmp.resolve("a.jar"), FILES));
         URLClassLoader b = loader(jar(tmp.resolve("b.jar"), changed))) {
      assertNotEquals(ConsoleRoutes.digest(a), ConsoleRoutes.digest(b), "one changed byte changes the version");
    }
  }

  @Test
  void manyThreadsReadingOneJarAtOnceAllGetItsDigest(@TempDir Path tmp) throws Exception {
    Path jar = jar(tmp.resolve("console.jar"), FILES);
    String expected;
    try (URLClassLoader one = loader(directory(tmp.resolve("classes"), FILES))) {
      expected = ConsoleRoutes.digest(one);
    }
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (URLClassLoader loader = loader(jar)) {
      for (int round = 0; round < 50; round++) {
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<String>> answers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Callable<String> read = () -> {
            start.await();
            return ConsoleRoutes.digest(loader);
          };
          answers.add(pool.submit(read));
        }
        for (Future<String> f : answers) {
          assertEquals(expected, f.get(), "round " + round);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static URLClassLoader loader(Path path) throws IOException {
    return new URLClassLoader(new URL[] {path.toUri().toURL()}, null);
  }

  private static Path directory(Path root, Map<String, String> files) throws IOException {
    for (var e : files.entrySet()) {
      Path f = root.resolve(e.getKey());
      Files.createDirectories(f.getParent());
      Files.writeString(f, e.getValue(), StandardCharsets.UTF_8);
    }
    return root;
  }

  /** As Maven's jar plugin writes one: a directory entry before the files under it. */
  private static Path jar(Path file, Map<String, String> files) throws IOException {
    try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out)) {
      List<String> dirs = new ArrayList<>();
      for (var e : files.entrySet()) {
        String name = e.getKey();
        for (int i = name.indexOf('/'); i >= 0; i = name.indexOf('/', i + 1)) {
          String d = name.substring(0, i + 1);
          if (!dirs.contains(d)) {
            dirs.add(d);
            jar.putNextEntry(new JarEntry(d));
            jar.closeEntry();
          }
        }
        jar.putNextEntry(new JarEntry(name));
        jar.write(e.getValue().getBytes(StandardCharsets.UTF_8));
        jar.closeEntry();
      }
    }
    return file;
  }
}
