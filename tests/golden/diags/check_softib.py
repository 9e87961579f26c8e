#!/usr/bin/env python3
"""Runs every command of a golden fabric (commands.json, made by make_golden.py with the
real infiniband-diags on OpenSM + ibsim) as the matching `softib` subcommand on a private
softib fabric built from the same net file, and compares stdout and exit status line for
line after normalising only what legitimately differs (see NORMALISE below and README.md).

Usage:
  check_softib.py SOFTIB FABRIC_DIR [--only TOOL ...] [--show-diff] [--keep-going]

Phase 1 runs with `softib sm` (a separate SM process, like OpenSM in the golden run) on the
golden run's SM host; phase 2 (commands made after OpenSM exited) runs after that SM is
killed. Exit status: 0 all compared equal, 1 differences, 2 usage/setup errors.
"""

import argparse
import difflib
import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
from softib_fabric import SoftibFabric  # noqa: E402

# real tool -> softib subcommand
TOOLS = {
    "ibstat": ["stat"],
    "ibv_devices": ["devices"],
    "ibv_devinfo": ["devinfo"],
    "ibhosts": ["hosts"],
    "ibswitches": ["switches"],
    "ibnodes": ["nodes"],
    "ibnetdiscover": ["netdiscover"],
    "iblinkinfo": ["linkinfo"],
    "ibping": ["ping"],
    "perfquery": ["perfquery"],
    "sminfo": ["sminfo"],
    "saquery": ["saquery"],
    "ibtracert": ["tracert"],
    "ibroute": ["routes"],
}
# Tools whose golden outputs are kept for reference but that softib does not offer (the
# issue asks for the ones above; smpquery's answers are covered by perfquery/sminfo/netdiscover).
NOT_PROVIDED = {"smpquery"}

# The CA name differs by design: softib's devices are softib0, softib1, ... (ibsim's ibsim0).
CA_RENAME = [("ibsim0", "softib0")]


def common_normalise(text):
    text = re.sub(r"^(ibwarn|ibpanic|iberror): \[\d+\]", r"\1: [PID]", text, flags=re.M)
    return text


def norm_ibping(text):
    text = re.sub(r"time \d+\.\d+ ms", "time T ms", text)
    text = re.sub(r"time \d+ ms", "time T ms", text)
    text = re.sub(r"rtt min/avg/max = [\d.]+/[\d.]+/[\d.]+ ms", "rtt min/avg/max = T/T/T ms", text)
    return text


def norm_ibstat(text):
    # The device's identity (its driver's name for the CA type, firmware and hardware
    # versions) is softib's own, not the simulator's.
    text = re.sub(r"CA type: .*", "CA type: X", text)
    text = re.sub(r"Firmware version: .*", "Firmware version: X", text)
    text = re.sub(r"Hardware version: .*", "Hardware version: X", text)
    # umad2sim's fake sysfs, not the IBA: it writes 26 Gb/s per EDR lane ("104 Gb/sec (4X
    # EDR)") where the kernel writes 25 ("100 Gb/sec"), and it has no link_layer file, so
    # libibumad falls back to "IB" where a kernel's sysfs says "InfiniBand". softib prints
    # what a kernel would; only these exact simulator values are mapped.
    text = re.sub(r"^(\s*)Rate: 104$", r"\1Rate: 100", text, flags=re.M)
    text = re.sub(r"^(\s*)Link layer: IB$", r"\1Link layer: InfiniBand", text, flags=re.M)
    return text


def norm_ibnetdiscover(text):
    # The topology header's time stamp (ctime of the run).
    return re.sub(r"# Topology file: generated on .*", "# Topology file: generated on DATE", text)


def norm_iblinkinfo(text):
    # Debian 12's ibsim 0.10 models ports whose LinkSpeedExtSupported stops at HDR (so
    # "Could be 53.125 Gbps"); softib's ports, like current upstream ibsim's, also support
    # NDR (106.25 Gbps). Only the "Could be" hint for extended speeds depends on it.
    return text.replace("Could be 106.25 Gbps", "Could be 53.125 Gbps")


def norm_perfquery(text):
    # The traffic counters count the MADs each port has carried, and softib's SM is not
    # OpenSM: it sends a different number of MADs to bring the subnet up. (ibsim also
    # leaves PortUnicast*Pkts at 0; softib counts every MAD there, as unicast.) The error
    # counters, the header and every other line still compare exactly.
    return re.sub(r"^(Port(?:Unicast)?(?:Xmit|Rcv)(?:Data|Pkts):\.*)\d+$", r"\1N", text, flags=re.M)


def norm_sminfo(text):
    # The activity count is how many SMInfo/MADs the SM has handled so far: OpenSM and
    # softib's SM differ in that, and it grows with time.
    return re.sub(r"activity count \d+", "activity count N", text)


