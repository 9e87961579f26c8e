#!/usr/bin/env python3
"""softibd bring-up and `softib netdiscover` against the real ibnetdiscover on ibsim.

For each fabric: `softib up NET` (embedded SM; it returns once every port is Active), then
`softib netdiscover` (best of --runs), and in the same run the anchor: ibsim on the same net
file with the real ibnetdiscover through libumad2sim (best of --runs). Both outputs must list
the same number of nodes and links. Prints one JSON object per fabric and a summary.

Targets (issue 4): 11,664 HCAs: netdiscover <= 1 s (ibnetdiscover on ibsim about 4.5 s);
`softib up` with the SM <= 3 s.

  python3 bench/netdiscover.py [--softib build/release/bin/softib] [--quick] [--runs 3]
"""

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import sm_bench_common as common

sys.path.insert(0, os.path.join(common.TOP, "tests", "support"))
from softib_fabric import SoftibFabric  # noqa: E402

import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_file_location("opensm_ibsim", common.ANCHOR)
A = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(A)

FABRICS = [
    # name, source, netdiscover target s, up target s
    ("ft2-648", "topologies/ft2-648.net", None, None),
    ("ft3-11664", "ft3:radix=36", 1.0, 3.0),
]


def shape(text):
    """(nodes, links) of an ibnetdiscover topology: Switch/Ca headers and port lines."""
    nodes = len(re.findall(r"^(Switch|Ca|Rt)\t", text, re.M))
    links = len(re.findall(r"^\[\d+\]", text, re.M))
    return nodes, links


def timed(argv, env, out_path):
    t = time.monotonic()
    with open(out_path, "w") as out:
        r = subprocess.run(argv, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt


def anchor(net_path, tmp, runs):
    net = A.parse_net(net_path)
    umad2sim = A.find_umad2sim()
    if not umad2sim or not shutil.which("ibsim") or not shutil.which("ibnetdiscover"):
        raise RuntimeError("anchor needs ibsim-utils, libumad2sim0 and infiniband-diags")
    sock = f"softib-nd-{os.getpid()}-{secrets.token_hex(3)}"
    env = dict(os.environ)
    env["IBSIM_SOCKNAME"] = sock
    ibsim = A.Child("ibsim", ["ibsim", "-s", "-n"] + A.ibsim_size_args(net) + [net_path], env, tmp,
                    os.path.join(tmp, "ibsim.out"), os.path.join(tmp, "ibsim.err"))
    try:
        deadline = time.monotonic() + 600
        while not A.abstract_socket_listed(sock + ":ctl"):
            if not ibsim.poll():
                raise RuntimeError("ibsim exited: " + A.tail(os.path.join(tmp, "ibsim.err")))
            if time.monotonic() > deadline:
                raise RuntimeError("ibsim not ready")
            time.sleep(0.02)
        tenv = dict(env)
        tenv.update({"LD_PRELOAD": umad2sim, "SIM_HOST": net["first_ca"]})
        out = os.path.join(tmp, "ibnetdiscover.txt")
        best = min(timed(["ibnetdiscover"], tenv, out) for _ in range(runs))
        with open(out) as f:
            return best, shape(f.read())
    finally:
        ibsim.stop() if hasattr(ibsim, "stop") else None


def main():
    ap = common.arguments(__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-anchor", action="store_true")
    args = ap.parse_args()
    results = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="softib-bench-nd-") as work:
        for name, source, nd_target, up_target in FABRICS:
            if args.quick and name != "ft2-648":
                continue
            net = common.net_file(args.softib, source, work)
            res = {"fabric": name}
            fab = SoftibFabric(args.softib, topology=net)
            try:
                t = time.monotonic()
                fab.up(timeout=600)
                res["softib_up_seconds"] = round(time.monotonic() - t, 3)
                out = os.path.join(work, name + ".softib.txt")
                res["softib_netdiscover_seconds"] = round(
                    min(timed([args.softib, "netdiscover"], fab.env, out) for _ in range(args.runs)), 3)
                with open(out) as f:
                    res["softib_nodes"], res["softib_links"] = shape(f.read())
            finally:
                fab.cleanup()
            if not args.no_anchor:
                tmp = tempfile.mkdtemp(dir=work)
                best, (nodes, links) = anchor(net, tmp, args.runs)
                res["ibnetdiscover_ibsim_seconds"] = round(best, 3)
                res["ibnetdiscover_nodes"], res["ibnetdiscover_links"] = nodes, links
                res["speedup"] = round(best / res["softib_netdiscover_seconds"], 2)
                res["same_shape"] = (nodes, links) == (res["softib_nodes"], res["softib_links"])
                ok &= res["same_shape"]
            if nd_target:
                res["netdiscover_target_seconds"] = nd_target
                res["netdiscover_target_met"] = res["softib_netdiscover_seconds"] <= nd_target
            if up_target:
                res["up_target_seconds"] = up_target
                res["up_target_met"] = res["softib_up_seconds"] <= up_target
            print(json.dumps(res), flush=True)
            results.append(res)
    print(json.dumps({"summary": "netdiscover", "fabrics": len(results), "shapes_agree": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
