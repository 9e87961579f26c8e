#!/usr/bin/env python3
"""The diagnostic commands (stat, devices, devinfo, sminfo, perfquery, ping, port set, link
show|set) on private fabrics: port states before and after an SM, fault injection seen by
the tools, every command's error paths and exit statuses, and --json.

Usage: test_diag_tools.py SOFTIB TEST   (TEST: one of the test_* names below, without test_)
Every wait is a readiness loop with a deadline; nothing sleeps blindly.
"""

import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from softib_fabric import SoftibFabric  # noqa: E402

SOFTIB = None


def check(cond, what, r=None):
    if not cond:
        extra = f"\n--- exit {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}" if r is not None else ""
        raise AssertionError(what + extra)


def wait_for(fn, what, timeout=60):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        ok, last = fn()
        if ok:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


def wait_active(fab, host):
    def probe():
        r = fab.run("stat", host=host)
        return r.returncode == 0 and "State: Active" in r.stdout, r.stdout + r.stderr
    return wait_for(probe, f"{host}'s port to be Active")


def lid_of(fab, host):
    r = fab.run("stat", "--json", host=host)
    check(r.returncode == 0, "stat --json", r)
    return json.loads(r.stdout)["cas"][0]["ports"][0]["base_lid"]


# ---- tests ----

def test_port_states():
    with SoftibFabric(SOFTIB, sm=False) as fab:
        r = fab.run("stat", host="host-a")
        check(r.returncode == 0, "stat without an SM", r)
        check("\t\tState: Initializing\n" in r.stdout and "\t\tPhysical state: LinkUp\n" in r.stdout,
              "before any SM a port reads Initializing/LinkUp", r)
        check("\t\tBase lid: 0\n" in r.stdout and "\t\tSM lid: 0\n" in r.stdout, "no LIDs before an SM", r)
        r = fab.run("devinfo", host="host-a")
        check(r.returncode == 0 and "PORT_INIT (2)" in r.stdout, "devinfo before an SM", r)
        r = fab.run("link", "show", host="host-a")
        check(r.returncode == 0 and "state INIT physical_state LINK_UP" in r.stdout, "link show before an SM", r)
        r = fab.run("sm", "-o", host="host-a", timeout=120)
        check(r.returncode == 0 and "SUBNET UP" in r.stdout, "softib sm -o", r)
        out = wait_active(fab, "host-a")
        check("Physical state: LinkUp" in out and "SM lid: 1" in out, "Active after the SM: " + out)
        r = fab.run("stat", "softib0", "1", host="host-b")
        check(r.returncode == 0 and r.stdout.startswith("CA: 'softib0'\nPort 1:\nState: Active\n"), "stat CA port", r)
        r = fab.run("devices", host="host-b")
        check(r.returncode == 0 and "softib0" in r.stdout and "node GUID" in r.stdout, "devices", r)


def test_devinfo_matches_ibv_devinfo(up_args=()):
    """`softib devices` and `softib devinfo` (-v, -i) print what the real ibv_devices and
    ibv_devinfo print through softib's drop-in libibverbs, line for line, for each host."""
    with SoftibFabric(SOFTIB, up_args=up_args) as fab:
        no_leaks = {"ASAN_OPTIONS": "detect_leaks=0"}  # the real tools' own exit-time leaks
        for host in ("host-a", "host-b"):
            wait_active(fab, host)
            for ours, real in ((["devices"], ["ibv_devices"]), (["devinfo"], ["ibv_devinfo"]),
                               (["devinfo", "-v"], ["ibv_devinfo", "-v"]),
                               (["devinfo", "-v", "-i", "1"], ["ibv_devinfo", "-v", "-i", "1"]),
                               (["devinfo", "-l"], ["ibv_devinfo", "-l"])):
                a = fab.run(*ours, host=host)
                b = fab.run("run", "--", *real, host=host, env=no_leaks)
                check(b.returncode == 0 and "runtime error" not in b.stderr, f"{' '.join(real)} through softib run", b)
                check(a.returncode == 0, f"softib {' '.join(ours)}", a)
                check(a.stdout == b.stdout, f"softib {' '.join(ours)} differs from {' '.join(real)} on {host}:\n"
                      f"--- softib\n{a.stdout}--- {real[0]}\n{b.stdout}")


