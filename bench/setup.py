#!/usr/bin/env python3
"""How long an unmodified rdma-core program takes to get going on softib: rdma-core's
ibv_rc_pingpong and ibv_ud_pingpong (ibverbs-utils), 5 iterations each, through the drop-in
libibverbs on a private fabric (`softib up`), server on host-a, client on host-b.

A diagnostic, not a target (no issue sets one, and nothing else runs these programs without
RDMA hardware to compare with). With 5 iterations the programs' own figures are mostly setup:

  client_ms           the client process from exec to exit (open, PD, MR, CQ, QP, the TCP
                      exchange, the connection, 5 round trips, teardown)
  server_us_per_iter  the server's "usec/iter": its clock starts once it has answered the TCP
                      exchange, so it also holds the client's connection (RC) or first send (UD)
  client_us_per_iter  the client's: its first send (UD: attaching the peer) and 4 more

One JSON object per line, the median of --runs rounds (rounds interleaved RC, UD, RC, ...):
  {"bench": "setup_ibv_rc_pingpong", "client_ms": 12.0, "server_us_per_iter": 280.0,
   "client_us_per_iter": 4.4, "runs": 5, "values": {...}}

  python3 bench/setup.py [--runs 5] [--build build/release]
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from datapath import AnchorError, free_port, run, spawn, stop, tail, wait_listening  # noqa: E402
from dropin import Fabric  # noqa: E402


def usec_per_iter(text):
    """The "N iters in S seconds = U usec/iter" line's U."""
    for line in text.splitlines():
        if "usec/iter" in line:
            return float(line.split("=")[1].split()[0])
    raise AnchorError("no usec/iter line: " + tail(text, 6))


def pingpong(fabric, program, iters=5):
    """One server/client pair; returns (client wall ms, server usec/iter, client usec/iter)."""
    port = free_port()
    argv = [program, "-g", "0", "-n", str(iters), "-p", str(port)]
    server = spawn(fabric.command("host-a", argv))
    try:
        if not wait_listening(server, port, f"{program} server", timeout=20.0):
            raise AnchorError(f"{program} server exited before it listened: " + tail(server.stderr.read()))
        t0 = time.monotonic()
        rc, out, err = run(fabric.command("host-b", argv + ["127.0.0.1"]), timeout=60)
        client_ms = (time.monotonic() - t0) * 1000.0
        if rc != 0:
            raise AnchorError(f"{program} client exit {rc}: " + tail(err or out, 6))
        server_out, server_err = server.communicate(timeout=30)
        return client_ms, usec_per_iter(server_out + server_err), usec_per_iter(out + err)
    finally:
        stop(server)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(TOP, "build", "release"))
    args = ap.parse_args()
    softib = os.path.join(args.build, "bin", "softib")
    if not os.access(softib, os.X_OK):
        sys.exit(f"setup: no {softib} (make release)")
    programs = ("ibv_rc_pingpong", "ibv_ud_pingpong")
    for p in programs:
        if not any(os.access(os.path.join(d, p), os.X_OK) for d in os.environ.get("PATH", "").split(":")):
            sys.exit(f"setup: {p} not found (apt install ibverbs-utils; scripts/bootstrap.sh --bench)")
    results = {p: [] for p in programs}
    with Fabric(softib) as fabric:
        for _ in range(args.runs):
            for p in programs:
                results[p].append(pingpong(fabric, p))
    for p in programs:
        rows = results[p]
        values = {"client_ms": [round(r[0], 1) for r in rows], "server_us_per_iter": [r[1] for r in rows],
                  "client_us_per_iter": [r[2] for r in rows]}
        line = {"bench": f"setup_{p}"}
        line.update({k: statistics.median(v) for k, v in values.items()})
        line.update({"runs": args.runs, "values": values})
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
