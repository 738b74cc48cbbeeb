"""What a cursor-based outbox would cost against the relay as built (issue 13), side by side in one run.

Usage: python3 bench/cursor_probe.py   (needs wrk, pgbench, psql; the local PostgreSQL; target/ordergate.jar)
Environment: PROBE_ROUNDS (2, alternating order), PROBE_SECONDS (20), BENCH_DB_URL (as scripts/bench),
PROBE_VARIANTS (off,cursor,ordered,log), PROBE_OLD_JAR (a variant "oldlog": the relay on with the log sink, run
from that jar on a template it migrated itself: an earlier build, side by side).

Four variants of the same jar, each on a fresh database: the relay off ("off"); the relay off with one pgbench
client running bench/sql/cursor-probe.sql beside it ("cursor": reads the committed events past a cursor and
moves it, one row written per batch of up to 1,000 events, every 20 ms, until three seconds after the load);
the same with a probe per event for an earlier event of its order that is still ahead of the cursor ("ordered");
the relay on with the log sink as shipped ("log": a row version per event, written by the relay's log
statement). Each: a warm-up of 20,000 callbacks, VACUUM and CHECKPOINT, then a closed loop of 256 connections
through wrk. pgbench callback.sql runs before and after, as row 1's yardstick. CPU per callback from /proc: the
service, wrk, the database's backends (the cursor client's included), the cursor client itself, and the whole
machine (/proc/stat); for the cursor variants they include the three seconds after the load."""
import sys, os, re, json, subprocess, argparse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B

