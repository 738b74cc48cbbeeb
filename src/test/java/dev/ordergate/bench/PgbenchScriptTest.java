package dev.ordergate.bench;

import dev.ordergate.db.Sql;
import dev.ordergate.outbox.OutboxWriter;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@code scripts/pgbench/callback-full.sql} is the service's own transaction for a batch of one,
 * for the benchmark's yardstick. It is generated from {@link Sql}'s statements, and this test keeps
 * the committed file equal to what they generate, so the yardstick cannot drift from the gate.
 * Regenerate it from the repository root after {@code mvn -q test-compile}:
 * {@code java -cp target/test-classes:target/classes:$(mvn -q dependency:build-classpath
 * -Dmdep.outputFile=/dev/stdout) dev.ordergate.bench.PgbenchScriptTest}.
 */
class PgbenchScriptTest {

  static final Path SCRIPT = Path.of("scripts/pgbench/callback-full.sql");

  static String generate() {
    String orderNo = "ARRAY['PGB-' || :n]";
    String pay = Sql.CLAIM_AND_PAY
        .replace("$17", orderNo).replace("$16", "ARRAY['pgbench']").replace("$15", "'" + OutboxWriter.SMS_ORDER_PAID + "'")
        .replace("$14", "ARRAY['CNY']").replace("$13", "ARRAY[1]").replace("$12", "ARRAY[NULL]").replace("$11", "ARRAY[NULL]")
        .replace("$10", "ARRAY['SUCCESS']").replace("$9", "ARRAY[100]").replace("$8", orderNo)
        .replace("$7", orderNo).replace("$6", "ARRAY['pgbench']")
        .replace("$1", "ARRAY['pgbench']").replace("$2", orderNo).replace("$3", orderNo)
        .replace("$4", "ARRAY[100]").replace("$5", "ARRAY['SUCCESS']");
    return """
        -- One payment callback with exactly the statement the service's transaction runs for a batch
        -- of one: Sql.CLAIM_AND_PAY (the delivery recorded, the receipt claimed with its answer, and for the
        -- claimed key the conditional UPDATE whose RETURNING rows drive the coupon, the transition, and the
        -- ORDER_PAID and NOTIFY_SMS outbox rows). GENERATED from dev.ordergate.db.Sql by PgbenchScriptTest, which fails when this file
        -- and the service's statements differ. Same orders and sequence as callback.sql (setup.sql).
        -- pgbench -n -M prepared -c 16 -j 2 -T 20 -f callback-full.sql
        SELECT nextval('bench_seq') AS n \\gset
        BEGIN;
        """ + pay + ";\nEND;\n";
  }

  @Test
  void theYardstickRunsTheServicesOwnStatements() throws Exception {
    assertEquals(generate(), Files.readString(SCRIPT),
        SCRIPT + " differs from the service's statements: regenerate it with PgbenchScriptTest.main");
  }

  public static void main(String[] args) throws Exception {
    Files.writeString(SCRIPT, generate());
  }
}
