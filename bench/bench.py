#!/usr/bin/env python3
"""ordergate benchmarks against the physical limit (issue 6). Run through scripts/bench.

Six measurements in one invocation, on one PostgreSQL server (scratch databases, dropped at the
end), with the real service (target/ordergate.jar, the JVM flags of scripts/run) as a separate
process. Prints a markdown table and writes bench/RESULTS.md. the README, section Benchmarks explains each row.
"""
import argparse
import bisect
import collections
import datetime
import glob
import hashlib
import hmac
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
JAR = os.path.join(ROOT, "target", "ordergate.jar")
ADMIN_TOKEN = "bench-admin-token-0123456789"
CHANNEL = "sandbox"
# The sandbox channel of each wire format in conf/config.json (issue 9).
FORMAT_CHANNELS = {"ordergate": CHANNEL, "wechatpay-v3": "sandbox-wechatpay", "alipay": "sandbox-alipay",
                   "stripe": "sandbox-stripe"}

# name: (full, quick)
SIZES = {
    "pgbench_seconds": (20, 3),
    "pgbench_warmup_seconds": (5, 1),
    "pgbench_rounds": (2, 1),         # pgbench before and after the service, side by side
    "service_seconds": (20, 3),       # target length of each closed-loop run
    "service_warmup": (30000, 3000),
    # After service_warmup, more warm-up rounds of warm_round_seconds each while the service's JIT compiler threads
    # used more than warm_jit_cores of a CPU in the last one (at most warm_rounds_max): issue 13 found C2 still
    # compiling through the first minute of load, 0.24 of a CPU in the first 20 s run after the 30,000 callbacks.
    "warm_round_seconds": (10, 2),
    "warm_rounds_max": (8, 0),
    "client_warmup": (5000, 500),     # per replay run: warms the load generator's JVM, not counted  # callbacks sent before the measured runs
    "open_seconds": (20, 3),
    "latency_repeats": (3, 1),        # open loops per latency row (2, 2b, 2c): the row reports the median p99
    "sweep_orders": (100000, 10000),
    "sweep_repeats": (3, 1),
    "claim_pending": ((10000, 1000000), (10000, 100000)),
    "claim_repeats": (20, 6),   # per round; 5 alternating rounds
    "late_orders": (20000, 2000),
    "late_spread_seconds": (20, 5),
    "relay_seconds": (20, 3),         # each relay-on run
    "relay_probes": (2, 1),           # open-loop probes for the rate the relay keeps up with, per sink
    "steady_seconds": (60, 8),        # the retention run: outbox size over time
    # issue 12, trigger tiers (ordergate trigger-bench)
    "trig_orders": (20000, 1000),
    "trig_spread_seconds": (20, 3),
    "trig_fallback_ms": (300000, 5000),
    "trig_noise_keys": (200000, 5000),
}

# The bench's own probes of the outbox (the sampler's backlog, the drain, the backlog at a load's end) run with
# jit = off, as the service's connections do. The pending view's walks run with sequential scans and sorts off
# (V14, V18), which puts a plan's estimated cost past jit_above_cost: with jit on, every sample of the backlog
# compiled its plan, 0.5 s of a backend's CPU at a backlog of 20,000 against 35 ms without (issue 13), taken
# from the service and PostgreSQL a relay-on run measures and counted in its PostgreSQL column.
NO_JIT = dict(os.environ, PGOPTIONS=(os.environ.get("PGOPTIONS", "") + " -c jit=off").strip())

# The bench's webhook receiver takes batches (outbox.sinks.<TYPE>.batchMax): the configuration a user with
# a receiver that allows it runs.
WEBHOOK_BATCH = 100

# A warm-up round whose service JIT compiler threads used less than this share of a CPU ends the warm-up.
WARM_JIT_CORES = 0.05

