#!/usr/bin/env python3
"""The shared-memory data path against its anchors (issue 5, brief §6).

Each softib figure comes from `build/release/bench/bench_verbs` and is measured in the same
invocation as its anchors, interleaved round by round (anchor, ours, anchor, ours, ...; the
best of --runs rounds each), with a cache-line ping-pong probe in every round, because the
two vCPUs here move between "near" and "far" within seconds. One JSON object per line:

  {"bench": "verbs_rc_write_bw", "size": 1048576, "value": 9120.5, "unit": "MBps",
   "anchor": "ucx_tag_bw_cma", "anchor_value": 11234.0, "ratio": 0.81, "better": "higher",
   "probe_cacheline_ns": 31.2, ...}

- value / anchor_value: best of the rounds (min for latency, max otherwise); the per-round
  figures are in "values" / "anchor_values". ratio = value / anchor_value (so below 1 is
  better for latency, above 1 is better for bandwidth and rate; "better" says which).
- units: "us" (half round trip), "MBps" (10^6 payload bytes per second: UCX prints MiB/s,
  converted here), "Mmsgs" (10^6 messages per second).
- probe_cacheline_ns: the median over the rounds of each probe's one-way time (min of its
  runs; probe_values has one per round, probe_cacheline_ns_median the median-of-runs
  figure); "vcpus" is "near" below 90 ns, else "far".
- round_vcpus, round_ratios, ratio_by_vcpus: the fair comparison. The best of the rounds can
  pair a figure taken on near vCPUs with an anchor's taken on far ones (the state flips
  within seconds). Each round also ends with a probe: round_vcpus says per round whether both
  of its probes were "near" or "far" (else "mixed"); round_ratios is ours / the anchor's
  within each round; ratio_by_vcpus the median of those per state ("mixed" rounds left out).
- round_issue, ratio_by_state: per round, the fewest adds a nanosecond any vCPU issued in the round's two
  issue probes (anchor_issue_rate, 50 ms a vCPU, as the round opens and closes): ~12.5 while
  the host leaves each vCPU's hyperthread sibling idle, 5-7 while it runs something there
  (lower still while another process of this machine runs on the vCPU: see others_cpu).
  Our ping-pong does more instructions a round trip than UCX's tag_lat, so a busy sibling
  slows it more (src/engine/README.md, "Round trips bound by instructions"): compare latency
  ratios of rounds in like states. ratio_by_state is the median round ratio per state,
  "near/idle", "near/busy", "far/idle", "far/busy" (siblings idle: round_issue >= 10).
- others_cpu: the cores' worth of CPU that processes other than this harness and its
  children used during the figure (a compiler next door shows as ~1); steal_cpu: the
  hypervisor's steal time, likewise. Figures taken with others_cpu well above 0 are suspect.
- Without bench_verbs the anchors still run; value and ratio are null and "note" says why.
  An anchor that cannot run gives anchor_value null and "anchor_error".
The last line is a summary: {"summary": "datapath", ...}.

Anchors (bench/anchors/README.md): UCX ucx_perftest tag_lat/tag_bw over posix (and over cma
for bandwidth), our libfabric shm RMA program (anchor_fi_rma_bw), the cache-line ping-pong
(anchor_cacheline_pingpong) and single-thread memcpy (anchor_memcpy_bw).

  python3 bench/datapath.py [--quick] [--runs R] [--sizes 64,4K,1M] [--only lat,evlat,bw,rate,onecpu]

evlat is the ping-pong in event mode: both sides sleep on a completion channel (ours) or in
ucx_perftest -E sleep (UCX) until their message arrives. onecpu is the polling ping-pong with
both programs (every thread) pinned to one CPU, as on a one-CPU CI runner (informational: no
target); a poller that spins through its idle polls keeps that CPU for the scheduler's slice.
"""

import argparse
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

# Message sizes for the bandwidth figures: 64, 256, 1K, 4K, 16K, 64K, 256K, 1M, 4M.
FULL_SIZES = [64 * 4**k for k in range(9)]
QUICK_SIZES = [64, 4096, 65536, 1 << 20, 4 << 20]

NEAR_NS = 90.0  # the probe below this: the vCPUs are "near" (seen here: ~30-65 ns near, 110-240 ns far)