ROUNDS = int(os.environ.get("PROBE_ROUNDS", "2"))
SECONDS = int(os.environ.get("PROBE_SECONDS", "20"))
VARIANTS = tuple(os.environ.get("PROBE_VARIANTS", "off,cursor,ordered,log").split(","))
NEW_JAR = B.JAR
OLD_JAR = os.environ.get("PROBE_OLD_JAR")
RELAY_ON = ("log", "oldlog")


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def run_variant(b, tpls, v, rnd):
    B.JAR = OLD_JAR if v == "oldlog" else NEW_JAR
    db = b.create_db(f"probe_{v}{rnd}", template=tpls["old" if v == "oldlog" else "new"])
    svc = b.start_service(db, f"probe-{v}{rnd}", outbox={"enabled": v in RELAY_ON, "retentionHours": 1})
    b.cb_svc = svc
    b.replay(db, f"pw{v}{rnd}", 20000, connections=64, warmup=0)
    if v in RELAY_ON:
        b.wait_drained(db, 60)
    b.settle(db)
    path, prefix = b.signed_callbacks(db, f"p{v}{rnd}", 12000 * SECONDS)
    if v in ("cursor", "ordered"):
        b.psql(db, """CREATE TABLE outbox_cursor_probe (id int PRIMARY KEY, tx bigint, seq bigint, events bigint,
                      moved_at timestamptz);
                      INSERT INTO outbox_cursor_probe SELECT 1, coalesce(max(tx), 0), coalesce(max(seq), 0), 0, now()
                      FROM outbox_events""")
    cmd = ["wrk", "-t2", "-c256", f"-d{SECONDS}s", "-s", os.path.join(B.ROOT, "bench", "wrk-callbacks.lua"),
           svc.base, "--", path, B.CHANNEL, "2"]
    cursor = None
    if v in ("cursor", "ordered"):
        # Until three seconds past the load, so that a cursor that kept up ends with nothing behind it.
        cursor = subprocess.Popen(["pgbench", "-n", "-c1", "-T", str(SECONDS + 3),
                                   "-D", f"ordered={int(v == 'ordered')}",
                                   "-f", os.path.join(B.ROOT, "bench", "sql", "cursor-probe.sql"), b.url(db)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wrk = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=b.tmp)
    busy0 = machine_busy()
    meter = B.CpuMeter(b, db, svc.proc.pid, wrk.pid)
    if cursor:
        # Before the meter's thread starts: it iterates over the groups.
        meter.groups["cursor client"] = {cursor.pid}
    with meter:
        out, err = wrk.communicate()
        if cursor:
            cursor_out = cursor.communicate()[0]
            if cursor.returncode != 0:
                raise RuntimeError(f"cursor client failed: {cursor_out}")
    busy = machine_busy() - busy0
    if wrk.returncode != 0:
        raise RuntimeError(f"wrk failed: {err}")
    os.remove(path)
    paid = int(b.psql(db, f"SELECT count(*) FROM orders WHERE order_no LIKE '{prefix}%' AND status = 'PAID'"))
    res = {"variant": v, "round": rnd, "perSecond": int(re.search(r"(\d+) requests in", out).group(1)) / SECONDS,
           "paid": paid, "cpu": meter.seconds(), "machine": busy}
    if v in ("cursor", "ordered"):
        # Events the cursor had not passed three seconds after the load, and how long before that it last moved.
        left, age = b.psql(db, """SELECT (SELECT count(*) FROM outbox_events e WHERE (e.tx, e.seq) > (c.tx, c.seq)),
                                  extract(epoch FROM now() - c.moved_at) FROM outbox_cursor_probe c""").split("|")
        res["cursorBehind"] = {"events": int(left), "seconds": float(age)}
    if v in RELAY_ON:
        res["drainSeconds"] = b.wait_drained(db, 60)
    b.stop_service(svc)
    b.drop_db(db)
    B.log(f"{v} round {rnd}: {res['perSecond']:.0f} callbacks/s, {paid} paid")
    return res


def main():
    args = argparse.Namespace(quick=False, out=None, set=None,
                              db_url=os.environ.get("BENCH_DB_URL", "postgresql://postgres@127.0.0.1:5432/postgres"))
    b = B.Bench(args)
    runs, yard = [], []
    try:
        tpls = {"new": b.create_db("tpl")}
        b.stop_service(b.start_service(tpls["new"], "migrate"))
        if "oldlog" in VARIANTS:
            B.JAR = OLD_JAR
            tpls["old"] = b.create_db("tplold")
            b.stop_service(b.start_service(tpls["old"], "migrateold"))
            B.JAR = NEW_JAR
        pgdb = b.create_db("pg", template=tpls["new"])
        b.psql(pgdb, file=os.path.join(B.ROOT, "scripts", "pgbench", "setup.sql"), variables={"count": 0})
        b.pgb_next = 1
        b.pgbench(pgdb, "callback.sql", 5)
        yard.append(b.pgbench(pgdb, "callback.sql", 20)["tps"])
        for rnd in range(ROUNDS):
            for v in (VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]):
                runs.append(run_variant(b, tpls, v, rnd))
        yard.append(b.pgbench(pgdb, "callback.sql", 20)["tps"])
    finally:
        for p in list(b.procs):
            p.terminate()
        for db in list(b.dbs):
            b.drop_db(db)
    os.makedirs(os.path.join(B.ROOT, "target"), exist_ok=True)
    with open(os.path.join(B.ROOT, "target", "cursor-probe.json"), "w") as f:
        json.dump({"runs": runs, "pgbench": yard}, f)
    tps = max(yard)
    print(f"pgbench callback.sql: {' / '.join(f'{t:,.0f}' for t in yard)} tps (the ratio uses the higher)")
    print("| variant | round | callbacks/s | ratio | CPU µs per callback: service / wrk / backends / cursor client | machine µs per callback | cursor behind at the end |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        per = lambda s: s * 1e6 / max(r["paid"], 1)
        c = r["cpu"]
        cells = " / ".join(f"{per(c.get(k) or 0):.0f}" for k in ("service", "client", "postgres", "cursor client"))
        behind = (f"{r['cursorBehind']['events']:,} events, last moved {r['cursorBehind']['seconds']:.2f} s before"
                  if "cursorBehind" in r else f"relay drained in {r['drainSeconds']:.1f} s" if "drainSeconds" in r else "")
        print(f"| {r['variant']} | {r['round']} | {r['perSecond']:,.0f} | {r['perSecond'] / tps:.2f}x | {cells} | "
              f"{per(r['machine']):.0f} | {behind} |")


if __name__ == "__main__":
    main()
