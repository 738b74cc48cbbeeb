"""A/B of two builds of the service with the outbox relay on (issue 13), alternating, in one run.

Usage: python3 bench/relay_ab.py OLD_JAR NEW_JAR   (needs wrk, pgbench, psql; the local PostgreSQL)
Environment: AB_SINKS (log,webhook), AB_ROUNDS (1), AB_RATE (2500: the overload open loop; a second open
loop runs at AB_RATE / 2.5), AB_VARIANTS (old,new; a variant ending in "nojit" runs with jit = off set on
its database). Each variant: a fresh database from a template its own jar migrated, the relay on (log sink,
or the bench's batching webhook receiver), a warm-up, a closed loop of 256 connections through wrk, then
the two open loops through the replay tool; pgbench callback.sql before and after as the yardstick. Prints
two markdown tables; the raw figures go to target/relay-ab.json."""
import sys, os, json, argparse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B

args = argparse.Namespace(quick=False, db_url='postgresql://postgres@127.0.0.1:5432/postgres', out=None, set=None)
b = B.Bench(args)
jars = {'old': os.path.abspath(sys.argv[1]), 'new': os.path.abspath(sys.argv[2])}
variants = os.environ.get('AB_VARIANTS', 'old,new').split(',')
jar_of = lambda v: jars['old' if v.startswith('old') else 'new']
sinks = os.environ.get("AB_SINKS", "log,webhook").split(",")
rate = float(os.environ.get("AB_RATE", "2500"))
rounds = int(os.environ.get("AB_ROUNDS", "1"))
out = []
try:
    tpl = {}
    for k, j in jars.items():
        B.JAR = j
        tpl[k] = b.create_db('tpl_' + k)
        svc = b.start_service(tpl[k], 'mig' + k)
        b.stop_service(svc)
        if k == 'old' and b.psql(tpl[k], "SELECT to_regclass('outbox_pending') IS NULL") == 't':
            # A jar from before V13 has no outbox_pending view; the bench's drain and sampler read it.
            b.psql(tpl[k], "CREATE VIEW outbox_pending AS SELECT * FROM outbox_events WHERE status = 'PENDING'")
    pgdb = b.create_db('pg', template=tpl['new'])
    b.psql(pgdb, file=os.path.join(B.ROOT, "scripts", "pgbench", "setup.sql"), variables={"count": 0})
    b.pgb_next = 1
    b.pgbench(pgdb, "callback.sql", 10)
    pg = [b.pgbench(pgdb, "callback.sql", 20)]
    receiver = B.SinkReceiver()
    for rnd in range(rounds):
        for k in (variants if rnd % 2 == 0 else variants[::-1]):
            for sink in sinks:
                B.JAR = jar_of(k)
                db = b.create_db(f'ab_{k}{rnd}{sink}', template=tpl['old' if k.startswith('old') else 'new'])
                if k.endswith('nojit'):
                    b.psql(db, f'ALTER DATABASE "{db}" SET jit = off')
                outbox = {'enabled': True, 'retentionHours': 1}
                if sink == 'webhook':
                    outbox["sinks"] = {t: {"url": receiver.url + "/" + t, "batchMax": B.WEBHOOK_BATCH}
                                       for t in ("ORDER_PAID", "NOTIFY_SMS", "ORDER_CANCELLED")}
                svc = b.start_service(db, f'ab{k}{rnd}{sink}', outbox=outbox)
                b.cb_svc = svc
                b.replay(db, f'w{k}{rnd}{sink}', 20000, connections=64, warmup=0)
                b.wait_drained(db, 60)
                stats0 = b.psql(db, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'outbox_events'")
                wrk = b.relay_run(db, sink, f'wrk{k}{rnd}', 6000, 0, wrk=True)
                opn = b.relay_run(db, sink, f'open{k}{rnd}', rate, rate)
                half = b.relay_run(db, sink, f'half{k}{rnd}', rate / 2.5, rate / 2.5)
                stats1 = b.psql(db, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'outbox_events'")
                b.stop_service(svc)
                b.drop_db(db)
                out.append({'jar': k, 'round': rnd, 'sink': sink, 'wrk': wrk, 'open': opn, 'half': half, 'upd': [stats0, stats1]})
                json.dump(out, open(os.path.join(B.ROOT, 'target', 'relay-ab.json'), 'w'), default=str)
    receiver.close()
    pg.append(b.pgbench(pgdb, "callback.sql", 20))
finally:
    for p in list(b.procs):
        p.terminate()
    for db in list(b.dbs):
        b.drop_db(db)
json.dump({'runs': out, 'pgbench': pg}, open(os.path.join(B.ROOT, 'target', 'relay-ab.json'), 'w'), default=str)
tps = max(p['tps'] for p in pg)
print(f"pgbench callback.sql: {[round(p['tps']) for p in pg]} tps")
print("| jar | sink | round | wrk closed 256 /s | ratio | lag p99 s | backlog peak | CPU us/cb svc/wrk/pg | open /s | p50 | p99 | p99.9 | lag p99 | CPU us/cb svc/replay/pg | updates (HOT) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in out:
    w, o = r['wrk'], r['open']
    def cpu(x, n):
        c = x['cpu']
        return "/".join(f"{(c.get(k) or 0) * 1e6 / max(n, 1):.0f}" for k in ('service', 'client', 'postgres'))
    nw = w['throughputPerSecond'] * w['seconds']
    no = o['throughputPerSecond'] * float(o['seconds'])
    u0, u1 = [list(map(int, s.split('|'))) for s in r['upd']]
    print(f"| {r['jar']} | {r['sink']} | {r['round']} | {w['throughputPerSecond']:,.0f} | {w['throughputPerSecond'] / tps:.2f} | "
          f"{w['relay']['lagP99']:.2f} | {w['relay']['pendingMax']:,} | {cpu(w, nw)} | {o['throughputPerSecond']:,.0f} | "
          f"{o['latencyMs']['p50']} | {o['latencyMs']['p99']} | {o['latencyMs'].get('p99.9')} | {o['relay']['lagP99']:.2f} | {cpu(o, no)} | "
          f"{u1[0] - u0[0]:,} ({u1[1] - u0[1]:,}) |")
print()
print("| jar | sink | round | open /s | p50 ms | p99 ms | p99.9 ms | lag p99 s | backlog peak |")
print("|---|---|---|---|---|---|---|---|---|")
for r in out:
    h = r['half']
    print(f"| {r['jar']} | {r['sink']} | {r['round']} | {h['throughputPerSecond']:,.0f} | {h['latencyMs']['p50']} | {h['latencyMs']['p99']} | "
          f"{h['latencyMs'].get('p99.9')} | {h['relay']['lagP99']:.2f} | {h['relay']['pendingMax']:,} |")