TARGETS = {
    "relay_lag_p99_s": 1.0,
    "callbacks": 2.0, "p99_half_ms": 20.0, "sweep_ratio": 1.5, "claim_ratio": 1.5,
    "late_p99_s": 1.5, "rss_mb": 400.0,
}


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.size = {k: v[1 if args.quick else 0] for k, v in SIZES.items()}
        self.server = urllib.parse.urlsplit(args.db_url)
        self.tag = f"bench_{os.getpid()}"
        self.dbs = []
        self.procs = []
        self.tmp = tempfile.mkdtemp(prefix="ordergate-bench-")
        self.jvm_opts = jvm_opts_of_scripts_run()
        self.tool_opts = jvm_opts_of_scripts_replay()
        self.replay_jar = os.environ.get("BENCH_REPLAY_JAR", JAR)
        self.results = {}
        self.loads = []
        self.overrides = [parse_override(o) for o in (args.set or [])]
        self.wal_per_callback = 0.0   # the highest WAL bytes per callback a run measured (wal_reserve)
        self.reserve = None           # what the last settle left ahead (wal_of)
        self.segment = None           # wal_segment_size in bytes, read once (0: it could not be read)

    # ---- database -----------------------------------------------------------------------------

    def url(self, db):
        s = self.server
        return urllib.parse.urlunsplit((s.scheme, s.netloc, "/" + db, s.query, ""))

    def psql(self, db, sql=None, file=None, variables=None, check=True, jit=True):
        """jit=False: the bench's own probes of the outbox (NO_JIT)."""
        cmd = ["psql", self.url(db), "-X", "-v", "ON_ERROR_STOP=1", "-Atq"]
        for k, v in (variables or {}).items():
            cmd += ["-v", f"{k}={v}"]
        cmd += ["-c", sql] if sql is not None else ["-f", file]
        r = subprocess.run(cmd, capture_output=True, text=True, env=None if jit else NO_JIT)
        if check and r.returncode != 0:
            raise RuntimeError(f"psql on {db} failed: {r.stderr.strip()}\n{(sql or file)[:300]}")
        return r.stdout.strip()

    def create_db(self, name, template=None):
        db = f"{self.tag}_{name}"
        self.psql("postgres", f'DROP DATABASE IF EXISTS "{db}"')
        self.psql("postgres", f'CREATE DATABASE "{db}"' + (f' TEMPLATE "{template}"' if template else ""))
        self.dbs.append(db)
        return db

    def drop_db(self, db):
        self.psql("postgres", f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)', check=False)
        if db in self.dbs:
            self.dbs.remove(db)

    # ---- the service --------------------------------------------------------------------------

    def start_service(self, db, name, sweep=None, outbox=None):
        port = free_port()
        with open(os.path.join(ROOT, "conf", "config.json")) as f:
            conf = json.load(f)
        conf["http"]["port"] = port
        conf["admin"]["token"] = ADMIN_TOKEN
        # A local bench: the shipped development channel and API key stay usable with a db.url.
        conf["mode"] = "dev"
        conf["management"] = {"host": "127.0.0.1", "port": 0}
        # Delivery of outbox events is a separate consumer (measured in docs/outbox-NOTE.md); the
        # events are still written by the gate and the sweep in their transactions.
        conf["outbox"]["enabled"] = False
        conf["sweep"].update({"enabled": False, "configScanMs": 0})
        conf["sweep"].update(sweep or {})
        conf["outbox"].update(outbox or {})
        for key, value in self.overrides:
            node = conf
            *parents, leaf = key.split(".")
            for k in parents:
                node = node.setdefault(k, {})
            node[leaf] = value
        path = os.path.join(self.tmp, f"{name}.json")
        with open(path, "w") as f:
            json.dump(conf, f)
        env = dict(os.environ, ORDERGATE_DB_URL=self.url(db), ORDERGATE_CONF=path,
                   ORDERGATE_HTTP_PORT=str(port), ORDERGATE_ADMIN_TOKEN=ADMIN_TOKEN)
        out = open(os.path.join(self.tmp, f"{name}.log"), "w")
        # The JVM's pauses, with wall-clock times, for the tail profile of the latency runs (TailProfile).
        gc_log = os.path.join(self.tmp, f"{name}.gc.log")
        p = subprocess.Popen(["java", *self.jvm_opts, f"-Xlog:safepoint:file={gc_log}:time", "-jar", JAR], cwd=ROOT,
                             env=env, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(p)
        svc = Service(p, port, os.path.join(self.tmp, f"{name}.log"), gc_log)
        deadline = time.time() + 120
        while time.time() < deadline:
            if p.poll() is not None:
                raise RuntimeError(f"service exited ({p.returncode}); log: {tail(svc.log)}")
            if http("GET", svc.base + "/health/ready", timeout=2)[0] == 200:
                return svc
            time.sleep(0.2)
        raise RuntimeError(f"service not ready after 120 s; log: {tail(svc.log)}")

    def stop_service(self, svc):
        if svc.proc.poll() is None:
            svc.proc.send_signal(signal.SIGTERM)
            try:
                svc.proc.wait(30)
            except subprocess.TimeoutExpired:
                svc.proc.kill()
                svc.proc.wait()
        if svc.proc in self.procs:
            self.procs.remove(svc.proc)

    # ---- the run -------------------------------------------------------------------------------

    def run(self):
        t0 = time.time()
        self.loads.append(os.getloadavg()[0])
        log(f"scratch databases {self.tag}_* on {self.server.hostname}:{self.server.port or 5432}; "
            f"service JVM flags: {' '.join(self.jvm_opts)}")
        check_replay(self.replay_jar)
        self.tpl = self.create_db("tpl")
        svc = self.start_service(self.tpl, "migrate")   # Flyway migrates the template
        self.stop_service(svc)
        self.facts = machine_facts(self)
        self.item_callbacks()
        self.item_relay()
        self.item_sweep()
        self.item_claim()
        self.item_lateness()
        self.item_triggers()
        self.loads.append(os.getloadavg()[0])
        self.elapsed = time.time() - t0
        # The raw figures, to read again without a 20-minute rerun (JSON: the runs' integer keys become strings).
        os.makedirs(os.path.join(ROOT, "target"), exist_ok=True)
        with open(os.path.join(ROOT, "target", "bench-results.json"), "w") as f:
            json.dump(self.results, f, default=str)
        return self.report()

    # ---- 1, 2, 6: callbacks --------------------------------------------------------------------

    def item_callbacks(self):
        z = self.size
        db = self.create_db("cb", template=self.tpl)
        self.psql(db, file=os.path.join(ROOT, "scripts", "pgbench", "setup.sql"), variables={"count": 0})
        self.pgb_next = 1
        svc = self.start_service(db, "callbacks")
        self.cb_svc = svc
        pg = {"callback.sql": [], "callback-full.sql": []}

        def pgbench_round():
            for script in pg:
                pg[script].append(self.pgbench(db, script, z["pgbench_seconds"]))

        log("pgbench warm-up")
        self.pgbench(db, "callback.sql", z["pgbench_warmup_seconds"])
        pgbench_round()
        log("service warm-up (closed loop, 64 connections)")
        warm = self.warm_up(db, "warm")
        rate = max(warm["throughputPerSecond"], 500)
        closed = {}
        for c in (64, 256):
            n = int(rate * z["service_seconds"] * 1.4)
            log(f"service closed loop, {c} connections, {n} callbacks")
            closed[c] = self.replay(db, f"c{c}", n, connections=c)
            rate = max(closed[c]["throughputPerSecond"], 500)
        wrk_runs = {}
        if shutil.which("wrk"):
            est = max(closed[64]["throughputPerSecond"], closed[256]["throughputPerSecond"], 2000) * 2
            for c in (64, 256):
                n = int(est * z["service_seconds"] * 1.2)
                log(f"service closed loop through wrk (pre-signed), {c} connections, up to {n} callbacks")
                wrk_runs[c] = self.wrk(db, f"w{c}", n, c, z["service_seconds"])
        else:
            log("wrk is not installed: the wrk rows are skipped (apt-get install wrk)")
        formats = {"ordergate": closed[64]}
        for fmt in ("wechatpay-v3", "alipay", "stripe"):
            n = int(max(closed[64]["throughputPerSecond"] / 2, 500) * z["service_seconds"] * 1.4)
            log(f"service closed loop, 64 connections, {n} callbacks in the {fmt} wire format")
            formats[fmt] = self.replay(db, "f" + fmt.replace("-", ""), n, connections=64, fmt=fmt)
        rss_closed = svc.memory()
        if z["pgbench_rounds"] > 1:
            pgbench_round()
        best = max(closed[64]["throughputPerSecond"], closed[256]["throughputPerSecond"])
        half = best / 2
        n = int(half * z["open_seconds"])
        log(f"service open loop at {half:.0f}/s, {n} callbacks")
        self.settle(db, n)
        open_loop = self.replay(db, "open", n, connections=256, rate=half)
        log(f"service open loop at {half:.0f}/s through bench/openloop.py, {n} callbacks, {z['latency_repeats']} times")
        open_runs = []
        for i in range(z["latency_repeats"]):
            signed = self.settled_callbacks(db, f"openpy{i}", n)
            open_runs.append(self.openloop(db, f"openpy{i}", n, half, signed=signed))
        open_py = median_run(open_runs)
        rss_all = svc.memory()
        self.stop_service(svc)
        self.results["callbacks"] = {"pgbench": pg, "closed": closed, "open": open_py, "openRuns": open_runs,
                                     "openReplay": open_loop,
                                     "openRate": half,
                                     "rssClosed": rss_closed, "rssAll": rss_all, "warm": warm, "wrk": wrk_runs,
                                     "formats": formats}
        self.drop_db(db)

    def pgbench(self, db, script, seconds):
        """Runs one pgbench script for `seconds`; ensures enough fresh pending orders first."""
        need = int(max(getattr(self, "pgb_best", 0), 8000) * seconds * 1.5) + 1000
        self.psql(db, f"""INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
            SELECT 'PGB-' || g, 'bench', 'PENDING_PAYMENT', 100, 'pgbench', now() + interval '1 day'
            FROM generate_series({self.pgb_next}, {self.pgb_next + need - 1}) g""")
        self.psql(db, "VACUUM ANALYZE orders")
        self.pgb_next += need
        logdir = tempfile.mkdtemp(dir=self.tmp, prefix="pgbench-")
        cmd = ["pgbench", "-n", "-M", "prepared", "-c", "16", "-j", "2", "-T", str(seconds), "-l",
               "--log-prefix", os.path.join(logdir, "tx"), "-f", os.path.join(ROOT, "scripts", "pgbench", script),
               self.url(db)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=logdir)
        with CpuMeter(self, db, None, p.pid) as meter:
            stdout, stderr = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"pgbench failed: {stderr.strip()}")
        r = subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr)
        m = re.search(r"tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)",
                      r.stdout)
        tps = float(m.group(1))
        lat = []
        for f in glob.glob(os.path.join(logdir, "tx*")):
            with open(f) as fh:
                lat += [int(line.split()[2]) for line in fh if line.strip()]
        shutil.rmtree(logdir, ignore_errors=True)
        seq = int(self.psql(db, "SELECT last_value FROM bench_seq"))
        if seq >= self.pgb_next:
            raise RuntimeError("pgbench ran out of pending orders; raise the margin")
        self.pgb_best = max(getattr(self, "pgb_best", 0), tps)
        lat.sort()
        res = {"script": script, "tps": tps, "seconds": seconds, "transactions": len(lat),
               "p50": pct(lat, 50) / 1000, "p99": pct(lat, 99) / 1000, "cpu": meter.seconds()}
        log(f"pgbench {script}: {tps:.0f} tps, p50 {res['p50']:.1f} ms, p99 {res['p99']:.1f} ms")
        return res

    def replay(self, db, name, n, connections, rate=0, warmup=None, fmt="ordergate"):
        """n fresh pending orders (inserted directly) and one SUCCESS callback each, replayed after
        `warmup` more (closed loop, outside the figures) that warm the load generator's own JVM.
        `fmt` other than ordergate: each callback in that gateway's wire format, to its sandbox channel
        (built and signed by the load generator before its clock starts)."""
        channel = FORMAT_CHANNELS[fmt]
        warmup = self.size["client_warmup"] if warmup is None else warmup
        prefix = f"B{name}-"
        n_measured, n = n, n + warmup
        self.psql(db, f"""INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
            SELECT '{prefix}' || g, 'bench', 'PENDING_PAYMENT', 1000, 'bench', now() + interval '1 day'
            FROM generate_series(1, {n}) g""")
        self.psql(db, "VACUUM ANALYZE orders")
        path = os.path.join(self.tmp, f"{name}.jsonl")
        with open(path, "w") as f:
            for i in range(1, n + 1):
                line = {"offsetMs": 0, "channel": channel, "body": {
                    "txnId": f"T{prefix}{i}", "orderNo": f"{prefix}{i}", "amountCents": 1000, "status": "SUCCESS"}}
                if fmt != "ordergate":
                    line["format"] = fmt
                f.write(json.dumps(line, separators=(",", ":")) + "\n")
        report = os.path.join(self.tmp, f"{name}.report.json")
        # Gateway formats: the load generator signs every notification with RSA before its clock starts;
        # C1-only code makes that minutes long, so those runs keep the JVM's full JIT.
        opts = self.tool_opts if fmt == "ordergate" else [o for o in self.tool_opts if "TieredStopAtLevel" not in o]
        cmd = ["java", *opts, "-jar", self.replay_jar, "replay", "run", "--file", path, "--url", self.cb_svc.base,
               "--connections", str(connections), "--channel", channel, "--report", report]
        if fmt == "ordergate":
            cmd += ["--secret", secret_of_channel()]
        else:
            cmd += ["--sim-config", os.path.join(ROOT, "conf", "sandbox", "gateway-sim.json")]
        if rate:
            cmd += ["--rate", f"{rate:.1f}"]
        if warmup:
            cmd += ["--warmup", str(warmup)]
        lsn0 = self.wal_lsn(db)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.tmp)
        with CpuMeter(self, db, self.cb_svc.proc.pid, p.pid) as meter:
            stdout, stderr = p.communicate()
        r = subprocess.CompletedProcess(cmd, p.returncode, stdout, stderr)
        if r.returncode == 2 or not os.path.exists(report):
            raise RuntimeError(f"replay failed ({r.returncode}): {r.stdout[-2000:]} {r.stderr[-2000:]}")
        with open(report) as f:
            res = json.load(f)
        res["cpu"] = meter.seconds()
        self.wal_of(db, res, lsn0, n)
        if res["cpu"].get("client") is not None and res.get("prebuildCpuSeconds"):
            # The notifications were built before the run: not part of sending them.
            res["cpu"]["client"] = max(0.0, res["cpu"]["client"] - res["prebuildCpuSeconds"])
        applied = res.get("outcomes", {}).get("APPLIED", 0)
        res["applied"] = applied
        res["ok"] = r.returncode == 0 and applied == n_measured
        log(f"replay {name}: {res['throughputPerSecond']:.0f}/s over {res['seconds']} s, "
            f"p50 {res['latencyMs']['p50']} ms, p99 {res['latencyMs']['p99']} ms, applied {applied}/{n_measured}"
            + ("" if res["ok"] else f" NOT ALL OK: status {res.get('status')} errors {res.get('errors')}"
                                    f" {' | '.join(l for l in r.stderr.splitlines() if l.startswith('replay:'))[:600]}"))
        os.remove(path)
        return res

    def warm_up(self, db, name):
        """The service's warm-up: service_warmup callbacks closed loop (64 connections), then rounds of
        warm_round_seconds while the last one's JIT compiler threads used more than WARM_JIT_CORES of a CPU (at most
        warm_rounds_max): the runs that follow measure the service users run, long started, not its compiler.
        Answers the last round, with every round's rate and JIT share under "rounds"."""
        z = self.size
        r = self.replay(db, name, z["service_warmup"], connections=64, warmup=0)
        rounds = [r]
        while jit_cores(r) > WARM_JIT_CORES and len(rounds) <= z["warm_rounds_max"]:
            r = self.replay(db, f"{name}{len(rounds)}", int(max(r["throughputPerSecond"], 500) * z["warm_round_seconds"]),
                            connections=64, warmup=0)
            rounds.append(r)
        r["rounds"] = [{"rate": x["throughputPerSecond"], "seconds": x["seconds"], "jitCores": round(jit_cores(x), 3)}
                       for x in rounds]
        log(f"warm-up {name}: JIT compiler threads per round, in CPUs: "
            + ", ".join(f"{x['jitCores']:.2f}" for x in r["rounds"]))
        return r

    def signed_callbacks(self, db, name, n):
        """n fresh pending orders (inserted directly) and a file of one pre-signed SUCCESS callback each,
        "<X-Ordergate-Signature>\t<body>" a line (HMAC-SHA256 over "<t>.<channel>.<body>", the ordergate v2
        signature), for wrk and bench/openloop.py. Answers (path, order number prefix)."""
        prefix = f"B{name}-"
        self.psql(db, f"""INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
            SELECT '{prefix}' || g, 'bench', 'PENDING_PAYMENT', 1000, 'bench', now() + interval '1 day'
            FROM generate_series(1, {n}) g""")
        self.psql(db, "VACUUM ANALYZE orders")
        path = os.path.join(self.tmp, f"{name}.tsv")
        secret = secret_of_channel().encode()
        t = int(time.time())
        with open(path, "w") as f:
            for i in range(1, n + 1):
                body = json.dumps({"txnId": f"T{prefix}{i}", "orderNo": f"{prefix}{i}", "amountCents": 1000,
                                   "status": "SUCCESS"}, separators=(",", ":"))
                sig = hmac.new(secret, f"{t}.{CHANNEL}.{body}".encode(), hashlib.sha256).hexdigest()
                f.write(f"t={t},v2={sig}\t{body}\n")
        return path, prefix

    def settled_callbacks(self, db, name, n):
        """signed_callbacks(), then settle(): the run's pending orders' WAL and dead tuples come before the settle's
        VACUUM and CHECKPOINT instead of after them (issue 13: their WAL, added to the run's, had a checkpoint
        requested by WAL volume start in the run's last seconds or in the next settle by a segment either way)."""
        signed = self.signed_callbacks(db, name, n)
        self.settle(db, n)
        return signed

    def openloop(self, db, name, n, rate, connections=256, signed=None):
        """n callbacks open loop at `rate` through bench/openloop.py (pre-signed, one Python thread: a tenth of
        the replay JVM's CPU per callback, which on this 2-core machine otherwise competes with the service);
        latency from when each was due. The same report fields as replay(). `signed`: the callbacks of
        settled_callbacks() (else they are made here)."""
        path, prefix = signed or self.signed_callbacks(db, name, n)
        report = os.path.join(self.tmp, f"{name}.openloop.json")
        cmd = [sys.executable, os.path.join(ROOT, "bench", "openloop.py"), "--url", self.cb_svc.base,
               "--path", f"/api/callbacks/{CHANNEL}", "--file", path, "--rate", f"{rate:.1f}",
               "--connections", str(connections), "--report", report]
        series = os.path.join(self.tmp, f"{name}.series.tsv")
        cmd += ["--series", series]
        lsn0 = self.wal_lsn(db)
        ckpt0 = self.checkpoints(db)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.tmp)
        with CpuMeter(self, db, self.cb_svc.proc.pid, p.pid) as meter, TailProfile(self, db, self.cb_svc.proc.pid) as profile:
            stdout, stderr = p.communicate()
        ckpt1 = self.checkpoints(db)
        if not os.path.exists(report):
            raise RuntimeError(f"openloop failed ({p.returncode}): {stdout[-1000:]} {stderr[-2000:]}")
        with open(report) as f:
            res = json.load(f)
        res["cpu"] = meter.seconds()
        res["profile"] = profile.summary(res, series, self.cb_svc.gc_log)
        if res["profile"] and ckpt0 and ckpt1:
            res["profile"]["checkpoints"] = {"timed": ckpt1[0] - ckpt0[0], "requested": ckpt1[1] - ckpt0[1]}
        if os.path.exists(series):
            os.remove(series)
        self.wal_of(db, res, lsn0, n)
        res["applied"] = res.get("outcomes", {}).get("APPLIED", 0)
        res["ok"] = p.returncode == 0 and res["applied"] == n
        log(f"openloop {name}: {res['throughputPerSecond']:.0f}/s (asked {rate:.0f}/s), p50 {res['latencyMs']['p50']} ms, "
            f"p99 {res['latencyMs']['p99']} ms, p99.9 {res['latencyMs']['p99.9']} ms, applied {res['applied']}/{n}"
            + (f", WAL {res['wal']['bytesPerCallback']} B per callback, {res['wal']['segmentsUsed']} segments used, "
               f"{res['wal'].get('segmentsAhead')} were ahead" if res.get("wal") else "")
            + ("" if res["ok"] else f" NOT ALL OK: statuses {res.get('statuses')} {stderr[-300:]}"))
        os.remove(path)
        return res

    def wrk(self, db, name, n, connections, seconds):
        """The same callbacks through wrk (a C client, far cheaper per request than the JVM replay
        tool), from signed_callbacks(), sent closed loop by bench/wrk-callbacks.lua for `seconds`."""
        path, prefix = self.signed_callbacks(db, name, n)
        cmd = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s",
               os.path.join(ROOT, "bench", "wrk-callbacks.lua"), self.cb_svc.base, "--", path, CHANNEL, "2"]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.tmp)
        with CpuMeter(self, db, self.cb_svc.proc.pid, p.pid) as meter:
            stdout, stderr = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"wrk failed: {stderr}")
        total = int(re.search(r"(\d+) requests in", stdout).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", stdout).group(1))
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", stdout)
        lat = {}
        for q, v, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", stdout, re.M):
            lat[q] = float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
        paid = int(self.psql(db, f"SELECT count(*) FROM orders WHERE order_no LIKE '{prefix}%' AND status = 'PAID'"))
        res = {"throughputPerSecond": rps, "requests": total, "paid": paid, "non2xx": int(bad.group(1)) if bad else 0,
               "p50": lat.get("50"), "p99": lat.get("99"), "seconds": seconds, "cpu": meter.seconds()}
        # wrk stops at its deadline with requests in flight that the service still completes: paid >= total
        res["ok"] = res["non2xx"] == 0 and paid >= min(total, n) and paid > 0
        log(f"wrk {name}: {rps:.0f}/s, p50 {res['p50']} ms, p99 {res['p99']} ms, {total} requests, {paid} paid"
            + ("" if total <= n else f" ({total - n} were repeats: answered as duplicates)"))
        os.remove(path)
        return res

    # ---- 1b, 2b, 3b: callbacks with the outbox relay on (issue 13) -------------------------------

    def item_relay(self):
        """The configuration users run: the relay on, delivering to the log sink and to a real HTTP
        receiver on loopback. Per sink: the closed-loop maximum with the relay's lag, then an open loop
        at half the relay-off maximum (the latency target's rate) with lag and backlog; last, a steady
        run with a short retention, sampling the outbox table's size (bounded, flat)."""
        z = self.size
        receiver = self.receiver = SinkReceiver()
        half = self.results["callbacks"]["openRate"]
        out = {}
        try:
            for sink in os.environ.get("BENCH_RELAY_SINKS", "log,webhook").split(","):
                db = self.create_db(f"relay_{sink}", template=self.tpl)
                outbox = {"enabled": True, "retentionHours": 1}
                if sink == "webhook":
                    outbox["sinks"] = {t: {"url": receiver.url + "/" + t, "batchMax": WEBHOOK_BATCH}
                                       for t in ("ORDER_PAID", "NOTIFY_SMS", "ORDER_CANCELLED")}
                svc = self.start_service(db, f"relay-{sink}", outbox=outbox)
                self.cb_svc = svc
                res = {"warm": self.warm_up(db, f"rw{sink}")}
                self.wait_drained(db, 60)
                best_off = max(r["throughputPerSecond"] for r in self.results["callbacks"]["closed"].values())
                for mode, rate in (("closed", 0), ("open", half)):
                    res[mode] = self.relay_run(db, sink, mode, rate or best_off, rate)
                # The rate the relay keeps up with: open-loop probes around half the relay-off maximum; the
                # highest that keeps the lag p99 (undelivered events counted at their wait) under the target.
                probes = [res["open"]]
                fractions = (0.75, 1.0) if self.keeps_up(res["open"]) else (0.35, 0.2)
                for f in fractions[:z["relay_probes"]]:
                    r = self.relay_run(db, sink, f"probe{int(f * 100)}", best_off * f, best_off * f)
                    probes.append(r)
                    if self.keeps_up(r) != self.keeps_up(res["open"]):
                        break
                res["closed"]["runName"] = "closed loop 256 (replay tool)"
                closed_runs = [res["closed"]]
                if shutil.which("wrk"):
                    # The same closed loop through wrk: a C client at a fifth of the replay tool's CPU per
                    # request, which on this 2-core machine leaves that CPU to the service and PostgreSQL.
                    res["wrk"] = self.relay_run(db, sink, "wrk", best_off * 1.5, 0, wrk=True)
                    res["wrk"]["runName"] = "closed loop 256 through wrk"
                    closed_runs.append(res["wrk"])
                for r in probes:
                    r["runName"] = f"open loop at {r['rate']:,.0f}/s, bench/openloop.py"
                # Rows 1b/1c: the highest rate of any run (open-loop probe or closed loop) at which the relay kept up.
                kept = [r for r in probes + closed_runs if self.keeps_up(r)]
                res["probes"] = [{"rate": r["rate"], "achieved": r["throughputPerSecond"], "lagP99": r["relay"]["lagP99"],
                                  "pendingEnd": r["relay"]["pendingAtLoadEnd"], "p99": r["latencyMs"]["p99"]} for r in probes]
                res["runs"] = probes
                res["sustained"] = max(kept, key=lambda r: r["throughputPerSecond"]) if kept else None
                if res["sustained"]:
                    # Target 2 as issue 13 words it: an open loop at half the rate target 1 measured (the relay on
                    # and keeping up). The open loop at half the relay-off maximum above stays beside it.
                    rate2 = res["sustained"]["throughputPerSecond"] / 2
                    res["halfRuns"] = [self.relay_run(db, sink, f"half{i}", rate2, rate2)
                                       for i in range(z["latency_repeats"])]
                    for i, r in enumerate(res["halfRuns"]):
                        r["runName"] = f"open loop {i + 1} at {rate2:,.0f}/s (half of 1{'b' if sink == 'log' else 'c'})"
                    res["half"] = median_run(res["halfRuns"])
                # Row 6 with the relay on: the service's peak over every run above (VmHWM).
                res["rss"] = svc.memory()
                self.stop_service(svc)
                self.drop_db(db)
                out[sink] = res
            out["steady"] = self.steady_outbox(half)
        finally:
            receiver.close()
        out["receiverRequests"] = receiver.count
        out["receiverEvents"] = receiver.events
        self.results["relay"] = out

    def relay_run(self, db, sink, mode, expected_rate, rate, wrk=False):
        """One relay-on replay (rate 0: closed loop; wrk: a closed loop through wrk instead), then the drain;
        the lag is over every event created in the run, an undelivered one counted at its wait so far (a relay
        that falls behind shows it)."""
        z = self.size
        n = int(expected_rate * z["relay_seconds"])
        signed = None
        if rate and not wrk:
            signed = self.settled_callbacks(db, f"r{sink}{mode}", n)
        t0 = self.psql(db, "SELECT now()")
        receiver = getattr(self, "receiver", None) if sink == "webhook" else None
        before = receiver.totals() if receiver else None
        with OutboxSampler(self, db) as sampler:
            if wrk:
                r = self.wrk(db, f"r{sink}{mode}", int(max(expected_rate, 2000) * z["relay_seconds"] * 1.5), 256,
                             z["relay_seconds"])
                r["latencyMs"] = {"p50": r["p50"], "p99": r["p99"], "p99.9": None}
            elif rate:
                r = self.openloop(db, f"r{sink}{mode}", n, rate, signed=signed)
            else:
                r = self.replay(db, f"r{sink}{mode}", n, connections=256)
            at_end = int(self.psql(db, "SELECT count(*) FROM outbox_pending", jit=False))
            drained = self.wait_drained(db, 60)
        if receiver:
            # Read after the drain: the receiver's work for every event the run created.
            r["receiver"] = dict(zip(("cpu", "posts", "events"), (b - a for a, b in zip(before, receiver.totals()))))
        # V18: a STREAM event's delivery time is its cursor mark's, shown by outbox_events_shown (older jars: the table).
        events = "outbox_events_shown" if self.psql(db, "SELECT to_regclass('outbox_events_shown') IS NOT NULL") == "t" \
            else "outbox_events"
        lag = self.psql(db, f"""SELECT count(*), count(delivered_at),
            percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM coalesce(delivered_at, now()) - created_at)),
            percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM coalesce(delivered_at, now()) - created_at)),
            max(extract(epoch FROM coalesce(delivered_at, now()) - created_at))
            FROM {events} WHERE created_at >= '{t0}' AND type <> 'REFUND_REQUESTED'""").split("|")
        r["rate"] = rate
        r["relay"] = {"created": int(lag[0]), "delivered": int(lag[1]), "lagP50": float(lag[2] or 0),
                      "lagP99": float(lag[3] or 0), "lagMax": float(lag[4] or 0), "pendingMax": sampler.max_pending,
                      "pendingEnd": sampler.last_pending, "pendingAtLoadEnd": at_end, "drainSeconds": drained}
        log(f"relay {sink} {mode}: {r['throughputPerSecond']:.0f} callbacks/s (asked {rate or 'closed loop'}), "
            f"lag p99 {r['relay']['lagP99']:.3f} s, pending max {sampler.max_pending}, at the load's end {at_end}, "
            f"drained in {drained:.1f} s")
        return r

    @staticmethod
    def keeps_up(r):
        return r["relay"]["lagP99"] <= TARGETS["relay_lag_p99_s"] and r["relay"]["delivered"] == r["relay"]["created"]

    def checkpoints(self, db):
        """The server's (timed, requested) checkpoint counts so far (pg_stat_bgwriter), or None. Requested ones are
        the bench's CHECKPOINT and those WAL volume asks for (max_wal_size)."""
        out = self.psql(db, "SELECT checkpoints_timed || ',' || checkpoints_req FROM pg_stat_bgwriter", check=False)
        return tuple(int(x) for x in out.split(",")) if re.fullmatch(r"\d+,\d+", out) else None

    def settle(self, db, callbacks=0):
        """Before an open loop (the latency rows): VACUUM (ANALYZE), the WAL reserve for `callbacks` callbacks
        (wal_reserve) and a CHECKPOINT, untimed. The closed loops and overload probes before it leave autovacuum and
        checkpoint work behind them (hundreds of thousands of updated rows, a checkpoint forced by WAL volume) that
        would otherwise land in the next run: after a closed loop of 140,000 callbacks at 8,000/s, an open loop at
        3,400/s measured p99 64 ms unsettled and 24 ms settled (issue 13). What the run itself leaves for
        autovacuum still lands in it."""
        t = time.time()
        self.psql(db, "VACUUM (ANALYZE)")
        switched = self.wal_reserve(db, callbacks) if callbacks else 0
        # CHECKPOINT needs superuser or pg_checkpoint; on a server where the bench has neither, only the VACUUM runs.
        # It also recycles the segments wal_reserve switched through into segments ahead of the insert position.
        self.psql(db, "CHECKPOINT", check=False)
        self.reserve = {"segmentsAhead": self.wal_ahead(db), "segmentsSwitched": switched}
        log(f"settled {db} in {time.time() - t:.1f} s (VACUUM ANALYZE, CHECKPOINT"
            + (f"; WAL segments ahead {self.reserve['segmentsAhead']}, {switched} switched" if callbacks else "") + ")")

    # ---- PostgreSQL's WAL reserve (issue 13) ---------------------------------------------------------

    def same_device_as_data(self, folder):
        """Whether `folder` is on the file system of the server's data directory (True / False), or None where the
        bench cannot tell (a remote server, or no right to read data_directory). Asked once."""
        if not hasattr(self, "_data_device"):
            data = self.psql("postgres", "SHOW data_directory", check=False)
            try:
                self._data_device = os.stat(data).st_dev if data.startswith("/") else None
            except OSError:
                self._data_device = None
        return None if self._data_device is None else os.stat(folder).st_dev == self._data_device

    def wal_ahead(self, db):
        """WAL segment files ahead of the insert position: recycled ones, which the WAL is written into without
        creating a file. None where the bench may not list pg_wal (pg_monitor or superuser)."""
        out = self.psql(db, "SELECT count(*) FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$' "
                            "AND name > pg_walfile_name(pg_current_wal_insert_lsn())", check=False)
        return int(out) if out.isdigit() else None

    def wal_reserve(self, db, callbacks):
        """Gives PostgreSQL recycled WAL segments for the coming run's WAL (1.5 times `callbacks` at the highest WAL
        per callback a run measured so far), as a server under a steady load holds them. A segment the server has to
        create is filled with zeros and synced (wal_init_zero) by the backend that writes into it first, holding
        WALWriteLock: every commit waits, 60 to 85 ms on this machine's disk, once per 16 MB of WAL, about every
        1.8 s at 3,000 callbacks/s. Under a steady load each checkpoint recycles the segments it frees into segments
        ahead, as many as the WAL between checkpoints needs (CheckPointDistanceEstimate, at least min_wal_size), so
        the server rarely creates one; a bench run that writes more WAL than the checkpoints before it did (the
        first run on a fresh server, or after quiet ones: the estimate decays by a tenth per checkpoint) creates
        them, and its p99 is those stalls (issue 13: p99 31 and 16 ms with 6 of 13 segments recycled, 9.6 and
        9.7 ms with all of them, three open loops at 3,000/s each, every window over 20 ms one of IO:WALInitWrite).
        Switching through the missing segments before settle's CHECKPOINT makes the checkpoint recycle them.
        Answers the segments switched (0 where pg_wal cannot be listed or pg_switch_wal is not allowed)."""
        seg = self.wal_segment(db)
        ahead = self.wal_ahead(db)
        if not seg or ahead is None:
            return 0
        need = -(-int(max(self.wal_per_callback, 4096) * callbacks * 1.5) // seg)
        if ahead >= need:
            return 0
        k = need - ahead + 1
        try:
            self.psql(db, ";".join(["SELECT pg_logical_emit_message(false, 'ordergate-bench', ''), pg_switch_wal()"] * k))
        except RuntimeError:
            return 0
        return k

    def wal_segment(self, db):
        """The server's wal_segment_size in bytes, a per-server constant, read once; 0 where it cannot be read."""
        if self.segment is None:
            out = self.psql(db, "SELECT pg_size_bytes(current_setting('wal_segment_size'))", check=False)
            self.segment = int(out) if out.isdigit() else 0
        return self.segment

    def wal_lsn(self, db):
        return self.psql(db, "SELECT pg_current_wal_lsn()", check=False)

    def wal_of(self, db, res, lsn0, n):
        """The run's WAL: bytes per callback (kept, the highest so far, for wal_reserve) and, after a settle, the
        segments it used against the recycled ones it started with."""
        out = self.psql(db, f"SELECT pg_current_wal_lsn() - '{lsn0}'::pg_lsn", check=False) if lsn0 else ""
        seg = self.wal_segment(db)
        if out and seg and n:
            used = int(float(out))
            self.wal_per_callback = max(self.wal_per_callback, used / n)
            res["wal"] = {"bytesPerCallback": round(used / n), "segmentsUsed": round(used / seg, 1),
                          **(self.reserve or {})}
        self.reserve = None

    def wait_drained(self, db, limit):
        """Seconds until no event is pending (at most `limit`)."""
        t = time.time()
        while time.time() - t < limit:
            if int(self.psql(db, "SELECT count(*) FROM outbox_pending", jit=False)) == 0:
                break
            time.sleep(0.2)
        return time.time() - t

    def steady_outbox(self, rate):
        """Open loop at `rate` for steady_seconds with a retention of a tenth of the run: the table's size
        is sampled; it should level off once the retention starts deleting."""
        z = self.size
        db = self.create_db("relay_steady", template=self.tpl)
        secs = z["steady_seconds"]
        svc = self.start_service(db, "relay-steady", outbox={"enabled": True, "retentionHours": secs / 10 / 3600,
                                                              "pruneIntervalMs": 500})
        self.cb_svc = svc
        with OutboxSampler(self, db) as sampler:
            r = self.openloop(db, "steady", int(rate * secs), rate)
        self.stop_service(svc)
        self.drop_db(db)
        sizes = sampler.sizes
        q = [sizes[int(len(sizes) * f)] for f in (0.25, 0.5, 0.75)] + [sizes[-1]] if sizes else [0, 0, 0, 0]
        # Flat is judged on the medians of the third and the last quarter of the samples, not on two single samples: a
        # prune's VACUUM that runs for a second or two under the load lets the table take new pages meanwhile, a step
        # that later inserts fill (a 60 s run here once read 57.4 / 57.4 / 57.1 / 77.3 MB at 25 / 50 / 75 / 100 %,
        # and a rerun of it 42 to 51 MB from its 12th second to its end). A table that keeps growing still fails: grown
        # linearly from the retention's start (a tenth of the run), its last quarter's median is 1.48 times its third
        # quarter's (1.4 times grown from the run's start). The second quarter is too early for the quick run, whose
        # table is still filling then.
        quarter = max(len(sizes) // 4, 1)
        medians = [statistics.median(sizes[2 * quarter:3 * quarter] or sizes) / 1e6,
                   statistics.median(sizes[-quarter:] or sizes) / 1e6] if sizes else [0, 0]
        res = {"rate": rate, "seconds": secs, "achieved": r["throughputPerSecond"], "sizesMb": [x / 1e6 for x in q],
               "quarterMediansMb": medians,
               "pendingMax": sampler.max_pending, "rowsEnd": sampler.last_rows, "p99": r["latencyMs"]["p99"],
               "checkpoints": (r.get("profile") or {}).get("checkpoints")}
        log(f"steady outbox: sizes at 25/50/75/100% {['%.1f' % (x / 1e6) for x in q]} MB, rows at end {sampler.last_rows}")
        return res

    # ---- 3: sweep vs set-based SQL --------------------------------------------------------------

    def item_sweep(self):
        """Row 3, in the configuration users run: the service with the relay on (log sink, as shipped)
        delivering the cancellations' events while it sweeps, against the set-based SQL script, which
        only writes them; the same service with the relay off beside it, each round on fresh copies."""
        z = self.size
        n = z["sweep_orders"]
        src = self.create_db("sweep_src", template=self.tpl)
        log(f"sweep fixture: {n} overdue orders")
        self.psql(src, file=os.path.join(ROOT, "bench", "sql", "sweep-fixture.sql"), variables={"n": n})
        self.psql(src, "VACUUM ANALYZE")
        sql_times, runs = [], []
        for r in range(z["sweep_repeats"]):
            b = self.create_db(f"sweep_sql{r}", template=src)
            t = time.perf_counter()
            self.psql(b, file=os.path.join(ROOT, "bench", "sql", "sweep-setbased.sql"))
            sql_times.append(time.perf_counter() - t)
            sql_work = self.psql(b, file=os.path.join(ROOT, "bench", "sql", "work-summary.sql"))
            self.drop_db(b)
            for mode in ("relay", "off"):
                a = self.create_db(f"sweep_{mode}{r}", template=src)
                svc = self.start_service(a, f"sweep-{mode}{r}", outbox={"enabled": mode == "relay"})
                row = dict(self.sweep_runs(svc, n), round=r, mode=mode)
                delivery = ""
                if mode == "relay":
                    # The events the sweep wrote, delivered: the seconds from the sweep's end until none is pending.
                    row["drainSeconds"] = self.wait_drained(a, 300)
                    # A relay that stalled would leave the sweep the whole machine: the row is met only when
                    # it delivered every event.
                    row["undelivered"] = int(self.psql(a, "SELECT count(*) FROM outbox_pending", jit=False))
                    delivery = (f", events delivered {row['drainSeconds']:.2f} s after"
                                + (f", {row['undelivered']:,} NOT delivered" if row["undelivered"] else ""))
                self.stop_service(svc)
                svc_work = self.psql(a, file=os.path.join(ROOT, "bench", "sql", "work-summary.sql"))
                row.update(same=strip_counts(svc_work) == strip_counts(sql_work) and row["cancelled"] == n,
                           svcWork=svc_work, sqlWork=sql_work)
                runs.append(row)
                log(f"sweep round {r + 1}, relay {'on' if mode == 'relay' else 'off'}: service {row['seconds']:.2f} s "
                    f"({row['runs']} runs, {row['batches']} batches{delivery}), SQL script {sql_times[-1]:.2f} s; "
                    f"same work: {row['same']}")
                if not row["same"]:
                    log(f"  service: {svc_work}\n  script:  {sql_work}")
                self.drop_db(a)
        self.drop_db(src)
        self.results["sweep"] = {"orders": n, "sql": sql_times, "rounds": runs}

    def sweep_runs(self, svc, n):
        """Manual sweep runs until the n overdue orders are cancelled (or a run cancels none)."""
        cancelled, nruns, batches = 0, 0, 0
        t = time.perf_counter()
        while cancelled < n:
            code, body = http("POST", svc.base + "/admin/sweeps/run", token=ADMIN_TOKEN, timeout=600)
            row = json.loads(body)
            if code != 200 or row.get("error"):
                raise RuntimeError(f"sweep run failed: {code} {body}")
            nruns += 1
            batches += row["batches"]
            cancelled += row["cancelled"]
            if row["cancelled"] == 0:
                break
        return {"seconds": time.perf_counter() - t, "runs": nruns, "batches": batches, "cancelled": cancelled}

    # ---- 4: claim cost -------------------------------------------------------------------------

    def item_claim(self):
        """Both databases built first, then measured in alternation (rounds), so drift of the shared
        machine's load hits both alike; each round is one psql session that PREPAREs the claim
        exactly as the sweep sends it and runs it `claim_repeats` times, each in a rolled-back
        transaction, under EXPLAIN ANALYZE."""
        z = self.size
        claim_sql = claim_statement()
        dbs = {}
        for n in z["claim_pending"]:
            db = self.create_db(f"claim{n}", template=self.tpl)
            log(f"claim: {n} pending, not yet due orders + one batch (500) due")
            self.psql(db, f"""INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
                SELECT 'P' || g, 'u', 'PENDING_PAYMENT', 1000, 'fixture', now() + interval '1 hour' + g * interval '1 microsecond'
                FROM generate_series(1, {n}) g""")
            self.psql(db, """INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
                SELECT 'D' || g, 'u', 'PENDING_PAYMENT', 1000, 'fixture', now() - interval '60 seconds' + g * interval '1 microsecond'
                FROM generate_series(1, 500) g""")
            self.psql(db, "VACUUM ANALYZE orders")
            dbs[n] = db
        stmt = claim_sql.replace("$1", "$1::float8").replace("$2", "$2::int")
        script = ["PREPARE claim(float8, int) AS " + stmt + ";"]
        for _ in range(z["claim_repeats"]):
            script += ["BEGIN;", "EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE claim(0, 500);", "ROLLBACK;"]
        path = os.path.join(self.tmp, "claim.sql")
        with open(path, "w") as f:
            f.write("\n".join(script) + "\n")
        acc = {n: {"exec": [], "plan": [], "rows": [], "index": True} for n in dbs}
        for _ in range(5):
            for n, db in dbs.items():
                text = self.psql(db, file=path)
                a = acc[n]
                a["exec"] += [float(x) for x in re.findall(r'"Execution Time": ([\d.]+)', text)]
                a["plan"] += [float(x) for x in re.findall(r'"Planning Time": ([\d.]+)', text)]
                a["rows"] += [int(x) for x in re.findall(r'"Node Type": "LockRows",.*?"Actual Rows": (\d+)', text, re.S)]
                a["index"] &= "orders_pending_expiry" in text and '"Seq Scan"' not in text
                a["sorted"] = a.get("sorted", 0) + sum('"Sort"' in c for c in text.split('"Execution Time"')[:-1])
        out = {}
        for n, a in acc.items():
            out[n] = {"execMs": statistics.median(a["exec"]), "planMs": statistics.median(a["plan"]),
                      "p90ExecMs": sorted(a["exec"])[int(len(a["exec"]) * 0.9)],
                      "rows": min(a["rows"]) if a["rows"] else None, "index": a["index"], "repeats": len(a["exec"]),
                      "sorted": a.get("sorted", 0)}
            log(f"claim at {n}: {out[n]}")
            self.drop_db(dbs[n])
        self.results["claim"] = out

    # ---- 5: lateness in precise mode ------------------------------------------------------------

    def item_lateness(self):
        z = self.size
        n, spread = z["late_orders"], z["late_spread_seconds"]
        db = self.create_db("late", template=self.tpl)
        # The relay on (log sink, as shipped): it delivers the cancellations' events beside the sweeps.
        svc = self.start_service(db, "lateness", sweep={"enabled": True, "precise": True, "periodMs": 60000,
                                                         "minDelayMs": 200}, outbox={"enabled": True})
        log(f"lateness: {n} orders expiring over {spread} s, precise mode")
        self.psql(db, "INSERT INTO inventory (sku, available) VALUES ('SW-A', 0), ('SW-B', 0)")
        self.psql(db, f"""INSERT INTO orders (order_no, user_id, status, amount_cents, request_hash, expires_at)
            SELECT 'L' || g, 'u' || g, 'PENDING_PAYMENT', 1000, 'fixture',
                   now() + interval '3 seconds' + make_interval(secs => {spread}::float8 * g / {n})
            FROM generate_series(1, {n}) g;
            INSERT INTO order_items (order_no, sku, qty, unit_price_cents)
            SELECT order_no, 'SW-A', 1, 500 FROM orders UNION ALL SELECT order_no, 'SW-B', 2, 250 FROM orders""")
        # The orders bypassed the API, so nobody told the sweeper: one manual run makes it plan
        # (read the earliest pending expiry) and arm its precise timer, as an API create would.
        http("POST", svc.base + "/admin/sweeps/run", token=ADMIN_TOKEN, timeout=60)
        deadline = time.time() + spread + 60
        while time.time() < deadline:
            if int(self.psql(db, "SELECT count(*) FROM orders WHERE status = 'PENDING_PAYMENT'")) == 0:
                break
            time.sleep(0.5)
        self.stop_service(svc)
        row = self.psql(db, """SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM cancelled_at - expires_at)),
              percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM cancelled_at - expires_at)),
              max(extract(epoch FROM cancelled_at - expires_at)), (SELECT count(*) FROM sweep_runs)
            FROM orders WHERE status = 'CANCELLED'""").split("|")
        self.results["late"] = {"orders": n, "spread": spread, "cancelled": int(row[0]), "p50": float(row[1] or 0),
                                "p99": float(row[2] or 0), "max": float(row[3] or 0), "runs": int(row[4])}
        log(f"lateness: {self.results['late']}")
        self.drop_db(db)

    # ---- 7: trigger tiers (issue 12) -----------------------------------------------------------

    def item_triggers(self):
        """The three trigger tiers side by side: `ordergate trigger-bench` (needs RabbitMQ and Redis on
        this machine); its markdown section is appended to the report."""
        z = self.size
        md = os.path.join(self.tmp, "triggers.md")
        log(f"triggers: {z['trig_orders']} orders over {z['trig_spread_seconds']} s, fallback {z['trig_fallback_ms']} ms")
        r = subprocess.run(["java", "-Xms128m", "-Xmx768m", "-jar", JAR, "trigger-bench", "--db-url", self.url("postgres"),
                            "--orders", str(z["trig_orders"]), "--spread-seconds", str(z["trig_spread_seconds"]),
                            "--fallback-ms", str(z["trig_fallback_ms"]), "--noise-keys", str(z["trig_noise_keys"]),
                            "--markdown", md], cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(md):
            self.results["triggers"] = f"trigger-bench failed ({r.returncode}): {(r.stderr or r.stdout)[-2000:]}"
        else:
            with open(md) as f:
                self.results["triggers"] = f.read()
        log("triggers: done")

    # ---- the report ----------------------------------------------------------------------------

    def cpu_budget(self, cb, rl):
        """Target 1 by the machine's CPU alone: what a pgbench `callback.sql` transaction costs (its client and
        the backends) against what a callback costs through wrk (the service, wrk and the backends), from the
        same run. While pgbench is CPU-bound its tps is the CPUs divided by its cost, so 2x needs a callback at
        half a transaction's cost; while it waits on the disk instead (slow fsyncs: fewer tps at the same CPU),
        the tps ratio rises with no change to the service. Issue 13's note sets this out."""
        def per(r, n):
            c = r.get("cpu") or {}
            return sum((c.get(k) or 0) for k in ("service", "client", "postgres")) * 1e6 / max(n, 1)
        runs = cb["pgbench"]["callback.sql"]
        tx = [per(r, r["transactions"]) for r in runs]
        used = [r["tps"] * t / 1e6 for r, t in zip(runs, tx)]
        when = "before / after the service" if len(runs) == 2 else f"{len(runs)} run(s)"
        parts = [f"pgbench `callback.sql` {' / '.join(f'{t:.0f}' for t in tx)} µs per transaction ({when}; its {' / '.join(format(r['tps'], ',.0f') for r in runs)} tps kept "
                 f"{' / '.join(f'{u:.2f}' for u in used)} of the {self.facts['nproc']} CPUs busy; steal "
                 f"{' / '.join(pct_text(steal_share(r)) for r in runs)})"]
        ref = min(tx)
        cands = [("relay off", max(cb.get("wrk", {}).values(), key=lambda r: r["throughputPerSecond"], default=None))]
        for sink in ("log", "webhook"):
            if rl and rl[sink].get("wrk"):
                cands.append((f"relay on, {sink} sink", rl[sink]["wrk"]))
        for name, r in cands:
            if r:
                n = r["throughputPerSecond"] * r["seconds"]
                c = per(r, n)
                jit = ((r.get("cpu") or {}).get("serviceJit") or 0) * 1e6 / max(n, 1)
                # The webhook's receiver stands in for a remote system, so its CPU is not the callback's; it is given
                # beside it, since on this machine it is taken from the service and PostgreSQL while they run.
                rcv = r.get("receiver")
                rcv = (f"; not counted: the bench's Python receiver, {rcv['cpu'] * 1e6 / max(n, 1):.1f} µs per callback "
                       f"({rcv['events'] / max(rcv['posts'], 1):.0f} events per POST)") if rcv else ""
                parts.append(f"through wrk, {name}: {c:.0f} µs per callback (the service's JIT compiler threads {jit:.0f}{rcv}; "
                             f"steal {pct_text(steal_share(r))}), **{ref / c:.2f}x** by CPU")
        return ("CPU budget of target 1 (service + load generator + PostgreSQL backends per unit of work, this run): "
                + "; ".join(parts) + f". 2x of a CPU-bound pgbench needs a callback at <= {ref / 2:.0f} µs.\n")


    def report(self):
        R = self.results
        cb = R["callbacks"]
        pg_simple = max(r["tps"] for r in cb["pgbench"]["callback.sql"])
        pg_full = max(r["tps"] for r in cb["pgbench"]["callback-full.sql"])
        rows = []
        best = 0
        for c in (64, 256):
            r = cb["closed"][c]
            best = max(best, r["throughputPerSecond"])
        ratio = best / pg_simple
        wrk_note = ""
        if cb.get("wrk"):
            wbest = max(r["throughputPerSecond"] for r in cb["wrk"].values())
            wrk_note = f"; through wrk instead of the replay tool: {wbest:,.0f}/s, {wbest / pg_simple:.2f}x"
        lines = []
        add = lines.append
        add("| # | measurement | result | target | met |")
        add("|---|---|---|---|---|")
        c64, c256 = cb["closed"][64], cb["closed"][256]
        add(f"| 1 | callbacks/s, service closed loop 64 / 256 connections vs pgbench `callback.sql` (-c 16, best of "
            f"{len(cb['pgbench']['callback.sql'])}) | {c64['throughputPerSecond']:,.0f} / {c256['throughputPerSecond']:,.0f} "
            f"vs {pg_simple:,.0f} tps: **{ratio:.2f}x** (vs `callback-full.sql` {pg_full:,.0f} tps: "
            f"{best / pg_full:.2f}x)" + wrk_note + f" | >= {TARGETS['callbacks']}x | {yes(ratio >= TARGETS['callbacks'])} |")
        o = cb["open"]["latencyMs"]
        rp = cb.get("openReplay")
        replay_note = (f"; through the replay tool instead: {rp['latencyMs']['p50']} / {rp['latencyMs']['p99']} / "
                       f"{rp['latencyMs']['p99.9']} ms, its JVM at {cpu_of(rp, 'client')} µs of CPU per callback against "
                       f"{cpu_of(cb['open'], 'client')}" if rp else "")
        add(f"| 2 | latency at half the service's max rate, relay off, open loop {cb['openRate']:,.0f}/s through "
            f"bench/openloop.py: p50 / p99 / p99.9 ({runs_of(cb['openRuns'])}) | "
            f"{o['p50']} / **{o['p99']}** / {o['p99.9']} ms (achieved {cb['open']['throughputPerSecond']:,.0f}/s"
            f"{p99s_of(cb['openRuns'])}{replay_note}) | "
            f"p99 <= {TARGETS['p99_half_ms']:.0f} ms | {yes(o['p99'] <= TARGETS['p99_half_ms'])} |")
        sw = R["sweep"]
        sw_on = [r for r in sw["rounds"] if r["mode"] == "relay"]
        s_sql = statistics.median(sw["sql"])
        s_svc = statistics.median(r["seconds"] for r in sw_on)
        s_off = statistics.median(r["seconds"] for r in sw["rounds"] if r["mode"] == "off")
        drains = [r["drainSeconds"] for r in sw_on]
        same = all(r["same"] for r in sw["rounds"])
        undelivered = sum(r["undelivered"] for r in sw_on)
        add(f"| 3 | sweep of {sw['orders']:,} overdue orders, relay on (log sink, as shipped): sweep runs vs one "
            f"set-based SQL script (median of {len(sw_on)}) | {s_svc:.2f} s vs {s_sql:.2f} s: "
            f"**{s_svc / s_sql:.2f}x**; relay off: {s_off:.2f} s, {s_off / s_sql:.2f}x; the relay delivered the sweep's "
            f"events {statistics.median(drains):.2f} s after the sweep's end (median; {max(drains):.2f} s at most)"
            f"{'' if same else ' (WORK DIFFERS)'}"
            f"{f' ({undelivered:,} EVENTS NOT DELIVERED within 300 s)' if undelivered else ''} | "
            f"<= {TARGETS['sweep_ratio']}x | {yes(s_svc / s_sql <= TARGETS['sweep_ratio'] and same and not undelivered)} |")
        cl = R["claim"]
        small, large = sorted(cl)
        cr = cl[large]["execMs"] / cl[small]["execMs"]
        add(f"| 4 | claim of one batch (500 due) at {large:,} vs {small:,} pending not-yet-due orders, "
            f"execution time (median of {cl[small]['repeats']}) | {cl[large]['execMs']:.3f} vs {cl[small]['execMs']:.3f} ms: "
            f"**{cr:.2f}** | <= {TARGETS['claim_ratio']} | {yes(cr <= TARGETS['claim_ratio'])} |")
        la = R["late"]
        add(f"| 5 | lateness, {la['orders']:,} orders expiring over {la['spread']} s, precise mode, relay on: cancelledAt - "
            f"expiresAt p50 / p99 | {la['p50']:.3f} / **{la['p99']:.3f}** s (max {la['max']:.3f}; "
            f"{la['cancelled']:,} cancelled in {la['runs']} runs) | p99 <= {TARGETS['late_p99_s']} s | "
            f"{yes(la['p99'] <= TARGETS['late_p99_s'] and la['cancelled'] == la['orders'])} |")
        rss = cb["rssClosed"]
        rl = R.get("relay")
        relay_rss = {k: rl[k]["rss"] for k in ("log", "webhook") if k in (rl or {})}
        peak = max([rss["hwm_mb"]] + [m["hwm_mb"] for m in relay_rss.values()])
        relay_note = "".join(f"; relay on, {k} sink, over every run of 1{'b' if k == 'log' else 'c'} / "
                             f"2{'b' if k == 'log' else 'c'}: {m['hwm_mb']:.0f} MB" for k, m in relay_rss.items())
        add(f"| 6 | peak RSS of the service during (1) (VmHWM), and with the relay on | **{rss['hwm_mb']:.0f} MB** (after (2): "
            f"{cb['rssAll']['hwm_mb']:.0f} MB{relay_note}) | <= {TARGETS['rss_mb']:.0f} MB | {yes(peak <= TARGETS['rss_mb'])} |")
        if rl:
            for sink in ("log", "webhook"):
                c, o = rl[sink]["closed"], rl[sink]["open"]
                sus = rl[sink].get("sustained")
                rs = sus["throughputPerSecond"] / pg_simple if sus else 0.0
                probes = ", ".join(f"{p['achieved']:,.0f}/s lag p99 {p['lagP99']:.2f} s" for p in rl[sink].get("probes", []))
                add(f"| 1{'b' if sink == 'log' else 'c'} | callbacks/s with the outbox relay on and keeping up, {sink} sink"
                    f"{f' (a Python receiver on loopback, batchMax {WEBHOOK_BATCH})' if sink == 'webhook' else ' (as shipped)'}: the highest open-loop "
                    f"rate probed or closed-loop run whose relay lag p99 (every event created, undelivered ones at their wait) is <= "
                    f"{TARGETS['relay_lag_p99_s']:.0f} s, vs pgbench `callback.sql` | "
                    + (f"{sus['throughputPerSecond']:,.0f} vs {pg_simple:,.0f} tps: **{rs:.2f}x** ({sus.get('runName', '')}); "
                       f"lag p99 {sus['relay']['lagP99']:.2f} s, backlog peak {sus['relay']['pendingMax']:,}" if sus else
                       "**none of the probed rates**")
                    + f" (probes: {probes}; closed loop 256: {c['throughputPerSecond']:,.0f}/s with lag p99 "
                    f"{c['relay']['lagP99']:.2f} s, backlog peak {c['relay']['pendingMax']:,}"
                    + (f"; through wrk: {rl[sink]['wrk']['throughputPerSecond']:,.0f}/s with lag p99 "
                       f"{rl[sink]['wrk']['relay']['lagP99']:.2f} s" if rl[sink].get("wrk") else "")
                    + f"; relay off: {best:,.0f}/s, {ratio:.2f}x{wrk_note}) | >= {TARGETS['callbacks']}x with lag p99 <= {TARGETS['relay_lag_p99_s']:.0f} s | "
                    f"{yes(rs >= TARGETS['callbacks'])} |")
                # Row 2b/2c: issue 13 asks for half the rate of row 1b/1c (the relay on and keeping up); the open loop at
                # half the relay-off maximum (a higher rate: what this row measured before) is reported beside it.
                h = rl[sink].get("half")
                row = "b" if sink == "log" else "c"
                ol = o["latencyMs"]
                at_off = (f"{ol['p50']} / {ol['p99']} / {ol['p99.9']} ms, lag p99 {o['relay']['lagP99']:.2f} s, backlog peak "
                          f"{o['relay']['pendingMax']:,}")
                if h:
                    hl = h["latencyMs"]
                    hruns = rl[sink]["halfRuns"]
                    lag = max(r["relay"]["lagP99"] for r in hruns)
                    met = hl["p99"] <= TARGETS["p99_half_ms"] and lag <= TARGETS["relay_lag_p99_s"]
                    result = (f"at {h['rate']:,.0f}/s: {hl['p50']} / **{hl['p99']}** / {hl['p99.9']} ms"
                              f"{p99s_of(hruns)}; lag p99 **{lag:.2f} s** (worst run); backlog peak "
                              f"{max(r['relay']['pendingMax'] for r in hruns):,} (at "
                              f"{cb['openRate']:,.0f}/s, half the relay-off maximum: {at_off})")
                else:
                    met, result = False, f"no rate kept up in 1{row} (at {cb['openRate']:,.0f}/s: {at_off})"
                add(f"| 2{row} | relay on, {sink} sink: open loop at half the rate of 1{row} through bench/openloop.py: callback p50 / p99 / p99.9 "
                    f"({runs_of(rl[sink]['halfRuns']) if h else 'one run'}); relay lag p99; "
                    f"backlog peak | {result} | p99 <= {TARGETS['p99_half_ms']:.0f} ms, lag p99 <= "
                    f"{TARGETS['relay_lag_p99_s']:.0f} s | {yes(met)} |")
            st = rl["steady"]
            sz = st["sizesMb"]
            med = st["quarterMediansMb"]
            flat = med[1] <= max(med[0], 1) * 1.3
            # Bounded means by the retention, not by the run's end: the relay must have kept up too (a backlog
            # of at most one second of events, two per callback), or the table only stayed small by holding
            # undelivered events.
            kept_up = st["pendingMax"] <= st["rate"] * 2
            add(f"| 3b | outbox size over a {st['seconds']} s open loop at {st['rate']:,.0f}/s with a retention of "
                f"{st['seconds'] / 10:.0f} s: table + indexes at 25 / 50 / 75 / 100 % of the run, and the relay's backlog | "
                f"{' / '.join('%.1f' % x for x in sz)} MB (medians of the third / last quarter of the samples: "
                f"{med[0]:.1f} / {med[1]:.1f} MB), {st['rowsEnd']:,} rows at the end, backlog peak "
                f"{st['pendingMax']:,}" + (f" (not a latency row: callback p99 {st['p99']} ms over the run, from a service "
                f"started for it without a warm-up, with {st['checkpoints']['requested']} checkpoint(s) started by WAL "
                f"volume in it)" if st.get("checkpoints") else "") + " | flat after the retention starts (the last quarter's median <= 1.3 x the third quarter's), backlog peak "
                f"<= one second of events ({st['rate'] * 2:,.0f}) | {yes(flat and kept_up)} |")
        table = "\n".join(lines)

        d = []
        add = d.append
        add("### 1. Callbacks\n")
        add("| run | rate /s | seconds | p50 ms | p99 ms | p99.9 ms | answered 200 / APPLIED | CPU µs per callback: service (of it, its JIT compiler threads) / load generator / PostgreSQL backends; steal: the share of the machine's CPU time its hypervisor gave to other guests |")
        add("|---|---|---|---|---|---|---|---|")
        for script, runs in cb["pgbench"].items():
            for i, r in enumerate(runs):
                when = "before" if i == 0 else "after"
                add(f"| pgbench `{script}` -c 16 -j 2 -M prepared ({when} the service) | {r['tps']:,.0f} | "
                    f"{r['seconds']} | {r['p50']:.1f} | {r['p99']:.1f} | | {r['transactions']:,} tx | {cpu(r, r['transactions'])} |")
        w = cb["warm"]
        rounds = w.get("rounds") or []
        add(f"| service warm-up, closed loop 64{f' (last of {len(rounds)} rounds; JIT compiler threads per round, in CPUs: ' + ', '.join(str(x['jitCores']) for x in rounds) + ')' if len(rounds) > 1 else ''} | {w['throughputPerSecond']:,.0f} | {w['seconds']} | "
            f"{w['latencyMs']['p50']} | {w['latencyMs']['p99']} | {w['latencyMs']['p99.9']} | {w['applied']:,} | "
            f"{cpu(w, w['requests'])} |")
        for c in (64, 256):
            r = cb["closed"][c]
            add(f"| service closed loop, {c} connections | {r['throughputPerSecond']:,.0f} | {r['seconds']} | "
                f"{r['latencyMs']['p50']} | {r['latencyMs']['p99']} | {r['latencyMs']['p99.9']} | "
                f"{r['applied']:,} of {r['requests']:,}{'' if r['ok'] else ' (NOT ALL OK)'} | {cpu(r, r['requests'])} |")
        for c, r in cb.get("wrk", {}).items():
            add(f"| service closed loop through wrk (pre-signed), {c} connections | {r['throughputPerSecond']:,.0f} | "
                f"{r['seconds']} | {r['p50']} | {r['p99']} | | {r['requests']:,} answered, {r['paid']:,} orders paid"
                f"{'' if r['ok'] else ' (NOT ALL OK: ' + str(r['non2xx']) + ' non-2xx)'} | {cpu(r, r['requests'])} |")
        opens = [("the replay tool", cb.get("openReplay"))] + [
            (f"bench/openloop.py{f', {i + 1}' if len(cb['openRuns']) > 1 else ''}", r)
            for i, r in enumerate(cb["openRuns"])]
        for label, r in opens:
            if r:
                add(f"| service open loop at {cb['openRate']:,.0f}/s, 256 connections, {label} | {r['throughputPerSecond']:,.0f} | "
                    f"{r['seconds']} | {r['latencyMs']['p50']} | {r['latencyMs']['p99']} | {r['latencyMs']['p99.9']} | "
                    f"{r['applied']:,} of {r['requests']:,}{'' if r['ok'] else ' (NOT ALL OK)'} | {cpu(r, r['requests'])} |")
        add("")
        add("Callbacks/s per wire format, side by side (closed loop, 64 connections, the replay tool; the gateway "
            "formats are built and signed by the load generator before its clock starts (that CPU is left out of "
            "its column), so the service's column holds the price of verifying them: HMAC for ordergate and Stripe, SHA256withRSA for Alipay, "
            "SHA256withRSA + AES-GCM for WeChat Pay):\n")
        add("| format | callbacks/s | p50 ms | p99 ms | success answers / APPLIED | CPU µs per callback: service (of it, its JIT compiler threads) / load generator / PostgreSQL; steal |")
        add("|---|---|---|---|---|---|")
        for fmt, r in cb.get("formats", {}).items():
            answered = sum(v for k, v in r.get("status", {}).items() if k in ("200", "204"))
            add(f"| `{fmt}` | {r['throughputPerSecond']:,.0f} | {r['latencyMs']['p50']} | {r['latencyMs']['p99']} | "
                f"{answered:,} / {r['applied']:,} of {r['requests']:,}{'' if r['ok'] else ' (NOT ALL OK)'} | "
                f"{cpu(r, r['requests'])} |")
        add("")
        add("CPU: user + system seconds from /proc/<pid>/stat during the run, divided by the callbacks (or "
            "transactions); PostgreSQL counts the scratch database's client backends only (not the WAL writer). "
            "The machine has " + str(self.facts['nproc']) + " CPUs for all three.\n")
        add(self.cpu_budget(cb, rl))
        add(f"Service memory: after (1) VmHWM {rss['hwm_mb']:.0f} MB, VmRSS {rss['rss_mb']:.0f} MB; after (2) VmHWM "
            f"{cb['rssAll']['hwm_mb']:.0f} MB.\n")
        add("### 3. Sweep\n")
        add("| round | relay | service (s) | runs x batches | events delivered, seconds after the sweep's end | "
            "SQL script (s) | ratio | same work |")
        add("|---|---|---|---|---|---|---|---|")
        for rr in sw["rounds"]:
            i, on = rr["round"], rr["mode"] == "relay"
            drain = (f"{rr['drainSeconds']:.2f}" + (f" ({rr['undelivered']:,} not delivered)" if rr["undelivered"]
                                                    else "")) if on else "-"
            add(f"| {i + 1} | {'on' if on else 'off'} | {rr['seconds']:.2f} | {rr['runs']} x {rr['batches']} | {drain} | "
                f"{sw['sql'][i]:.2f} | {rr['seconds'] / sw['sql'][i]:.2f} | {yes(rr['same'])} |")
        add(f"\nWork done (service, round 1): {sw['rounds'][0]['svcWork']}\n")
        add("### 4. Claim\n")
        add("| pending (not due) | due | execution ms, median | p90 | planning ms | rows | uses orders_pending_expiry, no Seq Scan | executions with a Sort |")
        add("|---|---|---|---|---|---|---|---|")
        for n in sorted(cl):
            add(f"| {n:,} | 500 | {cl[n]['execMs']:.3f} | {cl[n]['p90ExecMs']:.3f} | {cl[n]['planMs']:.3f} | {cl[n]['rows']} | "
                f"{yes(cl[n]['index'])} | {cl[n]['sorted']} of {cl[n]['repeats']} |")
        add("\nA Sort appears where the planner's custom plan (the first 5 executions of each session) prefers a "
            "bitmap scan because the due rows are a large share of a small table; the generic plan is an Index Scan "
            "on orders_pending_expiry that stops after LIMIT rows.")
        if rl:
            add("\n### 1b-2c. Relay on\n")
            add("Lag = delivered_at - created_at over every event the run created; an event still undelivered when the "
                "drain (up to 60 s after the load) gave up counts at its wait so far.\n")
            add("| sink | run | asked /s | achieved /s | callback p99 ms | lag p50 / p99 / max s | delivered / created | "
                "backlog peak / at the load's end | drained in s | service JIT compiler threads, CPUs | steal |")
            add("|---|---|---|---|---|---|---|---|---|---|---|")
            for sink in ("log", "webhook"):
                runs = ([("closed", rl[sink]["closed"])] + ([("closed, wrk", rl[sink]["wrk"])] if rl[sink].get("wrk") else [])
                        + [(f"probe {i}", p) for i, p in enumerate(rl[sink].get("runs", []))]
                        + [(f"half of the sustained rate, {i + 1}", r) for i, r in enumerate(rl[sink].get("halfRuns", []))])
                for name, r in runs:
                    x = r["relay"]
                    add(f"| {sink} | {name} | {round(r['rate']) if r.get('rate') else 'closed 256'} | {r['throughputPerSecond']:,.0f} | "
                        f"{r['latencyMs']['p99']} | {x['lagP50']:.2f} / {x['lagP99']:.2f} / {x['lagMax']:.2f} | "
                        f"{x['delivered']:,} / {x['created']:,} | {x['pendingMax']:,} / {x.get('pendingAtLoadEnd', 0):,} | "
                        f"{x['drainSeconds']:.1f} | {jit_cores(r):.2f} | {pct_text(steal_share(r))} |")
        profiled = [(f"2, relay off, {i + 1}", cb["openRate"], r) for i, r in enumerate(cb["openRuns"])]
        for sink, row in (("log", "2b"), ("webhook", "2c")):
            profiled += [(f"{row}, {sink} sink, {i + 1}", r.get("rate") or r["throughputPerSecond"], r)
                         for i, r in enumerate((rl or {}).get(sink, {}).get("halfRuns", []))]
        profiled = [(label, rate, r) for label, rate, r in profiled if r.get("profile")]
        if profiled:
            add("\n### Tail profile of the open loops (rows 2-2c)\n")
            add("Sampled every 50 ms during each run (`TailProfile`): the machine's CPU busy share (of all its CPUs; "
                "of it, the share its hypervisor gave to other guests: steal, from /proc/stat) and "
                "the scratch database's active backends by wait event (CPU: none, so running or waiting for a core; "
                "autovacuum: its workers) and by statement (callbacks: the gate's statement and its receipts; commit: "
                "a COMMIT, of the callbacks or of the relay; relay: the outbox relay's statements; retention: its "
                "deletes and VACUUM), and the service's JIT compiler threads in CPUs, as means over the run and over "
                "the samples taken while one of the run's "
                "slowest 1 % of callbacks was in flight; in brackets, a mean over the rate: the time a callback spent "
                "so (Little's law). JVM pauses: the service's safepoints (`-Xlog:safepoint`). The disk's fdatasync: "
                "`FsyncProbe`, 8 KiB rewritten in place and synced every 50 ms in the bench's folder, beside the "
                "server's commits (a commit's WAL fsync stalled while it answers: not the disk).\n")
            add("| run | p99 ms | profile |")
            add("|---|---|---|")
            for label, rate, r in profiled:
                add(f"| {label} | {r['latencyMs']['p99']} | {profile_text(r['profile'], rate)} |")
        if R.get("triggers"):
            add("")
            add(R["triggers"])
        details = "\n".join(d)

        f = self.facts
        head = [
            f"# ordergate bench results{' (--quick: a smoke run, not a measurement)' if self.quick else ''}",
            "",
            f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
            f"commit {f['commit']}; `scripts/bench{' --quick' if self.quick else ''}` took {self.elapsed:.0f} s",
            f"- machine: {f['nproc']} CPUs ({f['cpu']}), {f['mem']} memory; load average 1 min at start / end: "
            f"{self.loads[0]:.2f} / {self.loads[-1]:.2f} (the machine is shared)",
            f"- PostgreSQL: {f['pg']}; synchronous_commit={f['sync']}, shared_buffers={f['sb']}, {f['wal']}; before "
            f"each open loop of rows 2-2c the bench gives the server recycled WAL segments for 1.5 times the run's WAL "
            f"(`Bench.wal_reserve`: a segment the server creates mid-run stalls every commit while it is zero-filled)",
            f"- Java: {f['java']}",
            f"- service: `java {' '.join(self.jvm_opts)} -jar target/ordergate.jar` (flags from scripts/run); "
            f"callbacks.maxBatch / maxInFlight / db.poolSize as in conf/config.json; outbox relay off in rows 1, 2 "
            f"and on (as shipped) in rows 1b-3b, 3 and 5 (row 3 also beside it with it off), 6 (both); "
            f"load generator: `java {' '.join(self.tool_opts)} -jar target/ordergate.jar replay run` (flags from "
            f"scripts/replay) in its own JVM on the same machine"
            + (f" (from {self.replay_jar})" if self.replay_jar != JAR else ""),
            *( [f"- config overrides (--set): {', '.join(k + '=' + json.dumps(v) for k, v in self.overrides)}"]
               if self.overrides else []),
            "",
            "",
        ]
        return "\n".join(head) + table + "\n\n" + details + "\n"


class PsqlSession:
    """One psql process and one database session for a sampler's repeated queries. A psql per sample (a
    process, a connection, a backend forked and initialised) cost this 2-core machine more than the queries:
    with the CPU meter's four and the outbox sampler's two a second, psql alone was 10 % of the CPU samples
    of a relay-on closed loop (perf, issue 13), taken from the service and PostgreSQL the run measures."""

    END = "__ordergate_bench_end__"

    def __init__(self, url):
        self.proc = subprocess.Popen(["psql", url, "-X", "-Atq"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1, env=NO_JIT)

    def query(self, sql):
        """The query's output lines joined; "" when the query failed (a sampler skips that sample)."""
        try:
            self.proc.stdin.write(f"{sql};\n\\echo {self.END}\n")
            self.proc.stdin.flush()
            lines = []
            for line in self.proc.stdout:
                if line.rstrip("\n") == self.END:
                    return "\n".join(lines)
                lines.append(line.rstrip("\n"))
        except (BrokenPipeError, OSError):
            pass
        return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Sampling:
    """A sampler's thread: loop() runs from __enter__ until __exit__ sets stop."""

    def __init__(self):
        self.stop = False
        import threading
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


class OutboxSampler(Sampling):
    """Samples the outbox every 0.5 s during a run, on one session: pending events and the table's size on
    disk; its rows are counted once, at the end. (A count(*) of the whole table every 0.5 s cost PostgreSQL
    80-90 ms a sample, about 30 µs per callback of the CPU the runs measure: issue 13.)"""

    def __init__(self, bench, db):
        super().__init__()
        self.bench, self.db = bench, db
        self.max_pending, self.last_pending, self.last_rows, self.sizes = 0, 0, 0, []

    def loop(self):
        with PsqlSession(self.bench.url(self.db)) as session:
            while not self.stop:
                # The outbox is the events and, from V18, the log sink's cursor marks.
                row = session.query("SELECT (SELECT count(*) FROM outbox_pending), "
                                    "pg_total_relation_size('outbox_events') "
                                    "+ coalesce(pg_total_relation_size(to_regclass('outbox_stream_marks')), 0)")
                parts = row.split("|")
                if len(parts) == 2 and parts[0].isdigit():
                    self.last_pending = int(parts[0])
                    self.max_pending = max(self.max_pending, self.last_pending)
                    self.sizes.append(int(parts[1]))
                time.sleep(0.5)

    def __exit__(self, *exc):
        super().__exit__(*exc)
        rows = self.bench.psql(self.db, "SELECT count(*) FROM outbox_events", check=False)
        self.last_rows = int(rows) if rows.isdigit() else 0


class FsyncProbe(Sampling):
    """The disk's own answer time during a latency run (issue 13): every 50 ms, 8 KiB written over the same 1 MiB of
    a file in `folder` (its blocks written and synced first, so no write allocates and no fdatasync needs the file
    system's journal) and fdatasync'd. A commit's WAL fsync that stalls while this one answers points at PostgreSQL's
    WAL path or the cores; both stalled, at the disk."""

    PERIOD = 0.05
    SPAN = 128   # blocks of 8 KiB

    def __init__(self, folder):
        super().__init__()
        self.path = os.path.join(folder, "fsync-probe")
        self.samples = []   # (wall time of the write, seconds until fdatasync returned)

    def loop(self):
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            block = os.urandom(8192)
            for i in range(self.SPAN):
                os.pwrite(fd, block, i * 8192)
            os.fsync(fd)
            i = 0
            while not self.stop:
                at, started = time.time(), time.perf_counter()
                os.pwrite(fd, block, i % self.SPAN * 8192)
                os.fdatasync(fd)
                self.samples.append((at, time.perf_counter() - started))
                i += 1
                time.sleep(self.PERIOD)
        finally:
            os.close(fd)
            os.remove(self.path)


class TailSample(collections.namedtuple(
        "TailSample", "at backends busy checkpoint steal statements jit")):
    """One TailProfile sample: its wall time, {wait event: backends}, the machine's busy and stolen fractions since
    the last sample, whether the checkpointer was at work, {statement kind: backends}, and the service's JIT
    compiler threads in CPUs since the last sample."""


class TailProfile(Sampling):
    """Where a latency run's time went, and its tail's (issue 13, target 2), sampled every 50 ms on one session:
    the scratch database's active backends by wait event (CPU where none: running, or waiting for a core), the
    autovacuum workers among them, the same backends by the statement they run (KIND), whether the server's
    checkpointer is at work (any wait but its idle CheckpointerMain), the machine's CPU from /proc/stat and the
    service's JIT compiler threads' from /proc; beside it, FsyncProbe times the disk's fdatasync; afterwards the
    service JVM's safepoint pauses from its log. summary() gives each as a mean over the run, and the same means
    over the samples taken while one of the slowest 1 % of requests (openloop.py --series) was in flight. By Little's law a mean of
    backends over the rate is the time a callback spent so, on average. The sampler's query is one scan of
    pg_stat_activity, 20 a second (its cost was not measured apart)."""

    PERIOD = 0.05
    # The start of a run, whose share of the slowest 1 % the profile gives (when()): each open loop begins as a step
    # from idle to its rate, right after the settle's CHECKPOINT (every page's first change then writes a full-page
    # image) and on connections the service has just set up.
    START_S = 2.0
    # What an active backend runs, from its statement's text: the callbacks' transaction (the gate's statement and
    # its receipts), a COMMIT (of the callbacks or of the relay: pg_stat_activity cannot tell), the outbox relay's
    # statements, the retention's deletes and its VACUUM, autovacuum, or anything else (the sweep, the probes).
    KIND = ("CASE WHEN backend_type = 'autovacuum worker' THEN 'autovacuum' "
            "WHEN query LIKE '%UPDATE orders o SET status = ''PAID''%' OR query LIKE '%payment_receipts%' THEN 'callbacks' "
            "WHEN query = 'COMMIT' THEN 'commit' "
            "WHEN query LIKE 'DELETE FROM outbox%' OR query LIKE 'VACUUM%' THEN 'retention' "
            "WHEN query LIKE '%outbox%' THEN 'relay' ELSE 'other' END")

    def __init__(self, bench, db, service_pid=None):
        super().__init__()
        self.bench, self.db, self.service_pid = bench, db, service_pid
        self.fsync = FsyncProbe(bench.tmp)
        self.samples = []   # TailSample

    def loop(self):
        sql = ("SELECT coalesce(string_agg(CASE WHEN backend_type = 'autovacuum worker' THEN 'autovacuum' "
               "ELSE coalesce(wait_event_type || ':' || wait_event, 'CPU') END, ','), '') || '|' || "
               f"coalesce(string_agg({self.KIND}, ','), '') "
               f"FROM pg_stat_activity WHERE datname = '{self.db}' AND pid <> pg_backend_pid() "
               "AND (state = 'active' OR backend_type = 'autovacuum worker') "
               "UNION ALL SELECT count(*)::text FROM pg_stat_activity WHERE backend_type = 'checkpointer' "
               "AND coalesce(wait_event, '') <> 'CheckpointerMain'")
        last = cpu_ticks()
        tick = os.sysconf("SC_CLK_TCK")
        jit_threads, listed, jit_last, jit_at = set(), 0.0, {}, time.time()
        with PsqlSession(self.bench.url("postgres")) as session:
            while not self.stop:
                out = session.query(sql).split("\n")
                ckpt = len(out) == 2 and out[1] not in ("", "0")
                out, _, kinds = out[0].partition("|")
                now = time.time()
                ticks = cpu_ticks()
                busy = (ticks[0] - last[0]) / max(ticks[1] - last[1], 1)
                stolen = (ticks[2] - last[2]) / max(ticks[1] - last[1], 1)
                last = ticks
                if now - listed >= 1:   # HotSpot may start compiler threads as it goes
                    jit_threads, listed = jit_threads | compiler_threads(self.service_pid), now
                jit_now = {t: v for t in jit_threads if (v := proc_cpu_seconds(t, tick)) is not None}
                jit = sum(v - jit_last.get(t, v) for t, v in jit_now.items()) / max(now - jit_at, 1e-3)
                jit_last, jit_at = jit_now, now
                self.samples.append(TailSample(
                    at=now, backends=collections.Counter(e for e in out.split(",") if e), busy=busy, checkpoint=ckpt,
                    steal=stolen, statements=collections.Counter(k for k in kinds.split(",") if k), jit=jit))
                time.sleep(self.PERIOD)

    def __enter__(self):
        self.fsync.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self.fsync.__exit__(*exc)

    @staticmethod
    def pauses(gc_log, t0, t1):
        """The JVM's safepoint pauses between wall times t0 and t1: (start, seconds) each."""
        out = []
        if not gc_log or not os.path.exists(gc_log):
            return out
        pat = re.compile(r"^\[([0-9T:.-]+)([+-]\d{4})\].*Total: (\d+) ns")
        with open(gc_log) as f:
            for line in f:
                m = pat.match(line)
                if not m:
                    continue
                at = datetime.datetime.strptime(m.group(1) + m.group(2), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
                secs = int(m.group(3)) / 1e9
                if t0 <= at <= t1:
                    out.append((at - secs, secs))
        return out

    @classmethod
    def when(cls, flights, t0, cut):
        """When in the run the slowest 1 % (latency >= cut) were due: their share in the run's first START_S seconds,
        the p99 of the callbacks due after those, and the one second of the run that held the most of them."""
        slow = [due - t0 for due, lat in flights if lat >= cut]
        later = sorted(lat for due, lat in flights if due - t0 >= cls.START_S)
        by_second = collections.Counter(int(at) for at in slow)
        second, most = by_second.most_common(1)[0] if by_second else (None, 0)
        return {"startSeconds": cls.START_S,
                "startShare": round(sum(1 for at in slow if at < cls.START_S) / len(slow), 3) if slow else None,
                "p99AfterStartMs": round(pct(later, 99) * 1000, 2) if later else None,
                "worstSecond": second, "worstSecondShare": round(most / len(slow), 3) if slow else None}

    def summary(self, res, series, gc_log):
        if not self.samples or not os.path.exists(series):
            return None
        t0 = res["startedAt"]
        flights = []
        with open(series) as f:
            for line in f:
                due, lat = line.split("\t")
                flights.append((t0 + float(due) / 1000, float(lat) / 1000))
        if not flights:
            return None
        cut = pct(sorted(lat for _, lat in flights), 99)
        slow = sorted((due, due + lat) for due, lat in flights if lat >= cut)
        # The slow ones' flights as disjoint spans: a time is inside one when it is inside the span that starts
        # last before it.
        spans = []
        for a, b in slow:
            if spans and a <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], b)
            else:
                spans.append([a, b])
        starts = [a for a, _ in spans]
        end = max(due + lat for due, lat in flights)
        run = [s for s in self.samples if t0 <= s.at <= end]

        def in_flight(at):
            i = bisect.bisect_right(starts, at) - 1
            return i >= 0 and at <= spans[i][1]

        tail = [s for s in run if in_flight(s.at)]

        def means(samples):
            if not samples:
                return {"samples": 0}
            events, kinds = collections.Counter(), collections.Counter()
            for x in samples:
                events.update(x.backends)
                kinds.update(x.statements)

            def mean(field):
                return round(sum(getattr(x, field) for x in samples) / len(samples), 3)

            return {"samples": len(samples), "busy": mean("busy"), "steal": mean("steal"),
                    "checkpoint": mean("checkpoint"), "jit": mean("jit"),
                    "backends": {e: round(c / len(samples), 2) for e, c in events.most_common()},
                    "statements": {k: round(c / len(samples), 2) for k, c in kinds.most_common()}}

        def fsync(samples):
            lat = sorted(s for _, s in samples)
            return {"samples": len(lat), "p50Ms": round(pct(lat, 50) * 1000, 2) if lat else None,
                    "maxMs": round(lat[-1] * 1000, 2) if lat else None}

        probes = [(at, s) for at, s in self.fsync.samples if t0 <= at <= end]
        fsyncs = {"run": fsync(probes), "tail": fsync([(at, s) for at, s in probes
                                                       if in_flight(at) or in_flight(at + s)]),
                  "sameDevice": self.bench.same_device_as_data(self.bench.tmp)}
        pauses = self.pauses(gc_log, t0, end)
        tail_pause = sum(secs for at, secs in pauses if in_flight(at))
        return {"run": means(run), "tail": means(tail), "slowCutMs": round(cut * 1000, 2), "slow": len(slow),
                "fsync": fsyncs, "when": self.when(flights, t0, cut),
                "pauses": {"count": len(pauses), "ms": round(sum(secs for _, secs in pauses) * 1000, 1),
                           "maxMs": round(max((secs for _, secs in pauses), default=0) * 1000, 2),
                           "whileSlowMs": round(tail_pause * 1000, 1)},
                "seconds": round(end - t0, 2)}


def profile_text(prof, rate):
    """One line of a run's profile: the machine's CPU and the database's backends by wait event, over the run and
    while its slowest 1 % were in flight (means; 'ms' is per callback, by Little's law)."""
    if not prof or not prof["run"].get("samples"):
        return "no profile"

    def part(m, per_callback):
        top = list(m["backends"].items())[:4]
        text = ", ".join(f"{e} {v:.2f}" + (f" ({v / rate * 1000:.2f} ms)" if per_callback else "") for e, v in top)
        kinds = ", ".join(f"{k} {v:.2f}" for k, v in list(m.get("statements", {}).items())[:4])
        return (f"CPU busy {m['busy'] * 100:.0f} % (of it stolen by the hypervisor {m['steal'] * 100:.0f} %; the "
                f"service's JIT compiler {m.get('jit', 0):.2f} CPUs); backends {text or 'none'}; "
                f"by statement {kinds or 'none'}")

    tail = prof["tail"]
    p = prof["pauses"]
    c = prof.get("checkpoints")
    ckpt = ""
    if c is not None:
        ckpt = (f" | checkpoints started in the run: {c['requested']} requested (WAL volume), {c['timed']} timed; "
                f"checkpointer at work in {prof['run'].get('checkpoint', 0) * 100:.0f} % of the run's samples, "
                f"{tail.get('checkpoint', 0) * 100:.0f} % of the slow ones")
    fs = prof.get("fsync")
    disk = ""
    if fs and fs["run"]["samples"]:
        where = {True: "on PostgreSQL's data disk", False: "not on PostgreSQL's data disk",
                 None: "disk of PostgreSQL's data unknown"}[fs["sameDevice"]]
        slow = (f"{fs['tail']['p50Ms']} / {fs['tail']['maxMs']} ms while a slow one was in flight"
                if fs["tail"]["samples"] else "none while a slow one was in flight")
        disk = (f" | the disk's fdatasync of 8 KiB ({where}) p50 / max: {fs['run']['p50Ms']} / {fs['run']['maxMs']} ms "
                f"over the run, {slow}")
    w = prof.get("when")
    when = ""
    if w and w["startShare"] is not None:
        when = (f" | when: {w['startShare'] * 100:.0f} % of the slowest 1 % were due in the run's first "
                f"{w['startSeconds']:.0f} s (p99 of the callbacks due after them: {w['p99AfterStartMs']} ms); the most in "
                f"one second: {w['worstSecondShare'] * 100:.0f} %, in second {w['worstSecond']}")
    return (f"run: {part(prof['run'], True)} | slowest 1 % (>= {prof['slowCutMs']} ms, {tail.get('samples', 0)} "
            f"samples): {part(tail, False) if tail.get('samples') else 'no sample'}" + when + f" | JVM pauses {p['count']}, "
            f"{p['ms']} ms, max {p['maxMs']} ms, {p['whileSlowMs']} ms while a slow one was in flight" + disk + ckpt)


class SinkReceiver:
    """A real HTTP receiver on loopback for the webhook sink: answers 204 to every POST (keep-alive)."""

    def __init__(self):
        import http.server
        import threading
        outer = self
        self.count = 0
        self.events = 0
        # The CPU seconds its handler threads spent on requests (parsing, counting, answering): the receiver shares
        # the machine with the service it measures, though a real one runs elsewhere (issue 13's CPU budget).
        self.cpu = 0.0
        lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_one_request(self):
                started = time.thread_time()
                try:
                    super().handle_one_request()
                finally:
                    spent = time.thread_time() - started
                    with lock:
                        outer.cpu += spent

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    outer.count += 1
                    outer.events += body.count(b'"eventId"')
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def totals(self):
        """(CPU seconds, POSTs, events) so far: a run's share is the difference of two readings."""
        return self.cpu, self.count, self.events

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class CpuMeter(Sampling):
    """CPU seconds (user + system, from /proc/<pid>/stat) used during a run by the service, the load
    generator and the database's client backends, sampled every 0.25 s so that backends that come
    and go with the run (pgbench's) are counted too."""

    def __init__(self, bench, db, service_pid, client_pid):
        super().__init__()
        self.bench, self.db = bench, db
        self.groups = {"service": {service_pid} if service_pid else set(), "client": {client_pid}}
        self.service_pid = service_pid
        # The service's JIT compiler threads (C1/C2 CompilerThread<n>, "C2 CompilerThre" in comm), by thread id: part of
        # "service", also reported alone as "serviceJit". A thread that ends between samples loses its last 0.25 s.
        self.jit = set()
        self.first, self.last = {}, {}
        self.tick = os.sysconf("SC_CLK_TCK")
        self.asked = 0.0
        # The machine's /proc/stat totals at the first and the last sample: its CPU time, and the steal in it.
        self.machine_first = self.machine_last = None

    def backends(self):
        """The database's backends, by their process titles ("postgres: [CLUSTER:] USER DB HOST(PORT) STATE") read from
        /proc: a query of pg_stat_activity per sample was a psql process and a backend of its own, four a second
        (issue 13). Where the titles say nothing (update_process_title off), pg_stat_activity once a second."""
        found = set()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    title = f.read().split(b"\0")[0].decode(errors="replace").split()
            except OSError:
                continue
            if title[:1] == ["postgres:"] and self.db in title[2:4]:
                found.add(int(entry))
        if found or time.time() - self.asked < 1:
            return found
        self.asked = time.time()
        out = self.bench.psql("postgres", f"SELECT pid FROM pg_stat_activity WHERE datname = '{self.db}'", check=False)
        return {int(x) for x in out.split() if x.isdigit()}

    def sample(self):
        self.machine_last = cpu_ticks()
        self.machine_first = self.machine_first or self.machine_last
        self.groups["postgres"] = self.groups.get("postgres", set()) | self.backends()
        self.jit |= compiler_threads(self.service_pid)
        for group, pids in {**self.groups, "serviceJit": self.jit}.items():
            for pid in pids:
                v = proc_cpu_seconds(pid, self.tick)
                if v is not None:
                    self.first.setdefault(pid, v)
                    self.last[pid] = v

    def loop(self):
        while not self.stop:
            self.sample()
            time.sleep(0.25)

    def __enter__(self):
        self.sample()
        return super().__enter__()

    def seconds(self):
        out = {g: sum(self.last.get(p, 0) - self.first.get(p, 0) for p in pids)
               for g, pids in {**self.groups, "serviceJit": self.jit}.items()}
        if self.machine_first:
            # "machine": every CPU's time over the run; "steal": the part of it the hypervisor gave to other guests
            # (a shared VM: a run whose CPUs were stolen is slower with the service unchanged).
            (_, total0, steal0), (_, total1, steal1) = self.machine_first, self.machine_last
            out["machine"] = (total1 - total0) / self.tick
            out["steal"] = (steal1 - steal0) / self.tick
        return out


def compiler_threads(pid):
    """The JVM `pid`'s JIT compiler threads (C1/C2 CompilerThread<n>) as /proc paths ("PID/task/TID")."""
    found = set()
    if not pid:
        return found
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().startswith(("C1 Compiler", "C2 Compiler")):
                    found.add(f"{pid}/task/{tid}")
        except OSError:
            continue
    return found


def proc_cpu_seconds(path, tick):
    """User + system CPU seconds of /proc/`path` (a process, or "PID/task/TID"), or None when it is gone."""
    try:
        with open(f"/proc/{path}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick
    except (OSError, IndexError, ValueError):
        return None


def cpu_ticks():
    """(busy, all, stolen) ticks of every CPU so far, from /proc/stat's first line (user, nice, system, idle, iowait,
    irq, softirq, steal, ...): busy is all but idle and iowait, stolen the time the hypervisor gave to other guests."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v), (v[7] if len(v) > 7 else 0)


def steal_share(run):
    """The share of the machine's CPU time the hypervisor took during `run` (CpuMeter), or None."""
    c = run.get("cpu") or {}
    return c["steal"] / c["machine"] if c.get("machine") else None


def pct_text(share):
    return "-" if share is None else f"{share * 100:.0f} %"


def jit_cores(run):
    """The share of a CPU the service's JIT compiler threads used during `run` (CpuMeter's serviceJit)."""
    c = run.get("cpu") or {}
    return (c.get("serviceJit") or 0) / max(float(run.get("seconds") or 0), 0.001)


class Service:
    def __init__(self, proc, port, logfile, gc_log):
        self.proc = proc
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log = logfile
        self.gc_log = gc_log   # the JVM's safepoints (-Xlog:safepoint, wall-clock times)

    def memory(self):
        out = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(("VmHWM", "VmRSS")):
                    k, v = line.split(":")
                    out[k.strip().lower().replace("vm", "") + "_mb"] = int(v.split()[0]) / 1024
        return out


def http(method, url, token=None, body=None, timeout=10):
    req = urllib.request.Request(url, method=method, data=body)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError):
        return 0, ""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(sorted_values, p):
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def cpu(run, count):
    c = run.get("cpu")
    if not c or not count:
        return ""
    cells = ["-" if c.get(g) is None or (g == "service" and not c.get(g)) else f"{c[g] * 1e6 / count:.0f}"
             for g in ("service", "client", "postgres")]
    if c.get("service") and c.get("serviceJit") is not None:
        cells[0] += f" ({c['serviceJit'] * 1e6 / count:.0f})"
    st = steal_share(run)
    return " / ".join(cells) + ("" if st is None else f"; steal {pct_text(st)}")


def cpu_of(run, group):
    """CPU µs per callback of one group ("service", "client", "postgres") of a run."""
    c, n = run.get("cpu") or {}, run.get("requests") or 0
    return f"{c[group] * 1e6 / n:.0f}" if c.get(group) is not None and n else "-"


def yes(b):
    return "yes" if b else "**no**"


def tail(path, n=3000):
    try:
        with open(path) as f:
            return f.read()[-n:]
    except OSError:
        return ""


def strip_counts(summary):
    return summary


def parse_override(text):
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def median_run(runs):
    """The run with the median p99 of an odd number of open loops (the lower middle of an even number): one 20 s
    open loop's tail on this shared 2-core machine swings by up to 4x, and one slow WAL fsync (a COMMIT waiting
    0.6 s on IO:WALSync, issue 13) decides a run's p99 alone."""
    return sorted(runs, key=lambda r: r["latencyMs"]["p99"])[(len(runs) - 1) // 2]


def runs_of(runs):
    return f"the run with the median p99 of {len(runs)}" if len(runs) > 1 else "one run"


def p99s_of(runs):
    return (f"; p99 of each run: {' / '.join(str(r['latencyMs']['p99']) for r in runs)} ms" if len(runs) > 1 else "") \
        + wal_of_runs(runs)


def wal_of_runs(runs):
    """Each run's WAL segments used against the recycled ones ahead when it started (Bench.wal_reserve): a run that
    used more created the rest, each a stall of every commit."""
    w = [r.get("wal") for r in runs]
    if not all(x and x.get("segmentsAhead") is not None for x in w):
        return ""
    pairs = ", ".join("%.0f / %d" % (x["segmentsUsed"], x["segmentsAhead"]) for x in w)
    return f"; WAL segments used / recycled ahead at the start: {pairs}"


def jvm_opts_of_scripts_run():
    with open(os.path.join(ROOT, "scripts", "run")) as f:
        m = re.search(r"ORDERGATE_JAVA_OPTS:-([^}]*)}", f.read())
    return m.group(1).split() if m else []


def jvm_opts_of_scripts_replay():
    """The load generator's JVM flags, as scripts/replay runs it (a lighter JIT and GC)."""
    try:
        with open(os.path.join(ROOT, "scripts", "replay")) as f:
            m = re.search(r"ORDERGATE_TOOL_JAVA_OPTS:-([^}]*)}", f.read())
    except OSError:
        return []
    return m.group(1).split() if m else []


def secret_of_channel():
    with open(os.path.join(ROOT, "conf", "config.json")) as f:
        return json.load(f)["payments"]["channels"][CHANNEL]["secrets"][0]


def claim_statement():
    with open(os.path.join(ROOT, "src", "main", "java", "dev", "ordergate", "db", "SweepSql.java")) as f:
        m = re.search(r'CLAIM_DUE = """(.*?)""";', f.read(), re.S)
    return " ".join(m.group(1).split())


def check_replay(jar):
    r = subprocess.run(["java", "-jar", jar, "replay", "--help"], capture_output=True, text=True)
    if r.returncode != 0 or "replay run" not in r.stdout:
        raise SystemExit(f"{jar} has no replay command (branch drill not merged yet?); "
                         "set BENCH_REPLAY_JAR to a jar that has it")


def machine_facts(b):
    def sh(cmd):
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip() or platform.processor()
    mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
    return {
        "nproc": sh("nproc"), "cpu": cpu, "mem": mem,
        "pg": b.psql("postgres", "SELECT version()"),
        "sync": b.psql("postgres", "SHOW synchronous_commit"), "sb": b.psql("postgres", "SHOW shared_buffers"),
        "wal": ", ".join(f"{k}={b.psql('postgres', 'SHOW ' + k)}" for k in ("min_wal_size", "max_wal_size", "wal_init_zero")),
        "java": " / ".join(sh("java -version 2>&1").splitlines()),
        "commit": sh(f"git -C {ROOT} rev-parse --short HEAD") + (" (dirty)" if sh(f"git -C {ROOT} status --porcelain") else ""),
    }


def main():
    ap = argparse.ArgumentParser(description="ordergate benchmarks (issue 6); see the README, section Benchmarks")
    ap.add_argument("--quick", action="store_true", help="short smoke version (< 2 min); no timing is asserted")
    ap.add_argument("--db-url", default=os.environ.get("BENCH_DB_URL", "postgresql://postgres@127.0.0.1:5432/postgres"),
                    help="any database on the server to use; scratch databases are created next to it")
    ap.add_argument("--out", default=None, help="results file (default bench/RESULTS.md; --quick: target/bench-quick.md)")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="override a service config key for every service the bench starts, e.g. "
                         "--set callbacks.maxInFlight=8 (repeatable; noted in the results)")
    args = ap.parse_args()
    out = args.out or os.path.join(ROOT, *(("target", "bench-quick.md") if args.quick else ("bench", "RESULTS.md")))
    b = Bench(args)

    def interrupted(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    try:
        text = b.run()
    finally:
        for p in list(b.procs):
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        for db in list(b.dbs):
            b.drop_db(db)
        if os.environ.get("BENCH_KEEP_TMP") is None:
            shutil.rmtree(b.tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(text)
    log(f"written {out}")


if __name__ == "__main__":
    main()
