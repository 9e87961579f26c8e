#!/usr/bin/env python3
"""Where the ping-pong's slow round trips go (a diagnostic, not a target: it has no anchor).

The 8-byte ping-pong's mean half round trip sits above its median mostly because of round
trips of 10 us and more (`bench_verbs lat` reports their number and their share of the run).
This sets each of them against the context switches of both vCPUs while it lasted.

It runs `bench_verbs lat --slow-log FILE` under
`perf record -k CLOCK_MONOTONIC -e sched:sched_switch -a` (both stamp CLOCK_MONOTONIC) and puts
each slow round trip in one class, the first that applies:

- other: a switch to or from a task that is not the benchmark's (kernel threads, softibd,
  other programs): something else took a vCPU.
- own: switches among the benchmark's own threads only (an engine thread woken onto a vCPU
  where an application thread polled, or one of them going to sleep).
- none: no switch at all. The guest saw nothing: the hypervisor held a vCPU, or our threads
  ran and waited on each other. A plain cache-line ping-pong between two threads has such
  stalls too.

One JSON object a run, then a summary with each figure's median over the runs:

  {"bench": "lat_stalls", "run": 1, "half_rtt_us": 0.171, "half_rtt_us_p50": 0.155,
   "slow_rtts": 402, "slow_share": 0.046, "own": {"rtts": 250, "share": 0.031},
   "other": {...}, "none": {...}}

share is the class's slow round trips' time over the whole timed run.

  python3 bench/stalls.py [--runs N] [--iters N] [--bench PATH] [-- extra bench_verbs args]

Needs perf (Debian's linux-perf) and the right to trace the scheduler (root here).
"""

import argparse
import bisect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
BENCH_COMM = "bench_verbs"
IDLE_PREFIX = "swapper"
CLASSES = ("other", "own", "none")


def read_slow_log(path):
    """[(start_s, end_s, length_us)] sorted by end, from bench_verbs --slow-log."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if len(parts) != 2:
                sys.exit(f"stalls.py: {path}:{n}: expected 'END_NS LENGTH_US', got {line.strip()!r}")
            end_s = float(parts[0]) / 1e9
            us = float(parts[1])
            out.append((end_s - us / 1e6, end_s, us))
    out.sort(key=lambda r: r[1])
    return out


def read_switches(perf_data):
    """[(time_s, prev_comm, next_comm)] from perf's sched_switch records."""
    text = subprocess.run(["perf", "script", "-i", perf_data, "-F", "time,trace", "--ns"], capture_output=True,
                          text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        try:
            t = float(fields[0].rstrip(":"))
        except ValueError:
            continue
        kv = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        if "prev_comm" in kv and "next_comm" in kv:
            out.append((t, kv["prev_comm"], kv["next_comm"]))
    return out


def ours_or_idle(comm):
    return comm == BENCH_COMM or comm.startswith(IDLE_PREFIX)


def classify(slow, switches):
    """Counts and microseconds of slow round trips per class."""
    times = [s[0] for s in switches]
    counts = {c: 0 for c in CLASSES}
    total_us = {c: 0.0 for c in CLASSES}
    for start, end, us in slow:
        lo = bisect.bisect_left(times, start)
        hi = bisect.bisect_right(times, end)
        inside = switches[lo:hi]
        if any(not ours_or_idle(p) or not ours_or_idle(n) for _, p, n in inside):
            c = "other"
        elif inside:
            c = "own"
        else:
            c = "none"
        counts[c] += 1
        total_us[c] += us
    return counts, total_us


def one_run(args, run, tmp):
    slow_log = os.path.join(tmp, f"slow.{run}")
    perf_data = os.path.join(tmp, f"perf.{run}")
    cmd = ["perf", "record", "-q", "-k", "CLOCK_MONOTONIC", "-e", "sched:sched_switch", "-a", "-o", perf_data, "--",
           args.bench, "lat", "--size", "8", "--iters", str(args.iters), "--slow-log", slow_log] + args.extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lat = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            obj = json.loads(line)
            if obj.get("bench") == "verbs_rc_send_lat":
                lat = obj
    if p.returncode != 0 or lat is None:
        sys.exit(f"stalls.py: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    slow = read_slow_log(slow_log)
    counts, total_us = classify(slow, read_switches(perf_data))
    run_us = lat["half_rtt_us"] * 2 * lat["iters"]
    row = {"bench": "lat_stalls", "run": run, "half_rtt_us": lat["half_rtt_us"],
           "half_rtt_us_p50": lat["half_rtt_us_p50"], "slow_rtts": len(slow),
           "slow_share": round(sum(s[2] for s in slow) / run_us, 4)}
    for c in CLASSES:
        row[c] = {"rtts": counts[c], "share": round(total_us[c] / run_us, 4)}
    return row


def summary(rows):
    med = statistics.median
    out = {"summary": "lat_stalls", "runs": len(rows),
           "half_rtt_us": med(r["half_rtt_us"] for r in rows),
           "half_rtt_us_p50": med(r["half_rtt_us_p50"] for r in rows),
           "slow_rtts": med(r["slow_rtts"] for r in rows),
           "slow_share": med(r["slow_share"] for r in rows)}
    for c in CLASSES:
        out[c] = {"rtts": med(r[c]["rtts"] for r in rows), "share": round(med(r[c]["share"] for r in rows), 4)}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--iters", type=int, default=1000000)
    ap.add_argument("--bench", default=os.path.join(TOP, "build", "release", "bench", "bench_verbs"))
    ap.add_argument("extra", nargs="*", help="more bench_verbs lat arguments (after --)")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("stalls.py: needs perf (apt install linux-perf)")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"stalls.py: no {args.bench} (make release)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="softib-stalls-") as tmp:
        for run in range(1, args.runs + 1):
            rows.append(one_run(args, run, tmp))
            print(json.dumps(rows[-1]), flush=True)
    print(json.dumps(summary(rows)))


if __name__ == "__main__":
    main()
