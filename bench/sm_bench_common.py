"""Shared by the SM benchmarks (bringup.py, routing_quality.py, reroute.py)."""

import argparse
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
ANCHOR = os.path.join(HERE, "anchors", "opensm_ibsim.py")


def arguments(description):
    """--softib PATH and --quick, the options every SM benchmark takes."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--softib", default=os.path.join(TOP, "build/release/bin/softib"))
    ap.add_argument("--quick", action="store_true", help="small fabrics only")
    return ap


def net_file(softib, source, work):
    """A net file for `source`: a file under topologies/, or a generator spec written by
    `softib topo gen` into `work` (OpenSM on ibsim needs a file)."""
    if os.path.exists(os.path.join(TOP, source)):
        return os.path.join(TOP, source)
    name = "".join(c if c.isalnum() else "_" for c in source)
    path = os.path.join(work, name + ".net")
    subprocess.run([softib, "topo", "gen", source, "-o", path], check=True)
    return path
