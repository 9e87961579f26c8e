#!/usr/bin/env python3
"""Unmodified perftest through softib's drop-in libibverbs.so.1, against the native C++ API
on the same data path, in the same invocation (issue 6's target: ib_write_bw and ib_send_lat
within 10% of bench_verbs).

Both sides of each figure run on one private fabric (`softib up`, the default topology:
host-a and host-b behind one switch), the server as host-a, the client as host-b, rounds
interleaved (native, drop-in, native, drop-in, ...) and the best of --runs rounds kept, with
the cache-line probe of bench/datapath.py in every round. The two programs are asked for the
same work:

  bandwidth  perftest `ib_write_bw -s 65536 -n ITERS` (tx depth 128, its defaults) against
             `bench_verbs bw --op write --size 65536 --window 128 --iters ITERS`
  latency    perftest `ib_send_lat -s 2 -n ITERS` (its one-way time = half the round trip)
             against `bench_verbs lat --size 2 --iters ITERS`

One JSON object per line, as datapath.py's:
  {"bench": "dropin_ib_write_bw", "size": 65536, "value": 9100.0, "unit": "MBps",
   "anchor": "native_api_write_bw", "anchor_value": 9400.0, "ratio": 0.968, "better": "higher",
   "target": 0.9, "met": true, ...}
For bandwidth the ratio is drop-in / native (target: at least 0.9); for latency native /
drop-in (target: at least 0.9, i.e. the drop-in no more than ~10% slower). perftest's MB/sec
are MiB/s (it divides by 2^20): converted to 10^6 bytes/s here. value/anchor_value: the best
round of each; "values"/"anchor_values" hold every round.

  python3 bench/dropin.py [--quick] [--runs 3] [--iters-bw 20000] [--iters-lat 20000] [--build build/release]

The bandwidth figure uses 20,000 iterations (perftest defaults to 5,000): the first few
milliseconds of a connection are slower (see the issue notes), and both programs are compared
on the steady state.
"""

import argparse
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import datapath  # noqa: E402  (the process and probe helpers: one copy of them)
from datapath import AnchorError, free_port, is_listening, json_lines, run, spawn, stop, stop_all, tail  # noqa: E402

MIB = 1 << 20


class Fabric:
    """A private softibd for the run."""

    def __init__(self, softib):
        self.softib = softib
        self.name = f"dropin-{os.getpid()}"

    def __enter__(self):
        rc, out, err = run([self.softib, "--fabric", self.name, "up"], timeout=60)
        if rc != 0:
            raise SystemExit(f"dropin: softib up failed: {tail(err or out)}")
        return self

    def __exit__(self, *exc):
        run([self.softib, "--fabric", self.name, "down"], timeout=30)

    def command(self, host, argv):
        return [self.softib, "--fabric", self.name, "run", "--device", host, "--"] + argv


def perftest_row(text, size):
    """perftest's result row for `size`: "#bytes #iterations <figures...>", all numbers."""
    for line in text.splitlines():
        fields = line.split()
        try:
            numbers = [float(f) for f in fields]
        except ValueError:
            continue
        if len(numbers) >= 4 and numbers[0] == size:
            return numbers[2:]
    raise AnchorError("no result row for size %d: %s" % (size, tail(text, 6)))


def perftest(fabric, argv, size, timeout=120.0):
    """Runs a perftest server (host-a) and client (host-b) pair; returns the client's row."""
    last = None
    for _ in range(3):  # a port somebody else took: try another
        port = free_port()
        server = spawn(fabric.command("host-a", argv + ["-p", str(port)]))
        try:
            deadline = time.monotonic() + 20
            while not is_listening(server.pid, port):
                if server.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            if not is_listening(server.pid, port):
                last = AnchorError("server did not listen: " + tail(server.stderr.read() if server.poll() is not None else ""))
                continue
            rc, out, err = run(fabric.command("host-b", argv + ["-p", str(port), "127.0.0.1"]), timeout=timeout)
            try:
                server.wait(timeout=10)
            except Exception:
                pass
            if rc != 0:
                raise AnchorError(f"{argv[0]} client exit {rc}: " + tail(err or out, 6))
            return perftest_row(out, size)
        finally:
            stop(server)
    raise last


def native(build, argv, bench, key):
    rc, out, err = run([os.path.join(build, "bench", "bench_verbs")] + argv, timeout=120)
    for obj in json_lines(out):
        if obj.get("bench") == bench and key in obj and rc == 0:
            return float(obj[key])
    raise AnchorError(f"bench_verbs {' '.join(argv)}: exit {rc}: " + tail(err or out))


