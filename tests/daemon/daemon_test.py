#!/usr/bin/env python3
"""softibd and `softib sm` as real processes (usage: daemon_test.py SOFTIB TEST).

Every test brings up a private fabric (its own runtime and state directories) and always
tears it down. Waits are readiness handshakes (the SM's console lines, the daemon's socket)
with deadlines, never bare sleeps.
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from softib_fabric import SoftibFabric  # noqa: E402

TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
FT2_16 = os.path.join(TOP, "topologies", "ft2-16.net")


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def run_ok(fab, *args, host=None):
    r = fab.run(*args, host=host)
    check(r.returncode == 0, f"softib {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def lids(fab):
    """port GUID -> LID for every port, from `softib netdiscover -p`."""
    out = {}
    for line in run_ok(fab, "netdiscover", "-p").splitlines():
        f = line.split()
        out[f[3]] = int(f[1])
    return out


class Lines:
    """A process's stdout lines, read by a thread so that waits can have deadlines."""

    def __init__(self, proc):
        import queue
        import threading
        self.proc = proc
        self.q = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.q.put(line)
        self.q.put(None)

    def wait(self, pattern, timeout):
        """The first line matching `pattern` and the seconds it took."""
        import queue
        t0 = time.monotonic()
        while True:
            left = timeout - (time.monotonic() - t0)
            check(left > 0, f"no line matching {pattern!r} within {timeout} s")
            try:
                line = self.q.get(timeout=left)
            except queue.Empty:
                continue
            check(line is not None, f"the process exited before printing {pattern!r}")
            if re.search(pattern, line):
                return line, time.monotonic() - t0


# ---- tests ---------------------------------------------------------------------------------

def test_lifecycle(softib):
    fab = SoftibFabric(softib)
    try:
        r = fab.run("status")
        check(r.returncode == 3 and "softib up" in r.stderr, f"status with no daemon: {r.returncode} {r.stderr}")
        fab.up()
        info = json.loads(run_ok(fab, "status", "--json"))
        check(info["fabric"] == fab.name and info["cas"] == 2 and info["switches"] == 1,
              f"default fabric is one switch and two hosts: {info}")
        check(info["embedded_sm"].upper() == "MASTER", f"the embedded SM is master: {info}")
        again = fab.run("up")
        check(again.returncode != 0 and "already up" in again.stderr, f"a second up: {again.returncode} {again.stderr}")
        sock = info["socket"]
        check(os.path.exists(sock), "the socket exists while up")
        run_ok(fab, "down")
        check(not os.path.exists(sock), "down removes the socket")
        check(fab.daemon_pid() is None, "down stops the daemon")
        # Its log was empty (nothing went wrong), so its runtime directory goes too: each
        # fabric name brought up used to leave one behind.
        check(not os.path.exists(os.path.dirname(sock)), f"down removes {os.path.dirname(sock)}: "
              f"{os.listdir(os.path.dirname(sock)) if os.path.isdir(os.path.dirname(sock)) else ''}")
        r = fab.run("down")
        check(r.returncode == 3, f"down with no daemon exits 3: {r.returncode} {r.stderr}")
        bad = fab.run("up", "/no/such/file.net")
        check(bad.returncode == 2 and "/no/such/file.net" in bad.stderr, f"a missing net file: {bad.returncode} {bad.stderr}")
    finally:
        fab.cleanup()


def test_restart_keeps_lids(softib):
    state = tempfile.mkdtemp(prefix="softib-state-")
    fab = SoftibFabric(softib, topology=FT2_16, keep_state=state)
    try:
        fab.up()
        before = lids(fab)
        check(len(before) > 0 and all(v > 0 for v in before.values()), "every port has a LID")
        fab.kill9()
        check(fab.daemon_pid() is None, "kill -9 stopped the daemon")
        fab.up()  # the dead daemon's socket and pid file must not get in the way
        after = lids(fab)
        check(after == before, f"LIDs changed across kill -9 and restart: {sorted(set(before.items()) ^ set(after.items()))[:6]}")
        # The LIDs do come from the state directory: swap two hosts' LIDs in its guid2lid,
        # restart, and exactly those two move.
        fab.kill9()
        g2l = os.path.join(state, fab.name, "guid2lid")
        a, b = "0x0000000000100001", "0x000000000010001f"
        text = open(g2l).read()
        la, lb = (re.search(rf"^{g} (0x[0-9a-f]+) (0x[0-9a-f]+)$", text, re.M) for g in (a, b))
        check(la and lb, f"guid2lid lists both ports: {text[:200]}")
        text = text.replace(la.group(0), f"{a} {lb.group(1)} {lb.group(2)}").replace(lb.group(0), f"{b} {la.group(1)} {la.group(2)}")
        with open(g2l, "w") as f:
            f.write(text)
        fab.up()
        swapped = lids(fab)
        want = dict(before)
        want[a], want[b] = before[b], before[a]
        check(swapped == want, "the restarted SM takes its LIDs from guid2lid")
    finally:
        fab.cleanup()
        subprocess.run(["rm", "-rf", state])


