#!/usr/bin/env python3
"""Bring-up benchmark: softib's SM against OpenSM 3.3.23 on ibsim, same fabric, same run.

For each fabric, `softib sim FILE --json --no-quality` runs (three times, median) in its own
process, so its peak RSS is its own; then the anchor brings the same net file up with real
OpenSM on real ibsim (bench/anchors/opensm_ibsim.py). Bring-up is start to every port Active
and every LFT programmed, through real MAD exchanges in both cases.

Prints one JSON line per fabric:
  {"bench": "bringup", "fabric": ..., "hcas": ..., "softib_seconds": ..., "softib_peak_rss_mb": ...,
   "softib_mads": ..., "target_seconds": ..., "target_rss_mb": ..., "meets_target": ...,
   "anchor": "opensm-3.3.23+ibsim", "anchor_seconds": ..., "anchor_peak_rss_mb": ...,
   "speedup_vs_anchor": ...}

Usage: bench/bringup.py [--softib build/release/bin/softib] [--quick] [--no-anchor-above N]
  --quick: only the 648-HCA fabric and a 3-level radix-16 tree (seconds, not minutes)
  --no-anchor-above N: skip OpenSM on fabrics with more than N HCAs (its 27,648-HCA run takes
    about 4 minutes and 2.8 GB); the JSON then says why the anchor is missing.
"""

import json
import subprocess
import sys
import tempfile

from sm_bench_common import ANCHOR, arguments, net_file

# (name, source, target seconds, target peak RSS MB or None); sources are generator specs
# or files under topologies/.
FABRICS = [
    ("ft2-648", "topologies/ft2-648.net", 0.050, None),
    ("ft3-11664", "ft3:radix=36", 2.0, None),
    ("ft3-27648", "ft3:radix=48", 5.0, 400.0),
]
QUICK = [
    ("ft2-648", "topologies/ft2-648.net", 0.050, None),
    ("ft3-1024", "ft3:radix=16", None, None),
]



def run_softib(softib, path, runs=3):
    results = []
    for _ in range(runs):
        r = subprocess.run([softib, "sim", path, "--json", "--no-quality"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"softib sim {path} failed ({r.returncode}): {r.stdout[-500:]} {r.stderr[-500:]}")
        results.append(json.loads(r.stdout))
    results.sort(key=lambda j: j["bringup_seconds"])
    median = results[len(results) // 2]
    median["peak_rss_mb"] = max(j["peak_rss_mb"] for j in results)
    return median


def run_anchor(path, timeout):
    r = subprocess.run([sys.executable, ANCHOR, path,
                        "--timeout", str(timeout)], capture_output=True, text=True)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"ok": False, "reason": f"anchor printed no JSON: {r.stderr[-300:]}"}


def main():
    ap = arguments(__doc__.splitlines()[0])
    ap.add_argument("--no-anchor-above", type=int, default=None)
    args = ap.parse_args()
    fabrics = QUICK if args.quick else FABRICS
    ok = True
    with tempfile.TemporaryDirectory(prefix="softib-bench-bringup-") as work:
        for name, source, target_s, target_rss in fabrics:
            path = net_file(args.softib, source, work)
            s = run_softib(args.softib, path)
            out = {
                "bench": "bringup", "fabric": name, "source": source, "hcas": s["cas"], "switches": s["switches"],
                "softib_seconds": round(s["bringup_seconds"], 4), "softib_peak_rss_mb": round(s["peak_rss_mb"], 1),
                "softib_mads": s["mads"], "softib_lft_blocks": s["lft_blocks"], "softib_ok": s["ok"],
                "target_seconds": target_s, "target_rss_mb": target_rss,
            }
            meets = s["ok"] and (target_s is None or s["bringup_seconds"] <= target_s) and (
                target_rss is None or s["peak_rss_mb"] <= target_rss)
            out["meets_target"] = meets
            ok = ok and meets
            out["anchor"] = "opensm-3.3.23+ibsim"
            if args.no_anchor_above is not None and s["cas"] > args.no_anchor_above:
                out["anchor_seconds"] = None
                out["anchor_note"] = f"not run (--no-anchor-above {args.no_anchor_above})"
            else:
                a = run_anchor(path, timeout=900)
                if a.get("ok"):
                    out["anchor_seconds"] = a["seconds_to_subnet_up"]
                    out["anchor_peak_rss_mb"] = a.get("opensm_peak_rss_mb")
                    out["anchor_routing_engine"] = a.get("routing_engine_used")
                    out["speedup_vs_anchor"] = round(a["seconds_to_subnet_up"] / max(s["bringup_seconds"], 1e-9), 1)
                else:
                    out["anchor_seconds"] = None
                    out["anchor_note"] = a.get("reason", "failed")
            print(json.dumps(out), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