NORMALISE = {
    "ibnetdiscover": norm_ibnetdiscover,
    "iblinkinfo": norm_iblinkinfo,
    "ibping": norm_ibping,
    "ibstat": norm_ibstat,
    "perfquery": norm_perfquery,
    "sminfo": norm_sminfo,
}

# The golden runs reached saquery through umad2sim, which forwards one 256-byte MAD and has
# no RMPP: a GetTable answer longer than one MAD arrived cut to its first segment, and of
# that segment only the first 224 bytes of the MAD (168 bytes of SA data) held the SA's
# records -- what saquery printed after them is not data the SA sent (LinkRecords of LID
# 9472, PathRecords with DLID 0; see README.md). softib's SA answers the whole table over
# RMPP. So where commands.json marks an answer as possibly cut, both outputs are compared on
# the records that lay wholly within those 168 bytes, and nothing else.
SA_GENUINE_DATA_BYTES = 168
SA_RECORD_BYTES = {  # make_golden.py's: record size rounded up to 8
    "NodeRecord": 112, "PortInfoRecord": 72, "PathRecord": 64, "LinkRecord": 8,
    "SMInfoRecord": 32, "SwitchInfoRecord": 32, "LFTRecord": 72, "MFTRecord": 72,
    "MCMemberRecord": 56, "ServiceRecord": 176, "PKeyTableRecord": 72,
    "GUIDInfoRecord": 72, "SL2VLTableRecord": 16, "VLArbTableRecord": 72,
    "InformInfoRecord": 80,
}
RECORD_START = re.compile(r"^([A-Za-z][A-Za-z0-9 ]*?) (?:group |member )?dump:$")


def sa_records(text):
    """(prefix, [record texts]) split at saquery's "<Kind> dump:" lines."""
    prefix, recs = [], []
    for line in text.splitlines(True):
        if RECORD_START.match(line.rstrip("\n")) and not line.startswith("\t"):
            recs.append([line])
        elif recs:
            recs[-1].append(line)
        else:
            prefix.append(line)
    return "".join(prefix), ["".join(r) for r in recs]


def cut_like_umad2sim(cmd, want, got):
    """The records of a possibly cut GetTable answer that the reference holds genuinely."""
    if not cmd.get("sa_may_be_cut_by_umad2sim"):
        return want, got
    _, recs = sa_records(want)
    m = RECORD_START.match(recs[0].splitlines()[0]) if recs else None
    size = SA_RECORD_BYTES.get(m.group(1).replace(" ", "")) if m else None
    if not size:
        return want, got
    keep = SA_GENUINE_DATA_BYTES // size
    out = []
    for text in (want, got):
        prefix, r = sa_records(text)
        out.append(prefix + "".join(r[:keep]))
    return out[0], out[1]


def cut_name_list(cmd, want, got):
    """saquery -D lists the CAs of every NodeRecord; the reference saw only the NodeRecords
    of the first MAD (see cut_like_umad2sim), so only as many rows as it printed compare."""
    if cmd["argv"][0] != "saquery" or not ({"-D", "--list"} & set(cmd["argv"])):
        return want, got
    w, g = want.splitlines(True), got.splitlines(True)
    return want, "".join(g[:len(w)]) if len(g) > len(w) and g[:2] == w[:2] else got


def wait_ping_server(fab, meta, host, server, timeout=30):
    """Returns once the ibping server on host_b answers a ping (it registers its agent
    before it can answer, and says nothing on stdout, like ibping -S)."""
    lid = meta["facts"]["lids"][meta["facts"]["host_b"]]
    deadline = time.time() + timeout
    while time.time() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"softib ping -S exited: {server.stderr.read()}")
        r = fab.run("ping", "-f", "-c", "1", "-t", "200", "-L", str(lid), host=host, timeout=30)
        if r.returncode == 0 and "1 received" in r.stdout:
            return
    raise RuntimeError(f"the ping server on {meta['facts']['host_b']} did not answer in {timeout} s")


# Commands known to differ from the reference, each with why. They are run and reported
# ("known") but do not fail the check; one that starts to match fails it until it is taken
# off this list, so the list stays true. Keyed by (fabric, command name); "*" for any fabric.
KNOWN_DIFFERENCES = {
    ("*", "saquery-SMIR"): "ActCount is the SMPs the SM sent: softib's SM sends another number than OpenSM",
    ("*", "saquery-c"): "ClassPortInfo claims only what softib's SA does (no MultiPathRecord, MulticastFDBTop, alias GUID Set)",
    ("*", "saquery-CPI"): "ClassPortInfo claims only what softib's SA does (no MultiPathRecord, MulticastFDBTop, alias GUID Set)",
    ("*", "saquery-PIR"): "ibsim PortInfo quirks (SubnetTimeout, CapabilityMask bits) vs softib's device model",
    ("*", "saquery-PIR-host-b"): "ibsim PortInfo quirks (SubnetTimeout, CapabilityMask bits)",
    ("*", "saquery-PIR-switch-port"): "ibsim PortInfo quirks (CapabilityMask2, LinkSpeedExt)",
    ("*", "saquery-SWIR"): "ibsim SwitchInfo quirks (LinearFDBCap 0x7800, LifeTimeValue); MulticastFDBTop not claimed",
    ("*", "saquery-SWIR-switch"): "ibsim SwitchInfo quirks (LinearFDBCap 0x7800, LifeTimeValue); MulticastFDBTop not claimed",
}