def test_devinfo_matches_ibv_devinfo_roce():
    """The same on a RoCE fabric (Ethernet link layer, RoCE v2 GIDs); and ibstat's view of
    such a port: Active, no LIDs, Ethernet."""
    test_devinfo_matches_ibv_devinfo(up_args=["--roce"])
    with SoftibFabric(SOFTIB, up_args=["--roce"]) as fab:
        out = wait_active(fab, "host-b")
        for line in ("\t\tBase lid: 0\n", "\t\tSM lid: 0\n", "\t\tLink layer: Ethernet\n"):
            check(line in out, f"softib stat of a RoCE port has {line!r}:\n{out}")
        r = fab.run("stat", "--json", host="host-b")
        port = json.loads(r.stdout)["cas"][0]["ports"][0]
        check(port["link_layer"] == "Ethernet" and port["base_lid"] == 0, f"stat --json: {port}", r)
        r = fab.run("link", "show", host="host-b")
        check(r.returncode == 0 and r.stdout == "link softib0/1 state ACTIVE physical_state LINK_UP\n",
              "link show of a RoCE port: no LIDs", r)


def test_no_daemon():
    fab = SoftibFabric(SOFTIB)  # never brought up
    try:
        for argv in (["stat"], ["devices"], ["devinfo"], ["sminfo"], ["perfquery"], ["ping", "-c", "1", "1"],
                     ["link", "show"], ["port", "set", "host-a", "1", "down"]):
            r = fab.run(*argv, timeout=30)
            check(r.returncode == 3, f"softib {' '.join(argv)} with no daemon exits 3", r)
            check("softib up" in r.stderr or "softibd" in r.stderr, "the message says what to do", r)
    finally:
        fab.cleanup()


def test_bad_ca_and_port():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-a")
        r = fab.run("stat", "mlx5_9", host="host-a")
        check(r.returncode == 255 and "'mlx5_9' IB device can't be found" in r.stderr and r.stdout == "",
              "stat of an unknown CA", r)
        r = fab.run("stat", "softib0", "2", host="host-a")
        check(r.returncode == 255 and "has no port number 2 - max (1)" in r.stderr, "stat of a missing port", r)
        r = fab.run("devinfo", "-d", "mlx5_9", host="host-a")
        check(r.returncode == 255 and "IB device 'mlx5_9' wasn't found" in r.stderr, "devinfo -d unknown", r)
        r = fab.run("devinfo", "-i", "7", host="host-a")
        check(r.returncode == 4 and "Invalid port requested for device" in r.stderr, "devinfo -i 7", r)
        r = fab.run("perfquery", "-C", "mlx5_9", host="host-a")
        check(r.returncode == 255 and "perfquery: iberror: failed: Failed to open 'mlx5_9'" in r.stdout,
              "perfquery -C unknown", r)
        r = fab.run("sminfo", "-P", "3", host="host-a")
        check(r.returncode == 255 and "Failed to open" in r.stdout, "sminfo -P 3", r)
        r = fab.run("stat", host="S-switch")
        check(r.returncode == 2 and "switch" in r.stderr, "a switch is not a host", r)
        r = fab.run("link", "show", "host-a/9", host="host-a")
        check(r.returncode == 2 and "no port 9" in r.stderr, "link show of a missing port", r)
        r = fab.run("port", "set", "nosuchnode", "1", "down")
        check(r.returncode == 2 and "nosuchnode" in r.stderr, "port set on an unknown node", r)
        r = fab.run("port", "set", "host-a", "1", "sideways")
        check(r.returncode == 2 and "unknown action" in r.stderr, "port set with a bad action", r)
        r = fab.run("port", "set", "host-a", "1", "errors", "NoSuchCounter", "1")
        check(r.returncode == 2 and "SymbolErrorCounter" in r.stderr, "port set errors with a bad counter", r)


