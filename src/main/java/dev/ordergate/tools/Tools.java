package dev.ordergate.tools;

import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The jar's operator commands: {@code reconcile}, {@code drill}, {@code replay} and {@code chaos}. Each prints a
 * human summary, writes a JSON report with {@code --report FILE}, has {@code --help}, and exits 0
 * when all is well, 1 on a violation or anomaly, 2 on a usage error or when it could not run.
 */
public final class Tools {

  public static final int OK = 0;
  public static final int ANOMALY = 1;
  public static final int FAILED = 2;

  private Tools() {
  }

  /** Runs {@code command} with its arguments and returns the exit status. */
  public static int run(String command, String[] args) {
    PrintStream out = System.out;
    try {
      return switch (command) {
        case "reconcile" -> new ReconcileCommand(out).run(args);
        case "drill" -> new DrillCommand(out).run(args);
        case "replay" -> new ReplayCommand(out).run(args);
        case "gateway-sim" -> new GatewaySimCommand(out).run(args);
        case "trigger-bench" -> new TriggerBenchCommand(out).run(args);
        case "chaos" -> new ChaosCommand(out).run(args);
        default -> throw new Args.UsageException("unknown command " + command);
      };
    } catch (Args.UsageException e) {
      System.err.println("ordergate " + command + ": " + e.getMessage() + " (see --help)");
      return FAILED;
    } catch (Exception e) {
      System.err.println("ordergate " + command + " failed: " + e);
      return FAILED;
    }
  }

  public static void main(String[] args) {
    if (args.length == 0) {
      System.err.println("usage: ordergate reconcile|drill|replay|chaos [options] (--help for each)");
      System.exit(FAILED);
    }
    System.exit(run(args[0], Arrays.copyOfRange(args, 1, args.length)));
  }

  static void writeReport(String file, JsonObject report, PrintStream out) throws IOException {
    if (file == null) {
      return;
    }
    Path path = Path.of(file);
    if (path.getParent() != null) {
      Files.createDirectories(path.getParent());
    }
    Files.writeString(path, report.encodePrettily() + "\n", StandardCharsets.UTF_8);
    out.println("report written to " + path);
  }
}