# ucx_perftest configurations. perftest allocates its buffers with ucp_mem_map(ALLOCATE),
# which puts them in posix shared memory, so over posix a rendezvous is one copy by the
# receiver straight out of the sender's buffer (rkey_ptr). With cma, the receiver fetches
# with process_vm_readv (get_zcopy). With UCX_ALLOC_PRIO=heap the buffers are private
# memory, as a verbs MR is; posix then sends rendezvous data as 8 KiB active messages through
# its FIFO (two copies, one per core, pipelined). Checked with strace (bench/anchors/README.md).
UCX_CONFIGS = {
    "posix": {"UCX_TLS": "posix,self"},
    "cma": {"UCX_TLS": "cma,posix,self"},
    "posix_heap": {"UCX_TLS": "posix,self", "UCX_ALLOC_PRIO": "heap"},
}


# --------------------------------------------------------------------------- processes

_children = set()


def vcpu_state(probe_ns):
    """"near" below NEAR_NS, else "far"."""
    return "near" if probe_ns < NEAR_NS else "far"


def ratio(a, b):
    return round(a / b, 4) if a and b else None


def round_state(opening, closing):
    """"near" or "far" when both of a round's probes say so, else "mixed" (or None without
    an opening probe)."""
    if not isinstance(opening, dict):
        return None
    states = {vcpu_state(p["one_way_ns_min"]) for p in (opening, closing) if isinstance(p, dict)}
    return states.pop() if len(states) == 1 else "mixed"


ISSUE_IDLE = 10.0  # round_issue at or above this: both vCPUs' hyperthread siblings idled (~12.5; busy: 5-7)


def sibling_state(adds_per_ns):
    """"idle" or "busy" for a round_issue figure (None: not measured)."""
    if adds_per_ns is None:
        return None
    return "idle" if adds_per_ns >= ISSUE_IDLE else "busy"


def combined_states(vcpus, issue):
    """Per round, "near/idle", "far/busy", ...: the vCPUs' distance and their siblings' load
    (None when either is unknown; a "mixed" round stays "mixed")."""
    out = []
    for v, i in zip(vcpus, issue):
        sib = sibling_state(i)
        out.append(None if v is None or sib is None else f"{v}/{sib}")
    return out


def paired_ratios(ours, theirs, states):
    """Pairs the figures of each round (`ours` and `theirs` hold one dict with "value", or
    an error, per round; `states` one round_state() per round). Returns the per-round ratios
    ours / theirs (None where either side has no figure) and their median per vCPU state,
    {"near": r, "far": r}, without the "mixed" rounds and without states that have none."""
    per_round = []
    for mine, other in zip(ours, theirs):
        a = mine.get("value") if isinstance(mine, dict) else None
        b = other.get("value") if isinstance(other, dict) else None
        per_round.append(ratio(a, b))
    by_state = {}
    for r, state in zip(per_round, states):
        if r is not None and state is not None and "mixed" not in state:
            by_state.setdefault(state, []).append(r)
    return per_round, {k: round(statistics.median(v), 4) for k, v in sorted(by_state.items())}


def _set_pdeathsig():
    """In the child before exec: get SIGTERM when the harness dies (even by SIGKILL). SIGTERM,
    not SIGKILL, so that libfabric's shm provider can unlink its regions on the way out."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def spawn(argv, env=None, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """Starts argv in its own session (so its whole group can be killed) and tracks it."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.Popen(argv, env=full_env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                         text=True, start_new_session=True, preexec_fn=_set_pdeathsig)
    _children.add(p)
    return p


def _group_members(pgid):
    """Live (not zombie) pids whose process group is pgid, from /proc/PID/stat."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(entry))
    return pids


def _remove_shm_leftovers(pids):
    """libfabric's shm provider names its region /dev/shm/<pid>:<ep>:<domain> and unlinks it
    on exit or SIGTERM, not on SIGKILL: remove those of our dead processes."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return
    for pid in pids:
        if os.path.exists(f"/proc/{pid}"):
            continue
        for name in names:
            if name.startswith(f"{pid}:"):
                try:
                    os.unlink(os.path.join("/dev/shm", name))
                except OSError:
                    pass