def known_difference(fabric, name):
    return KNOWN_DIFFERENCES.get((fabric, name)) or KNOWN_DIFFERENCES.get(("*", name))


def golden_phase(cmd):
    return 2 if "OpenSM has exited" in (cmd.get("note") or "") or "no-sa" in cmd["name"] \
        or "no-sm" in cmd["name"] else 1


def softib_argv(cmd):
    tool = cmd["argv"][0]
    sub = TOOLS.get(tool)
    if sub is None:
        return None
    args = list(cmd["argv"][1:])
    for a, b in CA_RENAME:
        args = [x.replace(a, b) for x in args]
    return sub + args


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("softib")
    ap.add_argument("fabric_dir")
    ap.add_argument("--only", action="append", default=[], help="real tool name(s) to check")
    ap.add_argument("--show-diff", action="store_true")
    args = ap.parse_args()

    meta = json.load(open(os.path.join(args.fabric_dir, "commands.json")))
    net = os.path.join(args.fabric_dir, meta["net_file"])
    sm_host = meta["opensm_sim_host"]
    cmds = [c for c in meta["commands"] if not args.only or c["argv"][0] in args.only]

    failures = []
    checked = 0
    known_count = 0
    with SoftibFabric(args.softib, topology=net, sm=False) as fab:
        # OpenSM made the references with its default routing engine, minhop; softib's minhop
        # makes the same choices (tests/compat/opensm), while its own default (auto) would
        # pick ftree here.
        sm = fab.popen("sm", "-R", "minhop", host=sm_host)
        try:
            # The subnet is up when the SM says so (as OpenSM does on its console).
            line = ""
            while "SUBNET UP" not in line:
                line = sm.stdout.readline()
                if not line:
                    print("softib sm exited:", sm.stderr.read(), file=sys.stderr)
                    return 2
            server = None
            for phase in (1, 2):
                if phase == 2:
                    sm.send_signal(signal.SIGKILL)
                    sm.wait()
                for c in cmds:
                    if c.get("background") or golden_phase(c) != phase:
                        continue
                    argv = softib_argv(c)
                    if argv is None:
                        continue
                    host = c.get("env", {}).get("SIM_HOST")
                    # The golden server ran only during the successful pings (and the
                    # phase-2 -G one): the "no server" failures come before it.
                    if c["argv"][0] == "ibping" and server is None and phase == 1 \
                            and not c["name"].startswith("fail-"):
                        server = fab.popen("ping", "-S", host=meta["facts"]["host_b"])
                        wait_ping_server(fab, meta, host, server)
                    r = fab.run(*argv, host=host, timeout=120)
                    checked += 1
                    want = read(os.path.join(args.fabric_dir, c["stdout"]))
                    norm = NORMALISE.get(c["argv"][0], lambda t: t)
                    want_n = norm(common_normalise(want))
                    for a, b in CA_RENAME:
                        want_n = want_n.replace(a, b)
                    got_n = norm(common_normalise(r.stdout))
                    want_n, got_n = cut_like_umad2sim(c, want_n, got_n)
                    want_n, got_n = cut_name_list(c, want_n, got_n)
                    ok = got_n == want_n and r.returncode == (c["exit_status"] & 0xFF)
                    known = known_difference(meta["fabric"], c["name"])
                    if known and not ok:
                        known_count += 1
                        print(f"known {c['name']}: {known}")
                        continue
                    if known and ok:
                        failures.append(c["name"])
                        print(f"FAIL {c['name']}: matches now; take it off KNOWN_DIFFERENCES")
                        continue
                    if not ok:
                        failures.append(c["name"])
                        print(f"FAIL {c['name']}: softib {' '.join(argv)} (exit {r.returncode}, "
                              f"want {c['exit_status'] & 0xFF})")
                        if args.show_diff:
                            sys.stdout.writelines(difflib.unified_diff(
                                want_n.splitlines(True), got_n.splitlines(True), "real", "softib"))
                            if r.stderr:
                                print("stderr:", r.stderr)
                    else:
                        print(f"ok   {c['name']}")
            if server is not None:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=10)
        finally:
            if sm.poll() is None:
                sm.kill()
                sm.wait()
    print(f"{checked - len(failures) - known_count}/{checked} commands match the real tools"
          f" ({known_count} known differences, {len(failures)} failures)")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
