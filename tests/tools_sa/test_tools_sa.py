#!/usr/bin/env python3
"""Error paths and --json of `softib saquery`, `softib tracert` and `softib routes`, each
on a private fabric (tests/support/softib_fabric.py).

Usage: test_tools_sa.py SOFTIB SOURCE_DIR CASE
Exit status 0 when CASE passes.
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
        extra = f"\nexit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}" if r is not None else ""
        raise AssertionError(what + extra)


def wait_sa(fab, host="host-a", deadline_s=60):
    """Until the SA answers a NodeRecord query with records (the SM's first sweep is done)."""
    deadline = time.time() + deadline_s
    while time.time() < deadline:
        r = fab.run("saquery", "-t", "200", "NR", "--json", host=host)
        if r.returncode == 0 and json.loads(r.stdout).get("records"):
            return
        time.sleep(0.05)
    raise AssertionError("the SA did not answer within the deadline")


def case_no_daemon():
    fab = SoftibFabric(SOFTIB)  # never brought up
    try:
        for argv in (("saquery",), ("tracert", "1", "3"), ("routes", "2")):
            r = fab.run(*argv)
            check(r.returncode == 3, f"{argv}: no daemon should exit 3", r)
            check("softibd" in r.stderr or "daemon" in r.stderr, f"{argv}: names the missing daemon", r)
    finally:
        fab.cleanup()  # its temporary directory (it left one behind on every run)


def case_bad_lid():
    with SoftibFabric(SOFTIB) as fab:
        wait_sa(fab)
        r = fab.run("tracert", "1", "999", host="host-a")
        check(r.returncode == 255, "tracert to LID 999 exits 255", r)
        check(r.stdout == "ibtracert: iberror: failed: Failed to get route information\n", "tracert message", r)
        check("_do_madrpc failed; dport (Lid 999)" in r.stderr, "the timed-out SMP is named", r)
        r = fab.run("routes", "999", host="host-a")
        check(r.returncode == 255, "routes of LID 999 exits 255", r)
        check(r.stdout == "ibroute: iberror: failed: dump tables: node info failed: valid addr?\n", "routes message", r)


def case_routes_ca():
    with SoftibFabric(SOFTIB) as fab:
        wait_sa(fab)
        for dest in ("3", "host-b"):  # a LID, and a node name (softib's convenience)
            r = fab.run("routes", dest, host="host-a")
            check(r.returncode == 255, f"routes of a CA ({dest}) exits 255", r)
            check(r.stdout == "ibroute: iberror: failed: dump tables: not a switch\n", "not a switch", r)


def case_unknown_record():
    with SoftibFabric(SOFTIB) as fab:
        wait_sa(fab)
        r = fab.run("saquery", "NoSuchRecord", host="host-a")
        check(r.returncode == 64, "an unknown query name is looked up as a node name: ENONET", r)
        check('Failed to find lid for "NoSuchRecord": Machine is not on the network' in r.stderr, "message", r)
        check(r.stdout == "", "nothing on stdout", r)


def case_no_sa():
    # No SM ever ran: the port knows no SM LID, so there is no SA to bind to.
    with SoftibFabric(SOFTIB, sm=False) as fab:
        r = fab.run("saquery", host="host-a")
        check(r.returncode == 255, "no SM LID: saquery panics as sa_get_handle fails", r)
        check("Failed to bind to the SA" in r.stderr, "message", r)
    # The SM configured the subnet and then went away: the query times out.
    with SoftibFabric(SOFTIB, sm=False) as fab:
        sm = fab.popen("sm", host="host-a")
        try:
            wait_sa(fab)
        finally:
            sm.send_signal(signal.SIGKILL)
            sm.wait(timeout=30)
        r = fab.run("saquery", "-t", "200", host="host-a")
        check(r.returncode == 110, "an SA that does not answer: ETIMEDOUT", r)
        check(r.stderr == "Query SA failed: Connection timed out\n", "message", r)


def case_json():
    with SoftibFabric(SOFTIB) as fab:
        wait_sa(fab)
        r = fab.run("saquery", "NR", "--json", host="host-a")
        check(r.returncode == 0, "saquery NR --json", r)
        doc = json.loads(r.stdout)
        descs = sorted(x["NodeDescription"] for x in doc["records"])
        check(doc["query"] == "NodeRecord" and len(descs) == 3, "three NodeRecords", r)
        check(any(d.startswith("host-b") for d in descs), "host-b is among them", r)
        r = fab.run("saquery", "LR", "--json", host="host-a")
        links = json.loads(r.stdout)["records"]
        check(len(links) == 4 and all({"FromLID", "ToLID"} <= set(x) for x in links), "four LinkRecords", r)
        r = fab.run("tracert", "--json", "host-a", "host-b", host="host-a")
        check(r.returncode == 0, "tracert --json by names", r)
        hops = json.loads(r.stdout)["hops"]
        check(hops[0]["where"] == "From" and hops[-1]["where"] == "To" and len(hops) == 4, "From, switch, host-b, To", r)
        r = fab.run("routes", "--json", "2", host="host-a")
        check(r.returncode == 0, "routes --json", r)
        routes = json.loads(r.stdout)["routes"]
        check([x["lid"] for x in routes] == [1, 2, 3], "the switch routes LIDs 1-3", r)
        r = fab.run("saquery", "NoSuchRecord", "--json", host="host-a")
        doc = json.loads(r.stdout)
        check(r.returncode == 64 and doc["exit_status"] == 64 and "error" in doc, "errors in JSON too", r)


def main():
    global SOFTIB
    SOFTIB = sys.argv[1]
    case = sys.argv[3]
    globals()["case_" + case]()
    print(f"ok {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
