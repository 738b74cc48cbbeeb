"""An open-loop HTTP/1.1 load generator for pre-signed callbacks, lean enough to share a 2-core machine with
what it measures (issue 13): the replay tool's JVM spent 110-160 µs of CPU per callback at half load, as much
as the service, so the machine was saturated by its own load generator; this one spends a fraction of that.

Request i is due at start + i / rate, whatever the answers do. A due request goes out on an idle keep-alive
connection, or waits for one; its latency is counted from when it was due (coordinated omission corrected,
as the replay tool does). One thread, non-blocking sockets, epoll.

Usage: python3 bench/openloop.py --url http://127.0.0.1:PORT --path /api/callbacks/sandbox --file F
       --rate R --connections C [--report OUT.json]
F: one request a line, "<signature header value>\\t<body>" (what bench.py's signed_callbacks() writes). Every
connection first sends one GET --warm-path (default /health/live) before the clock starts. Prints one line;
the report holds requests, answered, seconds, throughputPerSecond, latencyMs {p50, p99, p99.9, max},
statuses, outcomes, errors.
"""
import argparse
import collections
import json
import selectors
import socket
import sys
import time
import urllib.parse

from bench import pct  # this file's folder is on the path when it runs as a script

SIGNATURE_HEADER = "X-Ordergate-Signature"


def build(host, path, line):
    sig, body = line.rstrip("\n").split("\t", 1)
    body = body.encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"{SIGNATURE_HEADER}: {sig}\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    return head + body


def response_length(buf):
    """The whole response's length once its head is in `buf` (head, blank line and Content-Length body), else -1."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return -1
    length = 0
    for h in buf[:end].split(b"\r\n")[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    return end + 4 + length


class Conn:
    __slots__ = ("sock", "buf", "due", "need")

    def __init__(self, sock):
        self.sock, self.buf, self.due, self.need = sock, b"", 0, -1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--file", required=True)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--connections", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds a request may take")
    ap.add_argument("--report")
    ap.add_argument("--warm-path", default="/health/live",
                    help="GET this once on every connection before the clock starts ('' for none)")
    ap.add_argument("--series", help="also write one line per answered request: due (ms from the start), latency ms")
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    host, port = u.hostname, u.port or 80
    with open(a.file) as f:
        requests = [build(f"{host}:{port}", a.path, line) for line in f if line.strip()]
    sel = selectors.EpollSelector()

    warm = f"GET {a.warm_path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode() if a.warm_path else None

    def connect(warm=None):
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if warm:
            # One cheap request before the clock: the service sets a connection up on its first request, and
            # 256 fresh ones at once are a start-up transient (latencies of 25 to 100 ms in the first half second),
            # not the steady state the run measures. A connection that replaces a broken one mid-run goes cold.
            s.sendall(warm)
            got, need = b"", -1
            while need < 0 or len(got) < need:
                chunk = s.recv(65536)
                if not chunk:
                    raise SystemExit("openloop: the service closed a connection during its warm-up request")
                got += chunk
                need = response_length(got)
        s.setblocking(False)
        c = Conn(s)
        sel.register(s, selectors.EVENT_READ, c)
        return c

    # First in, first out: every connection takes its turn, so none sits idle long enough for the service's
    # keep-alive timeout to close it under a request.
    idle = collections.deque(connect(warm) for _ in range(a.connections))
    n = len(requests)
    interval = 1e9 / a.rate
    lat, dues, statuses, outcomes = [], [], {}, {}
    errors = answered = sent = 0

    def replace(c, why):
        """A connection that broke (closed by the service, reset, a failed send) gives way to a new one; the
        request on it, if any, failed. Answers the failures counted (0 or 1)."""
        sel.unregister(c.sock)
        c.sock.close()
        if c in idle:
            idle.remove(c)
        idle.append(connect())
        if c.due:
            statuses[why] = statuses.get(why, 0) + 1
            return 1
        return 0
    waiting = []            # due times of requests with no idle connection yet (FIFO from wi)
    wi = scheduled = 0
    deadline_ns = a.timeout * 1e9
    clock = time.monotonic_ns
    started_at = time.time()
    start = clock()
    last_done = start
    while answered + errors < n:
        now = clock()
        # Every request due by now joins the queue; it goes out as soon as a connection is idle.
        while scheduled < n and start + scheduled * interval <= now:
            waiting.append(start + scheduled * interval)
            scheduled += 1
        while wi < len(waiting) and idle:
            c = idle.popleft()
            c.due, c.buf, c.need = waiting[wi], b"", -1
            wi += 1
            sent += 1
            try:
                c.sock.send(requests[sent - 1])
            except OSError:
                errors += replace(c, "error")
        if wi > 4096:
            del waiting[:wi]
            wi = 0
        wait = max(0.0, (start + scheduled * interval - clock()) / 1e9) if scheduled < n else 0.05
        for key, _ in sel.select(min(wait, 0.05)):
            c = key.data
            try:
                chunk = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                errors += replace(c, "closed")
                continue
            c.buf += chunk
            if c.need < 0:
                c.need = response_length(c.buf)
                if c.need < 0:
                    continue
            if len(c.buf) < c.need:
                continue
            done = clock()
            last_done = done
            head = c.buf[:c.buf.find(b"\r\n")].decode("latin-1")
            status = head.split(" ")[1]
            statuses[status] = statuses.get(status, 0) + 1
            body = c.buf[c.buf.find(b"\r\n\r\n") + 4:c.need].decode()
            at = body.find('"outcome":"')
            if at >= 0:
                oc = body[at + 11:body.find('"', at + 11)]
                if '"duplicate":true' in body:
                    oc += "/duplicate"
                outcomes[oc] = outcomes.get(oc, 0) + 1
            lat.append((done - c.due) / 1e6)
            dues.append((c.due - start) / 1e6)
            answered += 1
            c.buf, c.need, c.due = b"", -1, 0
            idle.append(c)
        if clock() - start > (n * interval) + deadline_ns:
            statuses["timeout"] = n - answered - errors
            errors = n - answered
            break
    seconds = (last_done - start) / 1e9
    if a.series:
        with open(a.series, "w") as f:
            f.writelines(f"{d:.3f}\t{l:.3f}\n" for d, l in zip(dues, lat))
    lat.sort()
    res = {"requests": n, "answered": answered, "seconds": round(seconds, 3),
           "throughputPerSecond": answered / seconds if seconds > 0 else 0,
           "latencyMs": {"p50": round(pct(lat, 50), 2), "p99": round(pct(lat, 99), 2),
                         "p99.9": round(pct(lat, 99.9), 2), "max": round(lat[-1], 2) if lat else 0},
           "statuses": statuses, "outcomes": outcomes, "errors": errors, "rate": a.rate, "startedAt": started_at}
    if a.report:
        with open(a.report, "w") as f:
            json.dump(res, f)
    print(f"openloop: {res['throughputPerSecond']:.0f}/s asked {a.rate:.0f}/s, p50 {res['latencyMs']['p50']} ms, "
          f"p99 {res['latencyMs']['p99']} ms, p99.9 {res['latencyMs']['p99.9']} ms, statuses {statuses}")
    sys.exit(0 if errors == 0 else 1)


if __name__ == "__main__":
    main()
