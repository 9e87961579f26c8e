#!/usr/bin/env python3
"""Instructions a message on the shared-memory data path, counted with callgrind (a
diagnostic, not a target: it has no anchor, and it is the same on near and far vCPUs, which
the timed figures of bench/datapath.py are not).

It runs `bench_verbs rate` (64-byte SENDs in batches of 32) or `bench_verbs lat` (an 8-byte
ping-pong) under `valgrind --tool=callgrind --trace-children=yes`, reads each bench_verbs
process's inclusive counts with callgrind_annotate, and divides them by the messages that
process handled. One JSON object per line:

  {"bench": "instructions_per_message", "mode": "rate", "size": 64, "side": "sender",
   "function": "Device::progress", "value": 465.2, "messages": 220000}

- side: "sender" or "receiver" in rate mode (the process whose Device::progress outweighs its
  Device::receive sends), "a"/"b" in lat mode (both do both).
- function: the inclusive count of that function (and all it calls) a message. The stable
  figures are Device::progress on the sender (the requester and the link's send side) and
  Device::receive on the receiver; QueuePair::post_send also holds the ACKs a post's step
  happens to take, which move between runs.
- function "loop": all of bench_verbs' rate() or latency() loop on that side, polls that
  found nothing included (so it also moves with how far one side waits on the other).
  UCX's ucx_perftest tag_bw over posix, counted the same way, takes ~550 a message on the
  sender and ~530 on the receiver (valgrind 3.19, UCX 1.13: a rough reference, not a target).
- In lat mode a "message" is a round trip: each side sends one SEND and receives one (and
  an ACK each way), and the figures include the polling that waits for the reply.
- messages: what bench_verbs ran, warm-up included (rate: max(iters/10, 10000) rounded up to
  32, plus iters; lat: iters + max(iters/10, 100) round trips).

--mode critical counts only the 8-byte ping-pong's critical path: the instructions from the
moment a poll's step finds the peer's message in its inbox to the moment the reply's record is
published (src/link/critical_path.hpp), the time a message waits for, which a timed run on
these vCPUs cannot split from the cache lines' travel. It builds bench_verbs with the marks
(the `critpath` preset, build/critpath) and reports the answering side (the forked child:
its every path ends with its reply; the timing side's last one runs on into the run's end):
function "path" is the whole path a message, the others their share of it, and messages
the paths counted (a message that a post's step or the engine takes first starts none).
--perftest (lat and critical) runs perftest's ib_send_lat loop instead, as bench/dropin.py's
native anchor does (`bench_verbs lat --size 2 --perftest`: every send signaled and awaited
right after its post, no inline data): its path also takes the peer's ACK.

--dropin (critical only) counts the same path through the drop-in libibverbs.so.1: perftest's
own `ib_send_lat -s 2` on a private fabric of the critpath build (`softib up`, both sides under
callgrind, host-a the server and answering side), so that bench/dropin.py's comparison can be
read in instructions: its "path" against --perftest's, the drop-in's post_send, post_recv and
poll_cq (inclusive: the core's work they call included), and "ib_send_lat" perftest's own
code (its self cost, in its binary).

  python3 bench/instructions.py [--mode rate|lat|critical] [--perftest | --dropin] [--iters N] [--bench PATH]

Needs valgrind (apt install valgrind); a run of the default 200,000 messages takes seconds.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

# The functions reported, by the name callgrind_annotate prints (without the file prefix).
FUNCTIONS = {
    "QueuePair::post_send": "softib::QueuePair::post_send(",
    "Device::progress": "softib::rc::Device::progress(",
    "ShmLink::reserve": "softib::link::ShmLink::reserve_frame(",  # reserve() and reserve_burst() call it
    "ShmLink::commit": "softib::link::ShmLink::commit(",
    "ShmLink::poll": "softib::link::ShmLink::poll(",
    "Device::receive": "softib::rc::Device::receive(",
    "Device::execute": "softib::rc::Device::execute(",
    "parse_transport_frame": "softib::packet::parse_transport_frame(",
    "QueuePair::post_recv": "softib::QueuePair::post_recv(",
    "Context::poll_cq": "softib::provider::Context::poll_cq(",  # a poll, the inline step it runs included
    # --dropin: the drop-in's ibv_context_ops slots (src/compat/verbs/datapath.cpp).
    "drop-in post_send": "softib::compat::(anonymous namespace)::post_send(",
    "drop-in post_recv": "softib::compat::(anonymous namespace)::post_recv(",
    "drop-in poll_cq": "softib::compat::(anonymous namespace)::poll_cq(",
    # The whole of one side's loop in bench_verbs (posts, polls and what they run): the
    # figure to set against another transport's instructions a message.
    "loop": ("(anonymous namespace)::rate((anonymous namespace)::Side&",
             "(anonymous namespace)::latency((anonymous namespace)::Side&"),
}

# --mode critical: the whole of what was collected (only the path, in that build).
TOTAL = "PROGRAM TOTALS"

LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def inclusive_counts(annotate_text):
    """{report name: inclusive count} from `callgrind_annotate --inclusive=yes` output. A
    function may be listed several times (its inlined parts are attributed to their own files);
    the largest entry is the whole function's."""
    counts = {}
    for line in annotate_text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        value = int(m.group(1).replace(",", ""))
        name = m.group(2)
        if name.strip() == TOTAL:
            counts["path"] = value
            continue
        for report, patterns in FUNCTIONS.items():
            if isinstance(patterns, str):
                patterns = (patterns,)
            if any(p in name for p in patterns) and value > counts.get(report, -1):
                counts[report] = value
    return counts


