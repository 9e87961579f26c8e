#!/usr/bin/env python3
"""Routing-quality benchmark: softib's routing against OpenSM's engines on the same fabrics.

softib routes each fabric itself (`softib sim FILE --json`, engine "auto"); each OpenSM
3.3.23 engine routes it under ibsim (bench/anchors/opensm_ibsim.py --dump-dir) and its
opensm-lfts.dump is measured by the same code (`softib sim FILE --evaluate-lfts DUMP`), since
softib assigns OpenSM's LIDs. Figures, all-to-all CA traffic with one flow per ordered pair:
  max_link_load        flows on the busiest directed switch-to-switch link
  ideal                the per-level ideal of a layered fabric (fat trees), else null
  max_over_ideal, max_over_mean
  worst_shift          the worst link load over cyclic shift permutations (1 = contention-free)
  deadlock_free, vls   channel dependency graph acyclic in that many VLs (OpenSM's routes
                       are measured on VL 0: its SL-to-VL programming is not in the dump)

Targets (issue 3): on full fat trees max_load == ideal and every shift contention-free; on
tori max <= 1.2 x mean and deadlock-free within 8 VLs.

One JSON line per (fabric, router). Usage: bench/routing_quality.py [--softib PATH] [--quick]
"""

import json
import os
import subprocess
import sys
import tempfile

from sm_bench_common import ANCHOR, arguments, net_file

# (name, source, kind, OpenSM engines to compare)
FABRICS = [
    ("ft2-648", "topologies/ft2-648.net", "fat-tree", ["minhop", "updn", "ftree"]),
    ("ft3-1024", "ft3:radix=16", "fat-tree", ["minhop", "updn", "ftree"]),
    ("ft3-3456", "ft3:radix=24", "fat-tree", ["minhop", "updn", "ftree"]),
    ("torus-8x8", "topologies/t2d-8x8-256.net", "torus", ["minhop", "dor", "nue"]),
    ("torus-4x4x4", "torus:4x4x4,hosts=4", "torus", ["minhop", "dor", "nue"]),
]
QUICK = [FABRICS[0], FABRICS[1], FABRICS[3]]
ENGINE_OPTIONS = {"nue": ["--option", "nue_max_num_vls=8"]}



def quality(softib, path, extra=()):
    r = subprocess.run([softib, "sim", path, "--json", *extra], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"softib sim failed: {r.stdout[-300:]} {r.stderr[-300:]}")
    j = json.loads(r.stdout)
    return j, j["routing_quality"]


def line(fabric, kind, router, q, target_ok=None):
    ideal = q["ideal_max_link_load"]
    out = {
        "bench": "routing_quality", "fabric": fabric, "kind": kind, "router": router,
        "max_link_load": q["max_link_load"], "ideal": ideal,
        "max_over_ideal": round(q["max_link_load"] / ideal, 3) if ideal else None,
        "max_over_mean": round(q["max_over_mean"], 3), "worst_shift": q["worst_shift_link_load"],
        "shifts_tried": q["shifts_tried"], "deadlock_free": q["deadlock_free"], "vls": q["vls"],
        "unreachable_routes": q["unreachable_routes"],
    }
    if target_ok is not None:
        out["meets_target"] = target_ok
    print(json.dumps(out), flush=True)


def main():
    ap = arguments(__doc__.splitlines()[0])
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="softib-bench-routing-") as work:
        for name, source, kind, engines in (QUICK if args.quick else FABRICS):
            path = net_file(args.softib, source, work)
            report, q = quality(args.softib, path)
            if kind == "fat-tree":
                met = q["max_link_load"] == q["ideal_max_link_load"] and q["worst_shift_link_load"] == 1
            else:
                met = q["max_over_mean"] <= 1.2 and q["deadlock_free"] and q["vls"] <= 8
            met = met and q["unreachable_routes"] == 0
            ok = ok and met
            line(name, kind, f"softib {report['routing_engine']}", q, met)
            for engine in engines:
                dumps = os.path.join(work, f"{name}-{engine}")
                a = subprocess.run([sys.executable, ANCHOR, path,
                                    "-R", engine, "--dump-dir", dumps, "--timeout", "600",
                                    *ENGINE_OPTIONS.get(engine, [])], capture_output=True, text=True)
                if a.returncode != 0:
                    print(json.dumps({"bench": "routing_quality", "fabric": name, "router": f"opensm {engine}",
                                      "error": a.stdout.strip()[-300:]}), flush=True)
                    continue
                _, oq = quality(args.softib, path, ["--evaluate-lfts", os.path.join(dumps, "opensm-lfts.dump")])
                line(name, kind, f"opensm {engine}", oq)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