def test_unknown_lid():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-a")
        t0 = time.time()
        r = fab.run("perfquery", "-t", "100", "999", host="host-a", timeout=60)
        check(r.returncode == 255, "perfquery of an unknown LID fails with 255", r)
        check(r.stdout == "perfquery: iberror: failed: classportinfo query\n", "perfquery's iberror line", r)
        check("mad_rpc: _do_madrpc failed; dport (Lid 999)" in r.stderr, "libibmad's warning", r)
        check(time.time() - t0 < 30, "it times out, it does not hang")
        r = fab.run("sminfo", "-t", "100", "999", host="host-a", timeout=60)
        check(r.returncode == 255 and r.stdout == "sminfo: iberror: failed: query\n", "sminfo of an unknown LID", r)


def test_ping():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-a")
        lid_b = lid_of(fab, "host-b")
        # No server: every ping times out, with the statistics block, and the command ends.
        r = fab.run("ping", "-c", "2", "-t", "100", "-L", str(lid_b), host="host-a", timeout=60)
        check(r.returncode == 0, "a ping with no server still ends with status 0 (as ibping)", r)
        check(f"---  (Lid {lid_b}) ibping statistics ---" in r.stdout and "2 packets transmitted, 0 received, 100% packet loss"
              in r.stdout, "the statistics of lost pings", r)
        check(r.stderr.count(f"mad_rpc_rmpp: _do_madrpc failed; dport (Lid {lid_b})") == 2, "one warning per ping", r)
        server = fab.popen("ping", "-S", host="host-b")
        try:
            def probe():
                p = fab.run("ping", "-f", "-c", "1", "-t", "200", "-L", str(lid_b), host="host-a", timeout=30)
                return p.returncode == 0 and "1 received" in p.stdout, p.stdout
            wait_for(probe, "the ping server to answer")
            r = fab.run("ping", "-c", "2", "-L", str(lid_b), host="host-a", timeout=60)
            check(r.returncode == 0 and r.stdout.count(f"Pong from host-b") == 2, "pongs from host-b", r)
            check(f"--- host-b" in r.stdout and "2 packets transmitted, 2 received, 0% packet loss" in r.stdout,
                  "the statistics", r)
            r = fab.run("ping", "--json", "-c", "1", "-L", str(lid_b), host="host-a", timeout=60)
            j = json.loads(r.stdout)
            check(j["received"] == 1 and j["pongs"][0]["from"].startswith("host-b"), "ping --json", r)
            # -G resolves the port GUID through the SA.
            guid = json.loads(fab.run("stat", "--json", host="host-b").stdout)["cas"][0]["ports"][0]["port_guid"]
            r = fab.run("ping", "-c", "1", "-G", guid, host="host-a", timeout=60)
            check(r.returncode == 0 and "Pong from host-b" in r.stdout, "ping -G", r)
            # A client interrupted mid-run reports and exits 0, as ibping's signal handler
            # does. Its first pong says it is running (its handler is in place by then).
            client = fab.popen("ping", "-L", str(lid_b), host="host-a")
            first = client.stdout.readline()
            check(first.startswith("Pong from host-b"), f"the client's first pong: {first!r}")
            client.send_signal(signal.SIGINT)
            out, err = client.communicate(timeout=20)
            check(client.returncode == 0 and "ibping statistics ---" in out,
                  f"SIGINT report: exit {client.returncode}\n{out}{err}")
        finally:
            server.send_signal(signal.SIGTERM)
            rc = server.wait(timeout=20)
        check(rc == 0, f"the ping server leaves cleanly on SIGTERM (exit {rc})")


def test_port_down():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-b")
        r = fab.run("port", "set", "host-b", "1", "down")
        check(r.returncode == 0 and r.stdout == "", "port set down", r)
        r = fab.run("stat", host="host-b")
        check("\t\tState: Down\n" in r.stdout and "\t\tPhysical state: Polling\n" in r.stdout, "stat shows Down", r)
        r = fab.run("link", "show", host="host-b")
        check(r.stdout.startswith("link softib0/1 ") and "state DOWN physical_state POLLING" in r.stdout,
              "link show shows it", r)
        r = fab.run("link", "show", "host-b/1", host="host-a")
        check(r.stdout.startswith("link host-b/1 ") and "state DOWN" in r.stdout, "link show NODE/PORT", r)
        r = fab.run("link", "set", "host-b/1", "state", "up", host="host-a")
        check(r.returncode == 0, "link set up", r)

        def up():
            s = fab.run("stat", host="host-b")
            return "Physical state: LinkUp" in s.stdout, s.stdout
        wait_for(up, "the link to train again")
        r = fab.run("port", "set", "S-switch", "2", "disable")
        check(r.returncode == 0, "port set disable on a switch port", r)
        r = fab.run("link", "show", "S-switch/2")
        check("physical_state DISABLED" in r.stdout, "a disabled port", r)
        r = fab.run("port", "set", "S-switch", "2", "enable")
        check(r.returncode == 0, "port set enable", r)


