#!/usr/bin/env python3
"""Golden comparison: softib's SM against real OpenSM 3.3.23 on real ibsim, same net file.

For each topology, OpenSM brings the fabric up under ibsim (bench/anchors/opensm_ibsim.py)
and `softib sim` brings it up in process, both with the SM on the first CA of the file, and
both write their dumps. Where the two SMs should agree they must agree exactly:

  * LID assignment: every port GUID gets the same LID range (guid2lid, as sets of lines);
  * opensm-subnet.lst: byte for byte (both ends of every link, LIDs, widths, speeds, states,
    and the "-SM" marks);
  * opensm-lfts.dump: the same switches with the same headers and the same LIDs annotated
    with the same owners in every table; only the output port may differ, since the
    routing engines differ (OpenSM's default minhop against softib's ftree/dor);
  * and with softib's minhop (`softib sim -R minhop`), OpenSM's default engine, the LFT
    dump is identical byte for byte, output ports included: the same port for every LID on
    every switch.

  * with PARTITIONS given (for the first net file): every end port's P_Key table, as
    `smpquery pkeys` reads it from ibsim after OpenSM, equals softib's, entry for entry.

Usage: compare_with_opensm.py SOFTIB_BINARY ANCHOR_SCRIPT [--partitions FILE] NETFILE...
"""

import json
import os
import re
import subprocess
import sys
import tempfile

LFT_LINE = re.compile(r"^(0x[0-9a-f]{4}) (\d{3}) # (.*)$")


def read(path):
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read()


def lfts_without_ports(text):
    """The dump with each entry's port replaced by '---'; entries must still be present."""
    out = []
    for line in text.splitlines():
        m = LFT_LINE.match(line)
        out.append(f"{m.group(1)} --- # {m.group(3)}" if m else line)
    return out


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}:\n  opensm: {x}\n  softib: {y}"
    if len(a) != len(b):
        return f"length differs: opensm {len(a)} lines, softib {len(b)} lines"
    return None


def compare(softib, anchor, net, work):
    name = os.path.basename(net)
    osm_dir = os.path.join(work, name + ".opensm")
    sib_dir = os.path.join(work, name + ".softib")
    r = subprocess.run([sys.executable, anchor, net, "--dump-dir", osm_dir, "--timeout", "60"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: OpenSM on ibsim failed: {r.stdout.strip()} {r.stderr[-2000:]}"]
    r = subprocess.run([softib, "sim", net, "--dump-dir", sib_dir, "--json", "--no-quality"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: softib sim failed ({r.returncode}): {r.stdout} {r.stderr}"]
    report = json.loads(r.stdout)
    problems = []
    if not report["ok"]:
        problems.append(f"{name}: softib sim reports a problem: {report}")

    # LIDs: softib's guid2lid lives in the SM's cache dir, which `softib sim` does not use;
    # the same facts are in opensm-subnet.lst (LID of every port on both ends of every link)
    # and in the LFT dump annotations, compared below. OpenSM's guid2lid adds the ports
    # without links (none in these fabrics).
    osm_lst = read(os.path.join(osm_dir, "opensm-subnet.lst")).splitlines()
    sib_lst = read(os.path.join(sib_dir, "opensm-subnet.lst")).splitlines()
    d = first_difference(osm_lst, sib_lst)
    if d:
        problems.append(f"{name}: opensm-subnet.lst differs at {d}")

    osm_lft = lfts_without_ports(read(os.path.join(osm_dir, "opensm-lfts.dump")))
    sib_lft = lfts_without_ports(read(os.path.join(sib_dir, "opensm-lfts.dump")))
    d = first_difference(osm_lft, sib_lft)
    if d:
        problems.append(f"{name}: opensm-lfts.dump differs (ports ignored) at {d}")

    # minhop against minhop: every output port the same.
    mh_dir = os.path.join(work, name + ".softib-minhop")
    r = subprocess.run([softib, "sim", net, "-R", "minhop", "--dump-dir", mh_dir, "--json", "--no-quality"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"{name}: softib sim -R minhop failed ({r.returncode}): {r.stdout} {r.stderr}")
    else:
        d = first_difference(read(os.path.join(osm_dir, "opensm-lfts.dump")).splitlines(),
                             read(os.path.join(mh_dir, "opensm-lfts.dump")).splitlines())
        if d:
            problems.append(f"{name}: minhop's opensm-lfts.dump differs from OpenSM's at {d}")

    # guid2lid: every GUID OpenSM remembers has the LID range softib gave that port.
    lid_of = {}
    entries = re.findall(r"PortGUID:([0-9a-f]{16}) VenID:[0-9A-F]+ DevID:[0-9A-F]+ Rev:[0-9A-F]+ \{[^}]*\} "
                         r"LID:([0-9A-F]{4})", "\n".join(sib_lst))
    for guid, lid in entries:
        lid_of[int(guid, 16)] = int(lid, 16)
    for line in read(os.path.join(osm_dir, "guid2lid")).splitlines():
        if not line.strip():
            continue
        guid, lo, hi = (int(x, 16) for x in line.split())
        if guid in lid_of and lid_of[guid] != lo:
            problems.append(f"{name}: guid2lid: port 0x{guid:016x} has LID {lo} under OpenSM, "
                            f"{lid_of[guid]} under softib")
    checked = len(lid_of)
    if not problems:
        print(f"{name}: identical subnet.lst ({len(osm_lst)} lines), identical LFT dump "
              f"layout ({len(osm_lft)} lines), identical minhop LFTs, {checked} port LIDs agree")
    return problems


def compare_pkeys(softib, anchor, net, partitions, work):
    name = os.path.basename(net)
    osm = os.path.join(work, name + ".opensm-pkeys")
    sib_dir = os.path.join(work, name + ".softib-pkeys")
    r = subprocess.run([sys.executable, anchor, net, "--partitions", partitions, "--query-pkeys", osm,
                        "--timeout", "120"], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: OpenSM on ibsim with partitions failed: {r.stdout.strip()} {r.stderr[-2000:]}"]
    r = subprocess.run([softib, "sim", net, "-P", partitions, "--dump-dir", sib_dir, "--json", "--no-quality"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: softib sim with partitions failed ({r.returncode}): {r.stdout} {r.stderr}"]
    a = read(osm).splitlines()
    b = read(os.path.join(sib_dir, "softib-pkeys.dump")).splitlines()
    d = first_difference(a, b)
    if d:
        return [f"{name}: P_Key tables differ (port GUID, then keys in table order) at {d}"]
    print(f"{name}: identical P_Key tables on all {len(a)} end ports under {os.path.basename(partitions)}")
    return []


def main():
    args = sys.argv[1:]
    partitions = None
    if "--partitions" in args:
        i = args.index("--partitions")
        partitions = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    softib, anchor, nets = args[0], args[1], args[2:]
    problems = []
    with tempfile.TemporaryDirectory(prefix="softib-golden-") as work:
        if partitions:
            problems += compare_pkeys(softib, anchor, nets[0], partitions, work)
        for net in nets:
            problems += compare(softib, anchor, net, work)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
