#!/usr/bin/env python3
"""Re-route benchmark: one link fails on a brought-up fabric; time until the SM has
re-routed and reprogrammed (wall clock, `softib sim --fail-link`), and how much it sent.

The reference in the same run is what a heavy sweep (OpenSM's answer to a link-state trap:
rediscover everything, then route and program) costs in softib on the same fabric: the
bring-up's MADs and time. Target (issue 3): <= 200 ms on the 11,664-HCA fat tree, sending
only the LFT blocks that changed.

One JSON line per case. Usage: bench/reroute.py [--softib PATH] [--quick]
"""

import json
import os
import subprocess
import sys

from sm_bench_common import TOP, arguments

# (name, source, cable to fail, target seconds): a leaf uplink, and a spine/core side link.
CASES = [
    ("ft3-11664 leaf uplink", "ft3:radix=36", "S-L0001:36", 0.200),
    ("ft3-11664 core link", "ft3:radix=36", "S-C0001:1", 0.200),
    ("ft2-648 leaf uplink", "topologies/ft2-648.net", "S-L0001:36", None),
    ("torus-8x8 link", "topologies/t2d-8x8-256.net", "S-T00-00:5", None),
]
QUICK = [CASES[2], CASES[3]]


def main():
    ap = arguments(__doc__.splitlines()[0])
    args = ap.parse_args()
    ok = True
    for name, source, cable, target in (QUICK if args.quick else CASES):
        src = os.path.join(TOP, source) if os.path.exists(os.path.join(TOP, source)) else source
        runs = []
        for _ in range(3):
            r = subprocess.run([args.softib, "sim", src, "--json", "--no-quality", "--fail-link", cable],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(json.dumps({"bench": "reroute", "case": name, "error": (r.stdout + r.stderr)[-400:]}))
                ok = False
                break
            runs.append(json.loads(r.stdout))
        if not runs:
            continue
        runs.sort(key=lambda j: j["reroute"]["seconds"])
        j = runs[len(runs) // 2]
        rr = j["reroute"]
        met = rr["routes_delivered"] == rr["routes"] and (target is None or rr["seconds"] <= target)
        ok = ok and met
        print(json.dumps({
            "bench": "reroute", "case": name, "hcas": j["cas"], "failed_cable": cable,
            "seconds": round(rr["seconds"], 4), "routing_seconds": round(rr["routing_seconds"], 4),
            "sweep": "targeted" if rr["targeted"] else ("heavy" if rr["heavy"] else "light"),
            "mads": rr["mads"], "lft_blocks_changed": rr["lft_blocks"], "link_changes": rr["link_changes"],
            "all_routes_delivered": rr["routes_delivered"] == rr["routes"],
            "reference_heavy_sweep_seconds": round(j["bringup_seconds"], 4), "reference_heavy_sweep_mads": j["mads"],
            "speedup_vs_heavy_sweep": round(j["bringup_seconds"] / max(rr["seconds"], 1e-9), 1),
            "target_seconds": target, "meets_target": met,
        }), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