def test_netdiscover_reloads(softib):
    with SoftibFabric(softib, topology=FT2_16) as fab:
        text = run_ok(fab, "netdiscover")
        nodes = json.loads(run_ok(fab, "nodes", "--json"))
    with tempfile.NamedTemporaryFile("w", suffix=".net", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        with SoftibFabric(softib, topology=path) as again:
            text2 = run_ok(again, "netdiscover")
            nodes2 = json.loads(run_ok(again, "nodes", "--json"))
        key = lambda n: n["guid"]  # noqa: E731
        check(sorted(n["guid"] for n in nodes) == sorted(n["guid"] for n in nodes2), "the same node GUIDs")
        ports = lambda ns: sorted((n["guid"], p["port"], p["guid"], json.dumps(p.get("remote")))  # noqa: E731
                                  for n in sorted(ns, key=key) for p in n["port_info"])
        check(ports(nodes) == ports(nodes2), "the same port GUIDs and cables")
        # The header names the time and the port it ran from (the reloaded file's first CA).
        strip = lambda t: [l for l in t.splitlines() if not l.startswith(("# Topology file", "# Initiated"))]  # noqa: E731
        check(sorted(strip(text)) == sorted(strip(text2)), "the reloaded fabric discovers to the same lines")
    finally:
        os.unlink(path)


def test_failover(softib):
    conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    conf.write("sminfo_polling_timeout 500\npolling_retry_number 2\n")
    conf.close()
    sweep = 2
    with SoftibFabric(softib, topology=FT2_16, sm=False) as fab:
        master = fab.popen("sm", "-p", "10", "-s", str(sweep), "-F", conf.name, host="H-00001")
        standby = None
        try:
            m_lines = Lines(master)
            m_lines.wait(r"SUBNET UP", 60)
            standby = fab.popen("sm", "-p", "5", "-s", str(sweep), "-F", conf.name, host="H-00016")
            s_lines = Lines(standby)
            s_lines.wait(r"Entering STANDBY state", 60)
            before = lids(fab)
            master.send_signal(signal.SIGKILL)
            master.wait()
            _, took = s_lines.wait(r"Entering MASTER state", 60)
            check(took <= 2 * sweep, f"the standby took over in {took:.2f} s, more than two sweep intervals ({2 * sweep} s)")
            s_lines.wait(r"SUBNET UP", 60)
            after = lids(fab)
            check(after == before, "no LID changed in the failover")
            # `softib sminfo` from a host names the new master: H-00016's LID and port GUID.
            r = fab.run("sminfo", host="H-00001")
            new_guid = "0x000000000010001f"
            check(r.returncode == 0 and f"sm lid {before[new_guid]} sm guid 0x{int(new_guid, 16):x}," in r.stdout
                  and "SMINFO_MASTER" in r.stdout, f"sminfo after the failover: {r.returncode} {r.stdout} {r.stderr}")
            print(f"standby took over in {took:.2f} s (sweep interval {sweep} s)")
        finally:
            for p in (master, standby):
                if p and p.poll() is None:
                    p.kill()
                    p.wait()
            os.unlink(conf.name)


def test_ports_initialize_until_an_sm_runs(softib):
    with SoftibFabric(softib, sm=False) as fab:
        nodes = json.loads(run_ok(fab, "nodes", "--json"))
        for n in nodes:
            for p in n["port_info"]:
                if p["port"] == 0:
                    continue
                if p.get("remote"):
                    check(p["state"] == "Initialize" and p["physical_state"] == "LinkUp",
                          f"before an SM, a cabled port is Initialize/LinkUp: {n['description']} {p}")
        out = run_ok(fab, "sm", "-o", host="host-a")
        check("SUBNET UP" in out, f"softib sm -o: {out}")
        nodes = json.loads(run_ok(fab, "nodes", "--json"))
        for n in nodes:
            for p in n["port_info"]:
                if p["port"] != 0 and p.get("remote"):
                    check(p["state"] == "Active", f"after the SM, every cabled port is Active: {n['description']} {p}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    softib, name = sys.argv[1], sys.argv[2]
    try:
        globals()["test_" + name](softib)
    except TestFailure as e:
        print(f"FAIL {name}: {e}", file=sys.stderr)
        return 1
    print(f"ok {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