def stop(p, grace=0.0):
    """Waits up to `grace` seconds for p to exit, then SIGTERM, then SIGKILL to its process
    group; reaps it, then does the same for what is left of its group (an anchor's forked
    child), which is not ours to reap."""
    seen = {p.pid}
    try:
        if grace > 0:
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            if p.poll() is not None:
                break
            seen.update(_group_members(p.pid))
            try:
                os.killpg(p.pid, sig)  # p is not reaped yet: the group id is still ours
            except ProcessLookupError:
                break
            try:
                p.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
        p.wait()
        # Members keep the group id alive, so a pid found with it is one of ours.
        for sig in (signal.SIGTERM, signal.SIGKILL):
            members = _group_members(p.pid)
            if not members:
                break
            seen.update(members)
            for pid in members:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 2.0
            while _group_members(p.pid) and time.monotonic() < deadline:
                time.sleep(0.01)
        _remove_shm_leftovers(seen)
    finally:
        for f in (p.stdout, p.stderr):
            if f and not f.closed:
                f.close()
        _children.discard(p)


def stop_all():
    for p in list(_children):
        stop(p)


def run(argv, env=None, timeout=120.0):
    """Runs argv to completion; returns (returncode, stdout, stderr). On timeout it is
    killed and returncode is None."""
    p = spawn(argv, env)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        stop(p)
        return None, "", f"(timed out after {timeout:g} s)"
    finally:
        stop(p)


def _on_signal(signum, _frame):
    raise SystemExit(128 + signum)


class AnchorError(Exception):
    pass