def probe(build):
    """The cache-line ping-pong between the two cores (ns one way, min of its runs): the
    machine's state for this round (datapath.py's probe)."""
    exe = os.path.join(build, "bench", "anchors", "anchor_cacheline_pingpong")
    if not os.path.exists(exe):
        return None
    rc, out, _ = run([exe, "--iters", "10000", "--runs", "9", "--max-ms", "50"], timeout=30)
    for obj in json_lines(out):
        if obj.get("bench") == "cacheline_pingpong" and rc == 0:
            return obj.get("one_way_ns_min")
    return None


def rounds(n, steps):
    results = {name: [] for name, _ in steps}
    probes = []
    for _ in range(n):
        probes.append(probe_fn())
        for name, thunk in steps:
            try:
                results[name].append(thunk())
            except AnchorError as e:
                results[name].append(e)
    return results, probes


def emit(bench, size, unit, better, ours, anchor_name, anchor, probes, extra):
    ok = [v for v in ours if not isinstance(v, Exception)]
    ok_a = [v for v in anchor if not isinstance(v, Exception)]
    pick = max if better == "higher" else min
    value = pick(ok) if ok else None
    anchor_value = pick(ok_a) if ok_a else None
    ratio = None
    if value and anchor_value:
        ratio = value / anchor_value if better == "higher" else anchor_value / value
    line = {
        "bench": bench, "size": size, "value": value, "unit": unit, "anchor": anchor_name,
        "anchor_value": anchor_value, "ratio": round(ratio, 4) if ratio else None, "better": better,
        "target": 0.9, "met": bool(ratio and ratio >= 0.9),
        "values": [None if isinstance(v, Exception) else round(v, 4) for v in ours],
        "anchor_values": [None if isinstance(v, Exception) else round(v, 4) for v in anchor],
        "probe_cacheline_ns": [p for p in probes if p is not None],
    }
    errors = [str(v) for v in ours + anchor if isinstance(v, Exception)]
    if errors:
        line["errors"] = errors
    line.update(extra)
    print(json.dumps(line), flush=True)
    return line


probe_fn = None


def main():
    global probe_fn
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build", "release"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters-bw", type=int, default=20000)
    ap.add_argument("--iters-lat", type=int, default=20000)
    ap.add_argument("--quick", action="store_true", help="2 rounds, fewer iterations")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.iters_bw, args.iters_lat = 2, 10000, 5000
    softib = os.path.join(args.build, "bin", "softib")
    for need in (softib, os.path.join(args.build, "bench", "bench_verbs"),
                 os.path.join(args.build, "lib", "libibverbs.so.1")):
        if not os.path.exists(need):
            raise SystemExit(f"dropin: {need} is missing (make release)")
    probe_fn = lambda: probe(args.build)  # noqa: E731
    signal.signal(signal.SIGTERM, datapath._on_signal)
    started = time.monotonic()
    lines = []
    try:
        with Fabric(softib) as fabric:
            size = 65536
            res, probes = rounds(args.runs, [
                ("native", lambda: native(args.build, ["bw", "--op", "write", "--size", str(size), "--window", "128",
                                                      "--iters", str(args.iters_bw)], "verbs_rc_write_bw", "MBps")),
                ("dropin", lambda: perftest_row_value(fabric, ["ib_write_bw", "-s", str(size), "-n", str(args.iters_bw)],
                                                      size, column=1, scale=MIB / 1e6)),
            ])
            lines.append(emit("dropin_ib_write_bw", size, "MBps", "higher", res["dropin"], "native_api_write_bw",
                              res["native"], probes, {"iters": args.iters_bw, "tx_depth": 128}))
            size = 2
            res, probes = rounds(args.runs, [
                ("native", lambda: native(args.build, ["lat", "--size", str(size), "--iters", str(args.iters_lat)],
                                          "verbs_rc_send_lat", "half_rtt_us")),
                ("dropin", lambda: perftest_row_value(fabric, ["ib_send_lat", "-s", str(size), "-n", str(args.iters_lat)],
                                                      size, column=3)),
            ])
            lines.append(emit("dropin_ib_send_lat", size, "us", "lower", res["dropin"], "native_api_send_lat",
                              res["native"], probes, {"iters": args.iters_lat, "figure": "t_avg (one way)"}))
    finally:
        stop_all()
    print(json.dumps({"summary": "dropin", "runs": args.runs, "seconds": round(time.monotonic() - started, 1),
                      "met": all(l["met"] for l in lines)}), flush=True)


def perftest_row_value(fabric, argv, size, column, scale=1.0):
    """perftest's figure in `column` of its result row (bw: 0 peak, 1 average, 2 msg rate;
    lat: 0 t_min, 1 t_max, 2 t_typical, 3 t_avg, ...)."""
    return perftest(fabric, argv, size)[column] * scale


if __name__ == "__main__":
    main()
