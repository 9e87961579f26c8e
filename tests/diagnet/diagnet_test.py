"""softib diagnet and softib topo diff on private fabrics, clean and with injected faults.

    diagnet_test.py TEST SOFTIB SOFTIB_FAULT NETFILE

Every fault is injected through the daemon (softib_fault) before the command runs, so the
outcome is deterministic: no sleeps, no polling.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from softib_fabric import SoftibFabric  # noqa: E402

STAGES = ["Discovery", "Lids Check", "Links Check", "Subnet Manager", "Port Counters",
          "Nodes Information", "Speed / Width checks", "Partition Keys", "Alias GUIDs",
          "IPoIB subnets"]


def fail(msg, r=None):
    if r is not None:
        msg += f"\n--- exit {r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    raise AssertionError(msg)


def summary(out):
    """The Summary table: stage -> (warnings, errors)."""
    rows = {}
    lines = out.splitlines()
    at = lines.index("Summary")
    for line in lines[at + 2:]:
        m = re.match(r"-I- (.+?)\s{2,}(\d+)\s+(\d+)", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    if list(rows) != STAGES:
        fail(f"summary stages {list(rows)} != {STAGES}")
    return rows


def fault(f, tool, *args):
    import subprocess
    r = subprocess.run([tool, *args], env=f.env, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"softib_fault {' '.join(args)} failed", r)


def expect_only(rows, **nonzero):
    """Every stage's (warnings, errors) is (0, 0) except those named (stage name with _ for
    spaces, slashes dropped)."""
    for stage, counts in rows.items():
        key = re.sub(r"\W+", "_", stage).strip("_")
        want = nonzero.get(key, (0, 0))
        if counts != want:
            fail(f"stage {stage}: (warnings, errors) {counts}, expected {want}\n{rows}")


def t_clean(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        r = f.run("diagnet")
        if r.returncode != 0:
            fail("clean fabric: diagnet should exit 0", r)
        expect_only(summary(r.stdout))
        for needle in ["Discovered 20 nodes (4 switches, 16 CAs, 0 routers) and 32 links",
                       "Master SM: GUID", "state Master", "PortCounters of 64 ports",
                       "32 links checked: 32 at 4xEDR", "Partition 0x7fff: 16 member ports (16 full, 0 limited)",
                       "Subnet: IPv4 PKey:0x7fff"]:
            if needle not in r.stdout:
                fail(f"missing {needle!r}", r)


def t_json(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        r = f.run("diagnet", "--json")
        if r.returncode != 0:
            fail("clean fabric: diagnet --json should exit 0", r)
        j = json.loads(r.stdout)
        if [s["stage"] for s in j["summary"]] != STAGES:
            fail("json stages", r)
        if j["errors"] != 0 or j["warnings"] != 0:
            fail("json: errors or warnings on a clean fabric", r)
        stages = {s["stage"]: s for s in j["stages"]}
        if stages["Discovery"]["data"]["nodes"] != 20 or stages["Speed / Width checks"]["data"]["links"] != 32:
            fail("json data", r)
        parts = stages["Partition Keys"]["data"]["partitions"]
        if len(parts) != 1 or parts[0]["pkey"] != "0x7fff" or len(parts[0]["members"]) != 16:
            fail("json partitions", r)
        if len(stages["IPoIB subnets"]["data"]["groups"]) != 1:
            fail("json IPoIB groups", r)


def t_link_down(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        fault(f, tool, "link", "S-L0001", "5", "down")
        r = f.run("diagnet")
        if r.returncode != 1:
            fail("a Down link with a cable: diagnet should exit 1", r)
        rows = summary(r.stdout)
        # H-00005 is cut off: not reached (a warning); the cable is Down (an error).
        expect_only(rows, Discovery=(1, 0), Links_Check=(0, 1))
        errs = [l for l in r.stdout.splitlines() if l.startswith("-E- Link down")]
        if len(errs) != 1 or '"leaf-0001"' not in errs[0] or "port 5" not in errs[0] or "H-00005[1]" not in errs[0]:
            fail(f"Links Check error: {errs}", r)
        if "-W- Node not reached: H-00005" not in r.stdout:
            fail("Discovery warning for H-00005", r)


def t_port_counters(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        fault(f, tool, "errors", "H-00003", "1", "SymbolErrorCounter", "5")
        fault(f, tool, "errors", "S-S0002", "3", "PortRcvErrors", "2")
        r = f.run("diagnet", "-c", "3")
        if r.returncode != 1:
            fail("error counters: diagnet should exit 1", r)
        expect_only(summary(r.stdout), Port_Counters=(0, 2))
        errs = [l for l in r.stdout.splitlines() if l.startswith("-E-") and " = " in l]
        if len(errs) != 2:
            fail(f"two counter errors expected: {errs}", r)
        if not any('"h00003 HCA-1"' in l and "port 1" in l and "SymbolErrorCounter = 5" in l for l in errs):
            fail("SymbolErrorCounter of H-00003", r)
        if not any('"spine-0002"' in l and "port 3" in l and "PortRcvErrors = 2" in l for l in errs):
            fail("PortRcvErrors of S-S0002 port 3", r)
        if "after 60 MADs of traffic (3 to each of 20 nodes)" not in r.stdout:
            fail("-c 3 on 20 nodes should send 60 MADs", r)


def t_link_width(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        r = f.run("diagnet", "--lw", "12x")
        if r.returncode != 1:
            fail("--lw 12x on 4x links should exit 1", r)
        expect_only(summary(r.stdout), Speed_Width_checks=(0, 32))
        errs = [l for l in r.stdout.splitlines() if l.startswith("-E- Link width 4x is below the expected 12x")]
        if len(errs) != 32:
            fail(f"32 width errors expected, got {len(errs)}", r)
        r = f.run("diagnet", "--ls", "50")
        if r.returncode != 1:
            fail("--ls 50 on EDR links should exit 1", r)
        expect_only(summary(r.stdout), Speed_Width_checks=(0, 32))
        r = f.run("diagnet", "--lw", "4x", "--ls", "25")
        if r.returncode != 0:
            fail("--lw 4x --ls 25 on 4xEDR links should exit 0", r)
        expect_only(summary(r.stdout))
        for bad in (["--lw", "3x"], ["--ls", "7"], ["--no-such-option"]):
            r = f.run("diagnet", *bad)
            if r.returncode != 2:
                fail(f"diagnet {bad}: usage error should exit 2", r)


def diff(f, path, *extra):
    return f.run("topo", "diff", path, *extra)


def t_topo_diff_clean(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        r = diff(f, net)
        if r.returncode != 0 or r.stdout != "no differences: 20 nodes and 32 links as expected\n":
            fail("topo diff of the fabric's own file", r)
        r = diff(f, net, "--json")
        j = json.loads(r.stdout)
        if r.returncode != 0 or j["differences"] != []:
            fail("topo diff --json of the fabric's own file", r)


def modified_copy(net, tmp):
    """The net file with H-00001/H-00002 swapped on S-L0001, the S-L0002[16]-S-S0002[8] cable
    removed and an extra CA cabled to S-L0001[17]."""
    text = open(net).read()
    swaps = [('[1]\t"H-00001"[1]', '[1]\t"H-00002"[1]'), ('[2]\t"H-00002"[1]', '[2]\t"H-00001"[1]')]
    for a, b in swaps:
        if a not in text:
            fail(f"{a!r} not in {net}")
    text = text.replace(swaps[0][0], "@SWAP1@").replace(swaps[1][0], swaps[1][1]).replace("@SWAP1@", swaps[0][1])
    lines = text.splitlines()
    out, node = [], None
    for line in lines:
        m = re.match(r'(Ca|Switch)\s+\d+\s+"([^"]+)"', line)
        if m:
            node = m.group(2)
        if node == "H-00001" and line.startswith('[1]\t"S-L0001"[1]'):
            line = line.replace('"S-L0001"[1]', '"S-L0001"[2]')
        elif node == "H-00002" and line.startswith('[1]\t"S-L0001"[2]'):
            line = line.replace('"S-L0001"[2]', '"S-L0001"[1]')
        if node == "S-L0002" and line.startswith('[16]\t"S-S0002"[8]'):
            continue
        if node == "S-S0002" and line.startswith('[8]\t"S-L0002"[16]'):
            continue
        if node == "S-L0001" and line.startswith('[16]\t"S-S0002"[4]'):
            out.append(line)
            line = '[17]\t"H-EXTRA"[1]\t\t# "extra host" lid 0 4xEDR'
        out.append(line)
    out += ["", 'Ca\t1 "H-EXTRA"\t\t# "extra host"', '[1]\t"S-L0001"[17]\t\t# lid 0 lmc 0 "leaf-0001" lid 0 4xEDR', ""]
    path = os.path.join(tmp, "modified.net")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
    return path


def t_topo_diff_modified(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        path = modified_copy(net, f.tmp)
        r = diff(f, path)
        if r.returncode != 1:
            fail("topo diff of a modified file should exit 1", r)
        lines = r.stdout.splitlines()
        want = [
            r'missing node: H-EXTRA \(0x[0-9a-f]{16}, "extra host"\)',
            re.escape("extra link: S-L0002[16] - S-S0002[8]"),
            re.escape("miscabled: H-00001[1] expected S-L0001[2] found S-L0001[1]"),
            re.escape("miscabled: H-00002[1] expected S-L0001[1] found S-L0001[2]"),
            re.escape("4 differences: 1 missing nodes, 0 extra nodes, 0 missing links, 1 extra links, 2 miscabled"),
        ]
        if len(lines) != len(want) or not all(re.fullmatch(w, l) for w, l in zip(want, lines)):
            fail("topo diff lines", r)
        j = json.loads(diff(f, path, "--json").stdout)
        c = j["counts"]
        if (c["missing_nodes"], c["extra_nodes"], c["missing_links"], c["extra_links"], c["miscabled"]) != (1, 0, 0, 1, 2):
            fail(f"topo diff --json counts {c}")
        if [d["kind"] for d in j["differences"]] != ["missing node", "extra link", "miscabled", "miscabled"]:
            fail(f"topo diff --json kinds {j['differences']}")


def t_topo_diff_link_down(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        fault(f, tool, "link", "S-L0002", "16", "down")
        r = diff(f, net)
        if r.returncode != 1 or r.stdout.splitlines() != [
                "missing link: S-L0002[16] - S-S0002[8]",
                "1 differences: 0 missing nodes, 0 extra nodes, 1 missing links, 0 extra links, 0 miscabled"]:
            fail("topo diff with a link down", r)


def t_topo_diff_bad_file(softib, tool, net):
    with SoftibFabric(softib, topology=net) as f:
        bad = os.path.join(f.tmp, "bad.net")
        with open(bad, "w") as fh:
            fh.write('Switch\t2 "S1"\n[1]\t"H1"[1]\n\nCa\t1 "H1"\n[1]\t"S1"[2]\n\n')
        r = diff(f, bad)
        if r.returncode != 2 or not re.search(r"bad\.net:\d+: ", r.stderr):
            fail("a bad net file: exit 2 with file:line", r)
        r = diff(f, os.path.join(f.tmp, "no-such.net"))
        if r.returncode != 2 or "no-such.net" not in r.stderr:
            fail("a missing net file: exit 2", r)


def t_no_daemon(softib, tool, net):
    f = SoftibFabric(softib, topology=net)
    try:
        for args in (["diagnet"], ["topo", "diff", net]):
            r = f.run(*args)
            if r.returncode != 3 or "softib up" not in r.stderr:
                fail(f"{args} with no daemon: exit 3 and a hint", r)
    finally:
        f.cleanup()


def main():
    test, softib, tool, net = sys.argv[1:5]
    globals()["t_" + test](softib, tool, net)
    print(f"{test}: ok")


if __name__ == "__main__":
    main()