def profiled_program(annotate_text):
    """The basename of the program a callgrind_annotate output profiled, or None."""
    for line in annotate_text.splitlines():
        if line.startswith("Profiled target:"):
            words = line.split()
            return os.path.basename(words[2]) if len(words) > 2 else None
    return None


MARKER = re.compile(r"softib_critical_path_begun \(([\d,]+)x\)")


def path_count(tree_text):
    """--mode critical: the paths counted, from `callgrind_annotate --tree=calling` output (the
    calls of src/link/critical_path.hpp's marker, made once at each path's start; its one call
    site makes the largest figure the count), or None."""
    counts = [int(m.group(1).replace(",", "")) for m in MARKER.finditer(tree_text)]
    return max(counts) if counts else None


def profiled_pid(annotate_text):
    """The PID of the process a callgrind_annotate output profiled, or None."""
    for line in annotate_text.splitlines():
        if line.startswith("Profiled target:"):
            m = re.search(r"\(PID (\d+)", line)
            return int(m.group(1)) if m else None
    return None


def messages(mode, iters):
    """The messages bench_verbs runs for `iters` (bench/verbs.cpp rate() and latency())."""
    if mode == "rate":
        warm = (max(iters // 10, 10000) + 31) // 32 * 32
        return warm + iters
    return iters + max(iters // 10, 100)


def sides(mode, per_process):
    """Names each process's counts: in rate mode the sender is the one whose progress
    outweighs its receive; in lat mode the two are "a" and "b" in the order given; in critical
    mode only the answering side, the later PID (bench_verbs forks it), is kept.
    per_process: [(pid, counts)]."""
    if mode == "critical":
        return [("answering", max(per_process, key=lambda p: p[0])[1])] if per_process else []
    per_process = [counts for _, counts in per_process]
    if mode != "rate":
        return list(zip(["a", "b"], per_process))
    named = []
    for counts in per_process:
        sender = counts.get("Device::progress", 0) > counts.get("Device::receive", 0)
        named.append(("sender" if sender else "receiver", counts))
    return named


def annotate(profile, *options):
    """callgrind_annotate's listing of `profile` with `options`."""
    return subprocess.run(["callgrind_annotate", *options, profile], capture_output=True, text=True,
                          check=True).stdout


def perftest_self(self_text):
    """perftest's own instructions (its binary's functions, unnamed: Debian strips it) from
    `callgrind_annotate --inclusive=no` output."""
    total = 0
    for line in self_text.splitlines():
        m = LINE.match(line)
        if m and "[/usr/bin/ib_send_lat]" in m.group(2):
            total += int(m.group(1).replace(",", ""))
    return total


def dropin_profiles(args, d):
    """--dropin: runs perftest's ib_send_lat through the critpath build's drop-in on a private
    fabric, both sides under callgrind; returns the server's (the answering side's) profile."""
    sys.path.insert(0, HERE)
    from datapath import free_port, run, spawn, stop, wait_listening  # noqa: E402  (one copy of them)
    softib = os.path.join(TOP, "build", "critpath", "bin", "softib")
    fabric = f"instructions-{os.getpid()}"
    rc, out, err = run([softib, "--fabric", fabric, "up"], timeout=60)
    if rc != 0:
        sys.exit(f"instructions.py: softib up failed: {(err or out)[-2000:]}")
    server = None
    try:
        def on(host, name, extra):
            return [softib, "--fabric", fabric, "run", "--device", host, "--", "valgrind", "--tool=callgrind",
                    "--collect-atstart=no", f"--callgrind-out-file={d}/{name}.%p", "ib_send_lat", "-s", "2",
                    "-n", str(args.iters), *extra]
        port = free_port()
        server = spawn(on("host-a", "server", ["-p", str(port)]))
        if not wait_listening(server, port, "ib_send_lat server", timeout=120.0):
            sys.exit(f"instructions.py: the ib_send_lat server exited: {server.stderr.read()[-2000:]}")
        rc, out, err = run(on("host-b", "client", ["-p", str(port), "127.0.0.1"]), timeout=1800)
        if rc != 0:
            sys.exit(f"instructions.py: the ib_send_lat client failed: {(err or out)[-2000:]}")
        server.wait(timeout=120)
    finally:
        if server is not None:
            stop(server)
        run([softib, "--fabric", fabric, "down"], timeout=30)
    return sorted(f for f in glob.glob(os.path.join(d, "server.*")) if os.path.getsize(f) > 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=["rate", "lat", "critical"], default="rate")
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--perftest", action="store_true", help="lat/critical: perftest's ib_send_lat loop")
    ap.add_argument("--dropin", action="store_true",
                    help="critical: perftest's own ib_send_lat through the drop-in libibverbs.so.1")
    ap.add_argument("--bench", help="bench_verbs to run (default: build/release's; build/critpath's, built "
                                    "here, for --mode critical)")
    args = ap.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            sys.exit(f"instructions.py: needs {tool} (apt install valgrind)")
    if args.bench is None:
        preset = "critpath" if args.mode == "critical" else "release"
        args.bench = os.path.join(TOP, "build", preset, "bench", "bench_verbs")
        if args.mode == "critical":
            targets = ["bench_verbs", "softibd"] + (["softib", "softib_ibverbs"] if args.dropin else [])
            for step in (["cmake", "--preset", "critpath"],
                         ["cmake", "--build", "--preset", "critpath", "--target", *targets]):
                built = subprocess.run(step, cwd=TOP, capture_output=True, text=True)
                if built.returncode != 0:
                    sys.exit(f"instructions.py: {' '.join(step)} failed:\n{(built.stdout + built.stderr)[-2000:]}")
    if not os.access(args.bench, os.X_OK):
        sys.exit(f"instructions.py: no {args.bench} (make release)")
    if args.perftest and args.mode == "rate":
        sys.exit("instructions.py: --perftest is for --mode lat or critical")
    if args.dropin and (args.mode != "critical" or args.perftest):
        sys.exit("instructions.py: --dropin is for --mode critical, without --perftest")
    if args.dropin and shutil.which("ib_send_lat") is None:
        sys.exit("instructions.py: --dropin needs perftest (apt install perftest)")
    size = 64 if args.mode == "rate" else 2 if args.perftest or args.dropin else 8
    bench_mode = "lat" if args.mode == "critical" else args.mode
    extra = ["--perftest"] if args.perftest else []
    collect = ["--collect-atstart=no"] if args.mode == "critical" else []
    if args.dropin:
        args.iters = min(args.iters, 50000)  # perftest's own loop, not bench_verbs': ~2 min under callgrind
    with tempfile.TemporaryDirectory(prefix="softib-callgrind-") as d:
        if args.dropin:
            files, program = dropin_profiles(args, d), "ib_send_lat"
        else:
            cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes", *collect, f"--callgrind-out-file={d}/cg.%p",
                   args.bench, bench_mode, "--size", str(size), "--iters", str(args.iters), *extra]
            run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
            if run.returncode != 0:
                sys.exit(f"instructions.py: {' '.join(cmd)} failed:\n{run.stderr[-2000:]}")
            files, program = sorted(glob.glob(os.path.join(d, "cg.*"))), "bench_verbs"
        per_process = []
        for f in files:
            if os.path.getsize(f) == 0:
                continue  # a process killed before callgrind wrote its profile (softibd at teardown)
            text = annotate(f, "--inclusive=yes")
            if profiled_program(text) != program:
                continue  # softibd
            counts = inclusive_counts(text)
            if args.dropin:
                counts["ib_send_lat"] = perftest_self(annotate(f, "--inclusive=no", "--threshold=100"))
            if args.mode == "critical":
                # --threshold=100: the marker's own cost is tiny, and the default threshold (the
                # functions that make up 99 % of the cost) left it out of some runs' listing.
                counts["paths"] = path_count(annotate(f, "--inclusive=yes", "--tree=calling", "--threshold=100")) or 0
            per_process.append((profiled_pid(text) or 0, counts))
    if not per_process:
        sys.exit(f"instructions.py: no profile of {program}")
    for side, counts in sides(args.mode, per_process):
        # Critical: a message that a step no poll waits on took starts no path (a post's step,
        # the engine's): the paths counted divide, not the messages run.
        n = counts.pop("paths", 0) if args.mode == "critical" else messages(bench_mode, args.iters)
        if n == 0:
            sys.exit(f"instructions.py: no critical path counted (is {program} running a critpath build?)")
        for function, value in counts.items():
            if function == "path" and args.mode != "critical":
                continue  # the whole process, setup included: not a figure a message
            print(json.dumps({"bench": "instructions_per_message", "mode": args.mode, "size": size, "side": side,
                              "program": "ib_send_lat (drop-in)" if args.dropin else "bench_verbs",
                              "function": function, "value": round(value / n, 1), "messages": n}))


if __name__ == "__main__":
    main()
