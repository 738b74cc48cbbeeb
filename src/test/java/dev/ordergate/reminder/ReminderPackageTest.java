package dev.ordergate.reminder;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reminder path cannot cancel: its compiled classes reference nothing that can (the gate, the
 * sweep, the broker tier, the order service, the gate's SQL) and contain no statement that writes
 * {@code orders}. Read from the class files' constant pools, where every referenced class and every
 * string literal is, including SQL constants inlined from other classes by the compiler.
 */
class ReminderPackageTest {

  private static final List<String> FORBIDDEN_CLASSES = List.of(
      "dev/ordergate/gate/", "dev/ordergate/sweep/", "dev/ordergate/broker/", "dev/ordergate/orders/",
      "dev/ordergate/db/Sql", "dev/ordergate/db/SweepSql");
  private static final Pattern WRITES_ORDERS =
      Pattern.compile("(?is)\\b(update\\s+orders\\b|delete\\s+from\\s+orders\\b|insert\\s+into\\s+orders\\b)");

  @Test
  void reminderClassesHaveNoAccessToTheGate() throws Exception {
    List<String> violations = violations("dev/ordergate/reminder");
    assertTrue(classCount("dev/ordergate/reminder") >= 4, "the reminder classes were found");
    assertEquals(List.of(), violations);
  }

  @Test
  void theCheckFindsTheGateWhereItIsUsed() throws Exception {
    // The sweep cancels orders through the gate: the same check must flag it.
    List<String> violations = violations("dev/ordergate/sweep");
    assertFalse(violations.isEmpty());
    assertTrue(violations.stream().anyMatch(v -> v.contains("dev/ordergate/gate/CancellationEffects")), violations.toString());
    assertTrue(violations.stream().anyMatch(v -> v.contains("UPDATE orders")), violations.toString());
  }

  private static long classCount(String pkg) throws Exception {
    try (Stream<Path> files = Files.list(classesDir(pkg))) {
      return files.filter(p -> p.toString().endsWith(".class")).count();
    }
  }

  private static List<String> violations(String pkg) throws Exception {
    List<String> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(classesDir(pkg))) {
      for (Path file : files.filter(p -> p.toString().endsWith(".class")).sorted().toList()) {
        try (InputStream in = Files.newInputStream(file)) {
          for (String s : utf8Constants(in)) {
            for (String forbidden : FORBIDDEN_CLASSES) {
              if (s.contains(forbidden)) {
                out.add(file.getFileName() + " references " + s);
              }
            }
            if (WRITES_ORDERS.matcher(s).find()) {
              out.add(file.getFileName() + " holds SQL that writes orders: " + s.strip().replaceAll("\\s+", " "));
            }
          }
        }
      }
    }
    return out;
  }

  private static Path classesDir(String pkg) throws URISyntaxException {
    Path root = Path.of(ReminderPackageTest.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .getParent().resolve("classes");
    return root.resolve(pkg);
  }

  /** The CONSTANT_Utf8 entries of a class file (JVMS 4.4): class names, descriptors, string literals. */
  static List<String> utf8Constants(InputStream raw) throws IOException {
    DataInputStream in = new DataInputStream(raw);
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    List<String> out = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> out.add(in.readUTF());
        case 7, 8, 16, 19, 20 -> in.skipBytes(2);
        case 15 -> in.skipBytes(3);
        case 3, 4, 9, 10, 11, 12, 17, 18 -> in.skipBytes(4);
        case 5, 6 -> {
          in.skipBytes(8);
          i++;
        }
        default -> throw new IOException("unknown constant pool tag " + tag);
      }
    }
    return out;
  }
}
