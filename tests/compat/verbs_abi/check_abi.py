#!/usr/bin/env python3
"""The drop-in libibverbs.so.1 has exactly the system library's ABI.

  check_abi.py OURS SYSTEM

- every default-version symbol the system library exports, ours exports in the same version
  node, as the same kind (function or data), and nothing more (no C++ internals leak);
- the public nodes (IBVERBS_1.x) hold only real definitions: no weak stand-in is left there
  (nm -D type W/V), only in the private node;
- the version nodes and their parents are the same;
- the libraries that perftest loads (libmlx5, libefa) bind against ours: `ib_write_bw -h`
  starts with no symbol lookup error, and so does ibv_devinfo (which imports the private
  ibv_query_gid_type).
Exit 0 when all hold; otherwise each violation is printed and the exit status is 1.
"""

import os
import re
import subprocess
import sys


def out(args, env=None):
    return subprocess.run(args, check=True, capture_output=True, text=True, env=env).stdout


def exports(lib):
    """{name: (version, kind)} of defined default-version dynamic symbols."""
    syms = {}
    for line in out(["objdump", "-T", lib]).splitlines():
        m = re.match(r"^[0-9a-f]{16} (.{7}) (\S+)\s+[0-9a-f]+\s+(\(?[A-Za-z0-9_.]+\)?)\s+(\S+)\s*$", line)
        if not m:
            continue
        flags, section, version, name = m.groups()
        if section == "*UND*" or version.startswith("(") or name == version:
            continue
        if not version.startswith("IBVERBS"):
            continue  # e.g. symbols a sanitizer runtime adds: not part of the ABI
        syms[name] = (version, "func" if "F" in flags else "data")
    return syms


def nodes(lib):
    text = out(["objdump", "-p", lib])
    defs = text.split("Version definitions:")[1].split("Version References")[0]
    result, current = [], None
    for line in defs.splitlines():
        m = re.match(r"^\d+\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+(\S+)", line)
        if m:
            current = [m.group(2), None, int(m.group(1), 16)]
            if not current[2] & 1:
                result.append(current)
            continue
        m = re.match(r"^\s+(\S+)\s*$", line)
        if m and current is not None:
            current[1] = m.group(1)
    return [(n, p) for n, p, _ in result]


def weak(lib):
    weak = set()
    for line in out(["nm", "-D", "--defined-only", lib]).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in ("W", "V"):
            weak.add(parts[2].split("@")[0])
    return weak


def main():
    ours_path, system_path = sys.argv[1], sys.argv[2]
    problems = []
    ours, system = exports(ours_path), exports(system_path)
    for name, (version, kind) in sorted(system.items()):
        if name not in ours:
            problems.append(f"missing: {name}@@{version}")
        elif ours[name] != (version, kind):
            problems.append(f"{name}: ours {ours[name]}, system {(version, kind)}")
    for name in sorted(set(ours) - set(system)):
        problems.append(f"extra export: {name}@@{ours[name][0]}")
    if nodes(ours_path) != nodes(system_path):
        problems.append(f"version nodes differ: ours {nodes(ours_path)}, system {nodes(system_path)}")
    stand_ins = weak(ours_path)
    for name, (version, kind) in sorted(system.items()):
        if kind == "func" and not version.startswith("IBVERBS_PRIVATE") and name in stand_ins:
            problems.append(f"public {name}@@{version} is only a weak stand-in")
    private = [n for n, _ in nodes(system_path) if n.startswith("IBVERBS_PRIVATE")]
    if not private:
        problems.append("the system library has no private node (unexpected)")

    # The real programs, against ours (a sanitizer build of ours needs its runtime preloaded:
    # SOFTIB_TEST_PRELOAD; perftest's own small leaks at exit are not ours to report).
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(os.path.abspath(ours_path)), LD_BIND_NOW="1",
               SOFTIB_FABRIC="softib-abi-check-no-such-fabric", ASAN_OPTIONS="detect_leaks=0")
    if os.environ.get("SOFTIB_TEST_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["SOFTIB_TEST_PRELOAD"]
    # What each prints once our library loaded: perftest's usage, and our own message for a
    # fabric that is not up (ibv_devinfo imports the private ibv_query_gid_type, so it loads
    # only if the private node is there).
    for argv, expect in ((["ib_write_bw", "-h"], "Usage:"), (["ibv_devinfo", "-l"], "softib: no softibd")):
        p = subprocess.run(argv, capture_output=True, text=True, env=env)
        text = p.stdout + p.stderr
        if expect not in text:
            last = text.strip().splitlines()[-1] if text.strip() else f"(no output, exit {p.returncode})"
            problems.append(f"{' '.join(argv)} did not run against ours: {last}")
        if "ERROR: AddressSanitizer" in text or "runtime error:" in text:
            problems.append(f"{' '.join(argv)}: sanitizer report: {text.strip()[-400:]}")

    for p in problems:
        print(p)
    print(f"{len(system)} symbols in {len(nodes(system_path))} version nodes; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