def test_errors_in_perfquery():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-b")
        lid_b = lid_of(fab, "host-b")
        r = fab.run("port", "set", "host-b", "1", "errors", "SymbolErrorCounter", "5")
        check(r.returncode == 0, "inject symbol errors", r)
        r = fab.run("port", "set", "host-b", "1", "errors", "LinkDownedCounter", "2")
        check(r.returncode == 0, "inject link downed", r)
        r = fab.run("perfquery", str(lid_b), "1", host="host-a")
        check(r.returncode == 0 and "SymbolErrorCounter:..............5\n" in r.stdout
              and "LinkDownedCounter:...............2\n" in r.stdout, "perfquery shows the injected errors", r)
        r = fab.run("perfquery", host="host-b")
        check(f"# Port counters: Lid {lid_b} port 1 (CapMask: 0x1200)" in r.stdout
              and "SymbolErrorCounter:..............5\n" in r.stdout, "the local port's own counters", r)
        r = fab.run("perfquery", "-r", str(lid_b), "1", host="host-a")
        check(r.returncode == 0 and "SymbolErrorCounter:..............5\n" in r.stdout, "read then reset", r)
        r = fab.run("perfquery", str(lid_b), "1", host="host-a")
        check("SymbolErrorCounter:..............0\n" in r.stdout, "reset cleared it", r)
        r = fab.run("perfquery", "-x", str(lid_b), "1", host="host-a")
        check(r.returncode == 0 and r.stdout.startswith(f"# Port extended counters: Lid {lid_b} port 1"), "-x", r)


def test_json():
    with SoftibFabric(SOFTIB) as fab:
        wait_active(fab, "host-a")
        lid_b = lid_of(fab, "host-b")
        for argv in (["stat", "--json"], ["stat", "-s", "--json"], ["devices", "--json"], ["devinfo", "--json"],
                     ["devinfo", "-l", "--json"], ["sminfo", "--json"], ["perfquery", "--json"],
                     ["perfquery", "-x", "--json", str(lid_b), "1"], ["link", "show", "-j"],
                     ["port", "set", "--json", "host-b", "1", "errors", "PortRcvErrors", "1"]):
            r = fab.run(*argv, host="host-a")
            check(r.returncode == 0, f"softib {' '.join(argv)}", r)
            try:
                json.loads(r.stdout)
            except ValueError as e:
                raise AssertionError(f"softib {' '.join(argv)}: not JSON ({e}): {r.stdout}")
        j = json.loads(fab.run("sminfo", "--json", host="host-a").stdout)
        check(j["state_name"] == "SMINFO_MASTER", f"sminfo --json: {j}")
        j = json.loads(fab.run("perfquery", "--json", str(lid_b), "1", host="host-a").stdout)
        check(j["counters"][0]["counters"]["PortRcvErrors"] == 1, f"perfquery --json: {j}")


def test_help():
    fab = SoftibFabric(SOFTIB)
    try:
        for sub in (["stat"], ["devices"], ["devinfo"], ["sminfo"], ["perfquery"], ["ping"], ["port", "set"],
                    ["link", "show"], ["link", "set"]):
            r = fab.run(*sub, "-h")
            check(r.returncode == 0 and "Usage" in r.stdout, f"softib {' '.join(sub)} -h", r)
    finally:
        fab.cleanup()


def main():
    global SOFTIB
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    SOFTIB = os.path.abspath(sys.argv[1])
    fn = globals().get("test_" + sys.argv[2])
    if fn is None:
        print(f"no test {sys.argv[2]}", file=sys.stderr)
        return 2
    fn()
    print(f"ok {sys.argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