def _cpu_snapshot():
    """(busy jiffies of the whole machine, steal jiffies, our own CPU seconds including
    reaped children, monotonic time)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    t = os.times()
    own = t.user + t.system + t.children_user + t.children_system
    return user + nice + system + irq + softirq, steal, own, time.monotonic()


def others_cpu(before, after):
    """What ran besides this harness and its children between two snapshots: the cores'
    worth of CPU that other processes used, and the steal time (the hypervisor's), both
    averaged over the interval. Our own children count only once reaped, which they all are
    at the end of a figure."""
    tick = os.sysconf("SC_CLK_TCK")
    wall = after[3] - before[3]
    if wall <= 0:
        return None, None
    busy = (after[0] - before[0]) / tick
    steal = (after[1] - before[1]) / tick
    return round(max(0.0, busy - (after[2] - before[2])) / wall, 2), round(steal / wall, 2)


def json_lines(text):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except ValueError:
                pass


def tail(text, n=3):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return " | ".join(lines[-n:])


# --------------------------------------------------------------------------- UCX


def free_port():
    """An ephemeral TCP port nobody is bound to right now (the server may still lose a race
    for it; ucx_perftest then fails to bind and the caller retries with another)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _socket_inodes(pid):
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def is_listening(pid, port):
    """True when process pid has a TCP socket in LISTEN on `port` (read from /proc: a test
    connection would be taken by ucx_perftest's accept() as its client)."""
    want = f":{port:04X}"
    inodes = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    cols = line.split()
                    if len(cols) > 9 and cols[1].endswith(want) and cols[3] == "0A":
                        if inodes is None:
                            inodes = _socket_inodes(pid)
                        if cols[9] in inodes:
                            return True
        except OSError:
            continue
    return False


_FINAL = re.compile(r"^Final:\s+(.*)$", re.M)


def wait_listening(server, port, what, timeout=15.0):
    """Waits until /proc shows `server` (a spawn()ed process) listening on `port`: True, or
    False when it exited first (someone else took the port, say). AnchorError after `timeout`
    seconds."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while not is_listening(server.pid, port):
        if server.poll() is not None:
            return False
        if time.monotonic() > deadline:
            raise AnchorError(f"{what} did not listen on port {port} within {timeout:g} s")
        time.sleep(delay)  # polling /proc for the listen, not a synchronisation sleep
        delay = min(delay * 2, 0.02)
    return True


def parse_ucx_final(text):
    """ucx_perftest's "Final:" line: iterations, latency (usec) 50%ile / average / overall,
    bandwidth (MiB/s) average / overall, message rate (msg/s) average / overall. "average" is
    the last reporting interval's, "overall" the whole run's."""
    m = _FINAL.search(text)
    if not m:
        raise AnchorError("no 'Final:' line in ucx_perftest output: " + tail(text))
    cols = m.group(1).split()
    if len(cols) < 8:
        raise AnchorError("short 'Final:' line: " + m.group(0))
    v = [float(c.replace(",", "")) for c in cols[:8]]
    return {"iters": int(v[0]), "lat_p50_us": v[1], "lat_avg_us": v[2], "lat_overall_us": v[3],
            "bw_avg_MiBps": v[4], "bw_overall_MiBps": v[5], "rate_avg": v[6], "rate_overall": v[7]}


def ucx_perftest(exe, config, test, size, iters, warmup, timeout, extra=(), prefix=()):
    """One ucx_perftest server/client pair on localhost with a private port, both with the
    environment of UCX_CONFIGS[config]. The server is started first and the client only once
    /proc shows the server listening; the server is always stopped (it exits by itself after
    one test). `prefix` goes before both commands (taskset: it execs, so the pid is the
    server's)."""
    env = dict(UCX_CONFIGS[config], UCX_WARN_UNUSED_ENV_VARS="n")
    last = ""
    for _attempt in range(4):
        port = free_port()
        server = spawn([*prefix, exe, "-p", str(port)], env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            if not wait_listening(server, port, "ucx_perftest server"):
                last = f"server exited ({server.returncode}): " + tail(server.stderr.read())
                continue  # lost the port to someone else: try another
            rc, out, err = run([*prefix, exe, "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size), "-n",
                                str(iters), "-w", str(warmup)] + list(extra), env, timeout)
            if rc == 0:
                return parse_ucx_final(out)
            last = f"client exit {rc}: " + tail(out + "\n" + err)
            if "connect" not in last:
                break  # not a connection problem: retrying will not help
        finally:
            stop(server, grace=3.0)
    raise AnchorError(f"ucx_perftest {test} ({config}): {last}")


# --------------------------------------------------------------------------- the harness


class Harness:
    def __init__(self, args):
        self.args = args
        build = os.path.abspath(args.build)
        self.anchors = os.path.join(build, "bench", "anchors")
        self.bench_verbs = args.bench_verbs or os.path.join(build, "bench", "bench_verbs")
        self.ucx_exe = shutil.which("ucx_perftest")
        self.quick = args.quick
        self.timeout = args.timeout
        self.lines = 0
        self.softib_note = None
        if not os.access(self.bench_verbs, os.X_OK):
            self.softib_note = (f"softib skipped: {os.path.relpath(self.bench_verbs, TOP)} is not built yet "
                                "(anchors only)")
            print(f"datapath: {self.softib_note}", file=sys.stderr)

    # -- individual measurements; each returns a dict or raises AnchorError

    def anchor_exe(self, name):
        exe = os.path.join(self.anchors, name)
        if not os.access(exe, os.X_OK):
            raise AnchorError(f"{os.path.relpath(exe, TOP)} is not built "
                              "(cmake --build --preset release --target " + name + ")")
        return exe

    def probe(self):
        exe = self.anchor_exe("anchor_cacheline_pingpong")
        rc, out, err = run([exe, "--iters", "10000", "--runs", "9", "--max-ms", "50"], timeout=30)
        for obj in json_lines(out):
            if obj.get("bench") == "cacheline_pingpong" and rc == 0:
                return obj
        raise AnchorError("cacheline_pingpong: " + tail(err or out))

    def issue_probe(self):
        """The fewest adds a nanosecond a vCPU issued (anchor_issue_rate), or None."""
        try:
            exe = self.anchor_exe("anchor_issue_rate")
        except AnchorError:
            return None
        rc, out, _ = run([exe, "--ms", "50"], timeout=30)
        for obj in json_lines(out):
            if obj.get("bench") == "issue_rate" and rc == 0:
                return obj["min"]
        return None

    def memcpy(self, size):
        exe = self.anchor_exe("anchor_memcpy_bw")
        rc, out, err = run([exe, "--sizes", str(size), "--runs", "3", "--min-ms", "10" if self.quick else "30"],
                           timeout=self.timeout)
        for obj in json_lines(out):
            if obj.get("bench") == "memcpy_bw" and rc == 0:
                return {"value": obj["MBps"]}
        raise AnchorError("memcpy_bw: " + tail(err or out))

    def fi_rma(self, size, iters):
        """Both ops in one run of anchor_fi_rma_bw: {"write": MBps, "read": MBps}."""
        exe = self.anchor_exe("anchor_fi_rma_bw")
        rc, out, err = run([exe, "--ops", "write,read", "--sizes", str(size), "--iters", str(iters)],
                           timeout=self.timeout)
        got = {}
        for obj in json_lines(out):
            if obj.get("bench") == "fi_rma_bw":
                if not obj.get("verified"):
                    raise AnchorError(f"fi_rma_bw {obj.get('op')} {size}: data not verified")
                got[obj["op"]] = {"value": obj["MBps"], "usec_per_op": obj["usec_per_op"]}
        if rc != 0 or set(got) != {"write", "read"}:
            raise AnchorError(f"fi_rma_bw exit {rc}: " + tail(err or out))
        return got

    def ucx(self, config, test, size, iters, warmup, extra=(), prefix=()):
        if not self.ucx_exe:
            raise AnchorError("ucx_perftest not found (scripts/bootstrap.sh --bench installs ucx-utils)")
        return ucx_perftest(self.ucx_exe, config, test, size, iters, warmup, self.timeout, extra, prefix)

    def ours(self, argv, bench, key, prefix=()):
        if self.softib_note:
            raise AnchorError(self.softib_note)
        rc, out, err = run([*prefix, self.bench_verbs] + argv, timeout=self.timeout)
        for obj in json_lines(out):
            if obj.get("bench") == bench and key in obj:
                if rc == 0:
                    p50 = obj.get(key + "_p50")
                    return {"value": float(obj[key]), "p50": float(p50) if p50 is not None else None}
        raise AnchorError(f"bench_verbs {' '.join(argv)}: exit {rc}: " + tail(err or out))

    # -- rounds and lines

    def rounds(self, steps):
        """Runs `steps` (name -> thunk) once per round, in the given order (anchors and ours
        alternate), with a cache-line probe first; returns (results by name: list per round of
        dict or AnchorError, probes)."""
        results = {name: [] for name, _ in steps}
        probes = []
        self.round_vcpus = []
        self.round_issue = []
        self.cpu_before = _cpu_snapshot()
        for _ in range(self.args.runs):
            issue = [self.issue_probe()]
            try:
                probes.append(self.probe())
            except AnchorError as e:
                probes.append(e)
            for name, thunk in steps:
                try:
                    results[name].append(thunk())
                except AnchorError as e:
                    results[name].append(e)
            # A second probe closes the round: its figures pair with the anchor's only when
            # the vCPUs stayed where they were throughout ("near" or "far"; else "mixed").
            try:
                closing = self.probe()
            except AnchorError:
                closing = None
            self.round_vcpus.append(round_state(probes[-1], closing))
            issue.append(self.issue_probe())
            known = [v for v in issue if v is not None]
            self.round_issue.append(min(known) if known else None)
        return results, probes

    def emit(self, bench, size, unit, better, ours, anchors, probes, extra=None):
        """One line per anchor. `ours`: per-round results; `anchors`: [(name, per-round
        results, detail dict)]. A latency result may carry "p50", the run's median half round
        trip (UCX's 50th percentile column), which is robust to preemption: when both sides
        have one, the line also gets value_p50, anchor_value_p50 and ratio_p50. (Not for the
        windowed streams: there a sender's median iteration only posts a send.)"""
        pick = min if better == "lower" else max
        digits = {"us": 4, "MBps": 1, "Mmsgs": 3}[unit]

        def rnd(v):
            return None if v is None else round(v, digits)

        def best(results, key="value"):
            vals = [r[key] for r in results if isinstance(r, dict) and r.get(key) is not None]
            errs = [str(r) for r in results if isinstance(r, AnchorError)]
            return (rnd(pick(vals)) if vals else None), [rnd(v) for v in vals], (errs[0] if errs and not vals else None)

        value, values, our_err = best(ours)
        value_p50 = best(ours, "p50")[0]
        ok = [p for p in probes if isinstance(p, dict)]
        probe = round(statistics.median(p["one_way_ns_min"] for p in ok), 1) if ok else None
        probe_med = round(statistics.median(p["one_way_ns_median"] for p in ok), 1) if ok else None
        others, steal = others_cpu(self.cpu_before, _cpu_snapshot())
        for name, results, detail in anchors:
            anchor_value, anchor_values, anchor_err = best(results)
            line = {
                "bench": bench, "size": size, "value": value, "unit": unit, "anchor": name,
                "anchor_value": anchor_value, "ratio": ratio(value, anchor_value), "better": better,
                "probe_cacheline_ns": probe, "probe_cacheline_ns_median": probe_med,
                "probe_values": [round(p["one_way_ns_min"], 1) if isinstance(p, dict) else None for p in probes],
                "vcpus": None if probe is None else vcpu_state(probe),
                "runs": self.args.runs, "values": values, "anchor_values": anchor_values,
                "others_cpu": others, "steal_cpu": steal,
            }
            line["round_vcpus"] = list(self.round_vcpus)
            line["round_issue"] = list(self.round_issue)
            line["round_ratios"], line["ratio_by_vcpus"] = paired_ratios(ours, results, self.round_vcpus)
            line["ratio_by_state"] = paired_ratios(ours, results, combined_states(self.round_vcpus, self.round_issue))[1]
            anchor_p50 = best(results, "p50")[0]
            if anchor_p50 is not None:
                line["anchor_value_p50"] = anchor_p50
                if value_p50 is not None:
                    line["value_p50"] = value_p50
                    line["ratio_p50"] = ratio(value_p50, anchor_p50)
            if detail:
                line["anchor_detail"] = detail
            if extra:
                line.update(extra)
            if anchor_err:
                line["anchor_error"] = anchor_err
            if self.softib_note:
                line["note"] = self.softib_note
            elif our_err:
                line["error"] = our_err
            print(json.dumps(line), flush=True)
            self.lines += 1

    # -- the three figures

    def lat(self):
        iters = 100_000 if self.quick else 1_000_000
        # The same warm-up for both, long enough (~0.15-0.5 s) to leave the first ~0.1 s after
        # the processes start out of the timed run: on these VMs the kernel's DAMON thread
        # (kdamond, proactive reclaim) ran 35 ms, in 4-8 ms slices, in the first 0.1 s of a
        # bench_verbs run (perf sched timehist; 2.5 ms a second on an idle machine). With
        # bench_verbs' default warm-up (100k round trips) its stalls took 9-12 % of a
        # 1M-round-trip run, with 500k 2-3 % (2026-12-06; src/engine/README.md).
        warmup = 1_000 if self.quick else 500_000

        def ucx_lat():
            r = self.ucx("posix", "tag_lat", 8, iters, warmup)
            return {"value": r["lat_overall_us"], "p50": r["lat_p50_us"]}

        res, probes = self.rounds([
            ("ucx", ucx_lat),
            ("ours", lambda: self.ours(["lat", "--size", "8", "--iters", str(iters), "--warmup", str(warmup)],
                                       "verbs_rc_send_lat", "half_rtt_us")),
        ])
        # The cache-line ping-pong is itself an anchor here: each round's probe, in us.
        cacheline = [{"value": p["one_way_ns_min"] / 1000.0} if isinstance(p, dict) else p for p in probes]
        self.emit("verbs_rc_send_lat", 8, "us", "lower", res["ours"], [
            ("ucx_tag_lat_posix", res["ucx"], dict(UCX_CONFIGS["posix"], statistic="overall mean half round trip")),
            ("cacheline_pingpong", cacheline, {"statistic": "one-way, min of the probe's runs"}),
        ], probes, {"iters": iters, "warmup": warmup})

    def evlat(self):
        """The ping-pong with both sides asleep until their message arrives: each waits on a
        completion channel (perftest's -e), against ucx_perftest's sleep mode (-E sleep: the
        worker waits on its event fd), both over shared memory. A thread's wake-up costs
        microseconds to tens of microseconds on these VMs, far more than the rest of a
        message's path, so this measures how many a message takes and how long each is."""
        iters = 20_000 if self.quick else 100_000
        warmup = 500 if self.quick else 2_000

        def ucx_evlat():
            r = self.ucx("posix", "tag_lat", 8, iters, warmup, ["-E", "sleep"])
            return {"value": r["lat_overall_us"], "p50": r["lat_p50_us"]}

        res, probes = self.rounds([
            ("ucx", ucx_evlat),
            ("ours", lambda: self.ours(["lat", "--event", "--size", "8", "--iters", str(iters)],
                                       "verbs_rc_send_event_lat", "half_rtt_us")),
        ])
        self.emit("verbs_rc_send_event_lat", 8, "us", "lower", res["ours"], [
            ("ucx_tag_lat_posix_sleep", res["ucx"],
             dict(UCX_CONFIGS["posix"], wait_mode="sleep", statistic="overall mean half round trip")),
        ], probes, {"iters": iters})

    def onecpu(self):
        """The ping-pong with every thread of both sides on one CPU (taskset: a one-CPU CI
        runner, or two programs on a busy machine), against UCX's tag_lat pinned the same way.
        Two busy pollers then take turns on the CPU: one that spins on through its idle polls
        keeps the CPU for the scheduler's slice (~4 ms), and its peer waits that long for it.
        Informational: no target."""
        try:
            cpu = min(os.sched_getaffinity(0))
        except (AttributeError, ValueError):
            cpu = 0
        pin = ["taskset", "-c", str(cpu)]
        iters = 5_000 if self.quick else 20_000
        # UCX spins through its idle polls: ~8 ms a round trip here, so a few hundred.
        ucx_iters, ucx_warmup = (100, 10) if self.quick else (500, 50)

        def ucx_lat():
            r = self.ucx("posix", "tag_lat", 8, ucx_iters, ucx_warmup, prefix=pin)
            return {"value": r["lat_overall_us"], "p50": r["lat_p50_us"]}

        res, probes = self.rounds([
            ("ucx", ucx_lat),
            ("ours", lambda: self.ours(["lat", "--size", "8", "--iters", str(iters)], "verbs_rc_send_lat", "half_rtt_us",
                                       prefix=pin)),
        ])
        self.emit("verbs_rc_send_lat_one_cpu", 8, "us", "lower", res["ours"], [
            ("ucx_tag_lat_posix_one_cpu", res["ucx"],
             dict(UCX_CONFIGS["posix"], cpu=cpu, iters=ucx_iters, statistic="overall mean half round trip")),
        ], probes, {"iters": iters, "cpu": cpu})

    def bw_iters(self, size):
        """Operations per run: about `budget` bytes, but enough that a run of small
        messages lasts long enough to be more than its start-up (UCX moves 64 B messages at
        ~18 M/s: 100,000 of them take 6 ms)."""
        budget = (256 << 20) if self.quick else (1 << 30)
        lo, hi = (200, 500_000) if self.quick else (1_000, 2_000_000)
        return max(lo, min(hi, budget // size))

    def fi_iters(self, iters):
        """libfabric's shm RMA costs ~1 us per small operation: fewer, so a run stays short."""
        return min(iters, 100_000 if self.quick else 300_000)

    def bw(self, size):
        iters = self.bw_iters(size)
        warmup = max(10, min(10_000, iters // 10))

        def ucx_bw(config):
            def thunk():
                r = self.ucx(config, "tag_bw", size, iters, warmup)
                return {"value": r["bw_overall_MiBps"] * 1.048576}
            return thunk

        def ours(op):
            return lambda: self.ours(["bw", "--op", op, "--size", str(size), "--iters", str(iters)],
                                     f"verbs_rc_{op}_bw", "MBps")

        res, probes = self.rounds([
            ("ucx_posix", ucx_bw("posix")),
            ("ours_write", ours("write")),
            ("fi", lambda: self.fi_rma(size, self.fi_iters(iters))),
            ("ours_read", ours("read")),
            ("ucx_cma", ucx_bw("cma")),
            ("ucx_posix_heap", ucx_bw("posix_heap")),
            ("memcpy", lambda: self.memcpy(size)),
        ])
        for op in ("write", "read"):
            fi_results = [r[op] if isinstance(r, dict) else r for r in res["fi"]]
            self.emit(f"verbs_rc_{op}_bw", size, "MBps", "higher", res[f"ours_{op}"], [
                ("ucx_tag_bw_posix", res["ucx_posix"], dict(UCX_CONFIGS["posix"], window=32)),
                ("ucx_tag_bw_cma", res["ucx_cma"], dict(UCX_CONFIGS["cma"], window=32)),
                ("ucx_tag_bw_posix_heap", res["ucx_posix_heap"], dict(UCX_CONFIGS["posix_heap"], window=32)),
                (f"fi_shm_{op}_bw", fi_results, {"provider": "shm", "window": 64, "iters": self.fi_iters(iters)}),
                ("memcpy", res["memcpy"], {"threads": 1}),
            ], probes, {"iters": iters})

    def rate(self):
        iters = 500_000 if self.quick else 2_000_000

        def ucx_rate():
            r = self.ucx("posix", "tag_bw", 64, iters, 10_000)
            return {"value": r["rate_overall"] / 1e6}

        res, probes = self.rounds([
            ("ucx", ucx_rate),
            ("ours", lambda: self.ours(["rate", "--size", "64", "--iters", str(iters)], "verbs_rc_send_rate",
                                       "Mmsgs")),
        ])
        self.emit("verbs_rc_send_rate", 64, "Mmsgs", "higher", res["ours"], [
            ("ucx_tag_bw_posix", res["ucx"], dict(UCX_CONFIGS["posix"], window=32)),
        ], probes, {"iters": iters})


def parse_sizes(text):
    out = []
    for item in text.split(","):
        item = item.strip().upper()
        mult = 1
        if item.endswith("K"):
            mult, item = 1 << 10, item[:-1]
        elif item.endswith("M"):
            mult, item = 1 << 20, item[:-1]
        n = int(item) * mult
        if n <= 0:
            raise argparse.ArgumentTypeError("sizes must be positive")
        out.append(n)
    return out


def parse_only(text):
    parts = [p.strip() for p in text.split(",") if p.strip()]
    for p in parts:
        if p not in ("lat", "evlat", "bw", "rate", "onecpu"):
            raise argparse.ArgumentTypeError(f"--only takes lat, evlat, bw, rate, onecpu (got {p})")
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer sizes, fewer iterations, 2 rounds")
    ap.add_argument("--runs", type=int, help="rounds per figure, best of (default 3; 2 with --quick)")
    ap.add_argument("--sizes", type=parse_sizes, help="bandwidth sizes, e.g. 64,4K,1M (default 64 B..4 MiB by 4x)")
    ap.add_argument("--only", type=parse_only, default=["lat", "evlat", "bw", "rate", "onecpu"],
                    help="lat,evlat,bw,rate,onecpu (any of)")
    ap.add_argument("--build", default=os.path.join(TOP, "build", "release"), help="build directory")
    ap.add_argument("--bench-verbs", help="softib's benchmark binary (default BUILD/bench/bench_verbs)")
    ap.add_argument("--timeout", type=float, help="seconds per program run (default 60; 30 with --quick)")
    args = ap.parse_args()
    if args.runs is None:
        args.runs = 2 if args.quick else 3
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.timeout is None:
        args.timeout = 30.0 if args.quick else 60.0
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    start = time.monotonic()
    before = _cpu_snapshot()
    time.sleep(0.3)  # a sample of what else runs here, not a synchronisation
    others, _ = others_cpu(before, _cpu_snapshot())
    if others is not None and others > 0.3:
        print(f"datapath: other processes are using {others:.1f} of {os.cpu_count()} cores: the anchors and "
              "softib spin on both, so expect large noise and timeouts (see others_cpu)", file=sys.stderr)
    h = Harness(args)
    try:
        if "lat" in args.only:
            h.lat()
        if "evlat" in args.only:
            h.evlat()
        if "bw" in args.only:
            for size in sizes:
                h.bw(size)
        if "rate" in args.only:
            h.rate()
        if "onecpu" in args.only:
            h.onecpu()
    finally:
        stop_all()
    print(json.dumps({"summary": "datapath", "lines": h.lines, "runs": args.runs, "quick": args.quick,
                      "softib": "skipped" if h.softib_note else "measured",
                      "seconds": round(time.monotonic() - start, 1), "cpus": os.cpu_count()}), flush=True)


if __name__ == "__main__":
    main()
