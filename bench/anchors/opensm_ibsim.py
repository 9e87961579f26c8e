#!/usr/bin/env python3
"""Anchor: real OpenSM 3.3.23 bringing up a fabric simulated by real ibsim 0.10.

Usage:
  opensm_ibsim.py NETFILE [--routing-engine E] [--dump-dir DIR] [--timeout SEC]
                  [--keep-logs DIR] [--sim-host NODEID] [--log-flags 0xNN]

Prints one JSON line on stdout. Exit status 0 on success, 1 on failure (the JSON then has
"ok": false and a "reason"; the tails of the logs go to stderr), 2 on bad usage.

How it works (see README.md next to this file for the facts behind each step):
  * a private temp dir holds everything both programs write (ibsim output, opensm.conf,
    opensm.log, OSM_CACHE_DIR, the dump files);
  * ibsim and umad2sim talk over abstract unix sockets named "<IBSIM_SOCKNAME>:ctl",
    ":outN", ":inPID", ":ctlPID"; a unique IBSIM_SOCKNAME per run keeps parallel runs apart;
  * ibsim runs as `ibsim -s -n [-N -S -P -L sizes] NETFILE`; it is ready when its control
    socket "@<name>:ctl" is listed in /proc/net/unix;
  * opensm runs once (-o) with LD_PRELOAD=libumad2sim.so, attached (SIM_HOST) to the first
    CA of the net file, and exits by itself after the first successful sweep;
  * the time is taken from opensm's own microsecond timestamp on its "SUBNET UP" log line,
    measured from the wall clock just before opensm was spawned.
"""

import argparse
import ctypes
import json
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOOL = "opensm-3.3.23+ibsim"
UMAD2SIM_CANDIDATES = (
    "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so",  # Debian/Ubuntu libumad2sim0
    "/usr/lib64/umad2sim/libumad2sim.so",
    "/usr/lib/umad2sim/libumad2sim.so",
    "/usr/local/lib/umad2sim/libumad2sim.so",
)
# ibsim 0.10 compile-time defaults (ibsim/sim.h): exceeding them makes ibsim IBPANIC while
# parsing, so larger fabrics need -N/-S/-P/-L.
IBSIM_DEF_NODES = 2048
IBSIM_DEF_SWITCHES = 256
IBSIM_DEF_PORTS = 256 * 36 + 2048 * 2
IBSIM_DEF_LINEARCAP = 30 * 1024
# Default -D: ERROR|INFO, plus ROUTING when --dump-dir is given. INFO is required: "SUBNET UP"
# is logged at INFO (0x02) in 3.3.23 (its SYS variant, which would also go to stdout, is never
# taken: first_time_master_sweep is cleared just before the message).
# ROUTING (0x40) makes osm_dump_all() write opensm-lid-matrix.dump, opensm-lfts.dump,
# opensm.fdbs, opensm.mcfdbs; opensm-subnet.lst is written regardless.
LOG_FLAGS_PLAIN = 0x03
LOG_FLAGS_DUMPS = 0x43
# The ROUTING dumps are written *before* "SUBNET UP" is logged and cost real time on big
# fabrics (about 43 s of 85 s on an 11,664-HCA 3-level fat-tree), so they are only switched
# on when the dumps are wanted.
SUBNET_UP_RE = re.compile(
    r"^(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{6}) \[[0-9A-Fa-f]+\] 0x[0-9a-fA-F]{2} -> SUBNET UP")
LOG_TS_RE = re.compile(r"^(\w{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{6}) \[")
MONTHS = {m: i + 1 for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"))}
DUMP_FILES = ("opensm-lfts.dump", "opensm-subnet.lst", "opensm.fdbs", "opensm-lid-matrix.dump",
              "opensm.mcfdbs", "opensm-sl2vl.dump")
CACHE_FILES = ("guid2lid",)


class Failure(Exception):
    pass


class Interrupted(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# net file


def parse_net(path):
    """Counts what ibsim will allocate for the net file (ibsim/sim_net.c semantics)."""
    node_re = re.compile(r'^\s*(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"')
    counts = {"Switch": 0, "Ca": 0, "Rt": 0}
    ports = 0
    end_ports = 0  # CA and router ports: one LID each at LMC 0
    first_ca = None
    first_node = None
    with open(path, "r", errors="replace") as f:
        for line in f:
            m = node_re.match(line)
            if not m:
                continue
            kind = "Ca" if m.group(1) == "Hca" else m.group(1)
            nports = int(m.group(2))
            counts[kind] += 1
            # switches get an extra port 0, CAs and routers do not
            ports += nports + (1 if kind == "Switch" else 0)
            if kind != "Switch":
                end_ports += nports
            if first_node is None:
                first_node = (kind, m.group(3))
            if kind == "Ca" and first_ca is None:
                first_ca = m.group(3)
    nodes = counts["Switch"] + counts["Ca"] + counts["Rt"]
    return {
        "nodes": nodes,
        "switches": counts["Switch"],
        "hcas": counts["Ca"],
        "routers": counts["Rt"],
        "ports": ports,
        "lids_needed": end_ports + counts["Switch"],  # switches: one LID, on port 0
        "first_ca": first_ca,
        "first_node": first_node,
    }


def ibsim_size_args(net):
    args = []
    if net["nodes"] > IBSIM_DEF_NODES:
        args += ["-N", str(net["nodes"] + 16)]
    if net["switches"] > IBSIM_DEF_SWITCHES:
        args += ["-S", str(net["switches"] + 16)]
    if net["ports"] > IBSIM_DEF_PORTS:
        args += ["-P", str(net["ports"] + 256)]
    # -L is each simulated switch's LinearFDBCap (and ibsim allocates and touches that many
    # entries per switch), so it is only raised when the fabric needs more LIDs (LMC 0)
    if net["lids_needed"] + 64 > IBSIM_DEF_LINEARCAP:
        args += ["-L", str(min(0xC000, net["lids_needed"] + 1024))]
    return args


# ---------------------------------------------------------------------------------------------
# process helpers

_libc = None


def _child_setup(parent_pid):
    """Runs in the child before exec: die with the harness (PR_SET_PDEATHSIG)."""
    def setup():
        try:
            if _libc is not None:
                _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() != parent_pid:
                os._exit(127)
        except Exception:
            pass
    return setup


class Child:
    def __init__(self, name, argv, env, cwd, out_path, err_path):
        self.name = name
        self.out_path = out_path
        self.err_path = err_path
        self.rusage = None
        self.status = None
        self.hwm_kb = 0
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True, preexec_fn=_child_setup(os.getpid()), close_fds=True)
        self.pid = self.proc.pid

    def poll(self):
        """Reaps without blocking; returns True while the process is running."""
        if self.status is not None:
            return False
        self.sample_hwm()
        try:
            pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.status = -1
            self.proc.returncode = -1
            return False
        if pid == 0:
            return True
        self._reaped(status, ru)
        return False

    def _reaped(self, status, ru):
        self.status = status
        self.rusage = ru
        self.proc.returncode = os.waitstatus_to_exitcode(status)

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        delay = 0.001
        while self.poll():
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        return True

    def sample_hwm(self):
        try:
            with open(f"/proc/{self.pid}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"VmHWM:"):
                        self.hwm_kb = max(self.hwm_kb, int(line.split()[1]))
                        break
        except (OSError, ValueError, IndexError):
            pass

    def stop(self, grace=5.0):
        """SIGTERM, then SIGKILL after `grace` seconds; always reaps."""
        if self.status is not None:
            return
        self.sample_hwm()
        for sig, wait_s in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass
            if self.wait(wait_s):
                return

    def exit_desc(self):
        if self.status is None:
            return "running"
        if os.WIFSIGNALED(self.status):
            return f"killed by signal {os.WTERMSIG(self.status)}"
        return f"exit status {os.WEXITSTATUS(self.status)}"

    def peak_rss_kb(self, harness_maxrss_kb):
        """Peak RSS of the exec'd program.

        ru_maxrss of a child also counts the harness image it was forked from (the kernel keeps
        the old mm's high-water mark across exec), so it is trusted only when it exceeds the
        harness's own peak RSS; otherwise the polled VmHWM (which is per exec'd mm) is used.
        """
        ru_kb = self.rusage.ru_maxrss if self.rusage is not None else 0
        if ru_kb > harness_maxrss_kb and ru_kb >= self.hwm_kb:
            return ru_kb, "ru_maxrss"
        # the two differ by a few pages even when both are valid (lazy RSS accounting)
        return self.hwm_kb, "vmhwm_poll"


def abstract_socket_listed(name):
    needle = " @" + name
    try:
        with open("/proc/net/unix", "r", errors="replace") as f:
            for line in f:
                # the bound length includes the trailing NUL, which the kernel shows as "@"
                if line.rstrip("\n").rstrip("@").endswith(needle):
                    return True
    except OSError:
        pass
    return False


def tail(path, n=40):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            data = f.read().decode(errors="replace")
        return "\n".join(data.splitlines()[-n:])
    except OSError as e:
        return f"<{e}>"


def log_ts_to_epoch(m, ref_epoch):
    """opensm log timestamps are local time without a year; pick the year nearest ref_epoch."""
    mon = MONTHS.get(m.group(1))
    if mon is None:
        return None
    day, hh, mm, ss, us = (int(m.group(i)) for i in range(2, 7))
    year = time.localtime(ref_epoch).tm_year
    best = None
    for y in (year - 1, year, year + 1):
        try:
            t = time.mktime((y, mon, day, hh, mm, ss, 0, 0, -1)) + us / 1e6
        except (OverflowError, ValueError):
            continue
        if best is None or abs(t - ref_epoch) < abs(best - ref_epoch):
            best = t
    return best


class LogTail:
    """Incremental reader of opensm's log file; finds the SUBNET UP line."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.partial = b""
        self.subnet_up_line = None
        self.subnet_up_seen_mono = None
        self.first_line = None

    def scan(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        if not data:
            return
        self.pos += len(data)
        data = self.partial + data
        lines = data.split(b"\n")
        self.partial = lines.pop()
        for raw in lines:
            line = raw.decode(errors="replace")
            if self.first_line is None and LOG_TS_RE.match(line):
                self.first_line = line
            if self.subnet_up_line is None and SUBNET_UP_RE.match(line):
                self.subnet_up_line = line
                self.subnet_up_seen_mono = time.monotonic()


# ---------------------------------------------------------------------------------------------


def find_umad2sim():
    env = os.environ.get("SOFTIB_UMAD2SIM")
    for p in ((env,) if env else ()) + UMAD2SIM_CANDIDATES:
        if p and os.path.isfile(p):
            return p
    try:
        out = subprocess.run(["dpkg", "-L", "libumad2sim0"], capture_output=True, text=True,
                             timeout=10).stdout
        for line in out.splitlines():
            if line.endswith("/libumad2sim.so") and os.path.isfile(line):
                return line
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def write_opensm_conf(path, tmp, log_path, log_flags, routing_engine, extra=(), partitions=None):
    # Every file opensm would otherwise look for under /etc/opensm or write under /var is
    # pointed into the temp dir (missing input files just mean "use the defaults").
    lines = [
        f"log_file {log_path}",
        f"log_flags 0x{log_flags:02x}",
        "force_log_flush TRUE",       # so SUBNET UP can be seen while opensm still runs
        "accum_log_file FALSE",
        f"dump_files_dir {tmp}",
        f"partition_config_file {partitions or tmp + '/absent-partitions.conf'}",
        f"qos_policy_file {tmp}/absent-qos-policy.conf",
        f"prefix_routes_file {tmp}/absent-prefix-routes.conf",
        f"per_module_logging_file {tmp}/absent-per-module-logging.conf",
        f"torus_config {tmp}/absent-torus-2QoS.conf",
        f"node_name_map_name {tmp}/node-name-map",  # empty: a missing one draws a warning
        "sa_db_dump FALSE",
    ]
    if routing_engine:
        lines.append(f"routing_engine {routing_engine}")
    for option in extra:  # --option NAME=VALUE, e.g. nue_max_num_vls=8
        name, _, value = option.partition("=")
        lines.append(f"{name} {value}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run(args, result, tmp, children):
    net = parse_net(args.netfile)
    result["topology"] = os.path.basename(args.netfile)
    result["nodes"] = net["nodes"]
    result["switches"] = net["switches"]
    result["hcas"] = net["hcas"]
    if net["nodes"] == 0:
        raise Failure("net file has no Switch/Ca lines")
    # ibsim attaches a client without SIM_HOST to the first port it parsed, which is a
    # switch's port 0 when the file starts with a Switch; OpenSM wants a CA port.
    sim_host = args.sim_host if args.sim_host is not None else net["first_ca"]
    if sim_host is None:
        raise Failure("net file has no CA for OpenSM to run on (use --sim-host)")
    result["sim_host"] = sim_host or "(ibsim default port)"

    umad2sim = find_umad2sim()
    if not umad2sim:
        raise Failure("libumad2sim.so not found (apt-get install ibsim-utils libumad2sim0)")
    for prog in ("ibsim", "opensm"):
        if not shutil.which(prog):
            raise Failure(f"{prog} not in PATH (apt-get install ibsim-utils opensm)")

    deadline = time.monotonic() + args.timeout

    # unique abstract-socket base name; ibsim appends ":ctl", ":outN", clients ":inPID" etc.
    for _ in range(100):
        sockname = f"softib-{os.getpid()}-{secrets.token_hex(4)}"
        if not abstract_socket_listed(sockname + ":ctl"):
            break
    result["ibsim_sockname"] = sockname

    env = dict(os.environ)
    for k in ("LD_PRELOAD", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT", "SIM_HOST",
              "SIM_SET_ISSM", "OSM_TMP_DIR", "OSM_CACHE_DIR"):
        env.pop(k, None)
    env["IBSIM_SOCKNAME"] = sockname

    # ---- ibsim
    ibsim_argv = ["ibsim", "-s", "-n"] + ibsim_size_args(net) + [os.path.abspath(args.netfile)]
    result["ibsim_argv"] = " ".join(ibsim_argv)
    t_ibsim = time.monotonic()
    ibsim = Child("ibsim", ibsim_argv, env, tmp, os.path.join(tmp, "ibsim.out"),
                  os.path.join(tmp, "ibsim.err"))
    children.append(ibsim)
    delay = 0.001
    while not abstract_socket_listed(sockname + ":ctl"):
        if not ibsim.poll():
            raise Failure(f"ibsim exited before it was ready ({ibsim.exit_desc()})")
        if time.monotonic() >= deadline:
            raise Failure("timeout waiting for ibsim's control socket")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    result["ibsim_seconds_to_ready"] = round(time.monotonic() - t_ibsim, 4)

    # ---- opensm
    log_path = os.path.join(tmp, "opensm.log")
    conf_path = os.path.join(tmp, "opensm.conf")
    cache_dir = os.path.join(tmp, "cache")
    os.mkdir(cache_dir)
    write_opensm_conf(conf_path, tmp, log_path, args.log_flags, args.routing_engine, args.option,
                      os.path.abspath(args.partitions) if args.partitions else None)
    open(os.path.join(tmp, "node-name-map"), "w").close()
    osm_env = dict(env)
    osm_env.update({
        "LD_PRELOAD": umad2sim,
        "OSM_CACHE_DIR": cache_dir,   # guid2lid etc.; there is no opensm.conf key for it
        "OSM_TMP_DIR": tmp,           # default dump_files_dir (also set in the conf)
    })
    if sim_host:
        osm_env["SIM_HOST"] = sim_host
    osm_argv = ["opensm", "-F", conf_path, "-o", "-f", log_path, "-D", f"0x{args.log_flags:02x}",
                "--dump_files_dir", tmp]
    if args.routing_engine:
        osm_argv += ["-R", args.routing_engine]
    if args.reassign_lids:
        osm_argv += ["-r"]
    result["opensm_argv"] = " ".join(osm_argv)

    logtail = LogTail(log_path)
    routing_dumps = bool(args.log_flags & 0x40)
    harness_maxrss_kb = resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss
    t0_wall = time.time()
    t0_mono = time.monotonic()
    opensm = Child("opensm", osm_argv, osm_env, tmp, os.path.join(tmp, "opensm.stdout"),
                   os.path.join(tmp, "opensm.stderr"))
    children.append(opensm)

    delay = 0.002
    killed_after_up = False
    first_dump = os.path.join(tmp, "opensm-lid-matrix.dump")  # osm_dump_all() writes it first
    dump_start_mono = None
    while opensm.poll():
        logtail.scan()
        if dump_start_mono is None and routing_dumps and os.path.exists(first_dump):
            dump_start_mono = time.monotonic()
        if not ibsim.poll():
            raise Failure(f"ibsim died while opensm was running ({ibsim.exit_desc()})")
        now = time.monotonic()
        if logtail.subnet_up_line and now - logtail.subnet_up_seen_mono > args.exit_grace:
            # once-mode should have exited by now; take the figure and stop it
            opensm.stop()
            killed_after_up = True
            break
        if now >= deadline:
            logtail.scan()
            raise Failure(f"timeout after {args.timeout:g}s"
                          + (" (SUBNET UP was reached)" if logtail.subnet_up_line
                             else " waiting for SUBNET UP"))
        time.sleep(delay)
        delay = min(delay * 1.5, 0.02)
    t_exit_mono = time.monotonic()
    logtail.scan()
    ibsim.sample_hwm()

    if not logtail.subnet_up_line:
        raise Failure(f"opensm ended without SUBNET UP ({opensm.exit_desc()})")
    if not killed_after_up and opensm.exit_desc() != "exit status 0":
        raise Failure(f"opensm reached SUBNET UP but ended with {opensm.exit_desc()}")

    m = SUBNET_UP_RE.match(logtail.subnet_up_line)
    t_up = log_ts_to_epoch(m, t0_wall)
    if t_up is None or t_up < t0_wall - 1.0:
        # unparsable timestamp: fall back to when the harness saw the line
        seconds = logtail.subnet_up_seen_mono - t0_mono
        result["timing_source"] = "harness_observed"
    else:
        seconds = t_up - t0_wall
        result["timing_source"] = "opensm_log_timestamp"
    result["seconds_to_subnet_up"] = round(seconds, 4)
    result["timing_includes_routing_dumps"] = routing_dumps
    if routing_dumps and dump_start_mono is not None and t_up is not None:
        # osm_dump_all() runs just before "SUBNET UP" is logged; its start is seen by polling
        # for the first dump file, so this is good to the polling interval (<= 20 ms)
        dump_s = max(0.0, t_up - (t0_wall + (dump_start_mono - t0_mono)))
        result["routing_dump_seconds_est"] = round(dump_s, 3)
        result["seconds_to_subnet_up_excl_dumps_est"] = round(seconds - dump_s, 4)
    elif routing_dumps:
        result["routing_dump_seconds_est"] = None  # shorter than one polling interval
    first = LOG_TS_RE.match(logtail.first_line or "")
    t_first = log_ts_to_epoch(first, t0_wall) if first else None
    if t_first is not None and t_up is not None:
        result["seconds_first_log_to_subnet_up"] = round(t_up - t_first, 4)
    result["seconds_to_opensm_exit"] = round(t_exit_mono - t0_mono, 4)
    phases = log_phases(log_path, t0_wall, t_up)
    if phases:
        result["opensm_phases_s"] = phases
    if opensm.rusage is not None:
        result["opensm_cpu_seconds"] = round(opensm.rusage.ru_utime + opensm.rusage.ru_stime, 3)
    result["opensm_exit"] = opensm.exit_desc() + (" (stopped by harness after SUBNET UP)"
                                                 if killed_after_up else "")

    # error lines (0x01) in the log, the first-sweep-failed marker, the engine really used
    n_err = 0
    init_errors = False
    used = None
    used_re = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")
    with open(log_path, "r", errors="replace") as f:
        for line in f:
            if " 0x01 -> " in line:
                n_err += 1
            if "Errors during initialization" in line:
                init_errors = True
            m = used_re.search(line)
            if m and used is None:
                used = m.group(1)
    result["opensm_log_error_lines"] = n_err
    result["opensm_init_error_sweeps"] = init_errors
    result["routing_engine_used"] = used
    if args.routing_engine:
        wanted = [e for e in args.routing_engine.split(",") if e and e != "no_fallback"]
        if used not in wanted:
            # opensm silently falls back to minhop when an engine is unknown or fails
            raise Failure(f"opensm used routing engine {used!r}, not the requested "
                          f"{args.routing_engine!r} (unknown engine or engine failure; see log)")

    if args.query_pkeys:
        # ibsim still runs the fabric OpenSM left: ask every end port for its P_Key table,
        # as an administrator would (smpquery pkeys LID), through umad2sim.
        query_env = dict(env)
        query_env["LD_PRELOAD"] = umad2sim
        if sim_host:
            query_env["SIM_HOST"] = sim_host
        tables = query_pkey_tables(os.path.join(cache_dir, "guid2lid"), query_env, tmp)
        with open(args.query_pkeys, "w") as f:
            for guid in sorted(tables):
                f.write(f"0x{guid:016x} " + " ".join(f"0x{k:04x}" for k in tables[guid]) + "\n")
        result["pkey_tables"] = len(tables)

    # ---- stop ibsim, collect its rusage
    ibsim.stop()
    result["harness_maxrss_mb_at_spawn"] = round(harness_maxrss_kb / 1024, 1)
    result["opensm_ru_maxrss_mb"] = round(opensm.rusage.ru_maxrss / 1024, 1) \
        if opensm.rusage else None
    kb, src = opensm.peak_rss_kb(harness_maxrss_kb)
    result["opensm_peak_rss_mb"] = round(kb / 1024, 1)
    result["opensm_rss_source"] = src
    kb, src = ibsim.peak_rss_kb(harness_maxrss_kb)
    result["ibsim_peak_rss_mb"] = round(kb / 1024, 1)
    result["ibsim_rss_source"] = src
    if ibsim.rusage is not None:
        result["ibsim_cpu_seconds"] = round(ibsim.rusage.ru_utime + ibsim.rusage.ru_stime, 3)

    # ---- dumps
    produced = [f for f in DUMP_FILES if os.path.isfile(os.path.join(tmp, f))]
    produced += [f for f in CACHE_FILES if os.path.isfile(os.path.join(cache_dir, f))]
    result["dump_files"] = produced
    if "opensm-subnet.lst" not in produced:
        raise Failure("opensm-subnet.lst was not written")
    if (args.log_flags & 0x40) and "opensm-lfts.dump" not in produced:
        raise Failure("opensm-lfts.dump was not written although ROUTING logging was on")
    if args.dump_dir:
        os.makedirs(args.dump_dir, exist_ok=True)
        for f in produced:
            src_dir = cache_dir if f in CACHE_FILES else tmp
            shutil.copy2(os.path.join(src_dir, f), os.path.join(args.dump_dir, f))
        result["dump_dir"] = os.path.abspath(args.dump_dir)
    lids = lid_summary(os.path.join(tmp, "opensm-lfts.dump"), os.path.join(cache_dir, "guid2lid"))
    if lids:
        result["lids"] = lids


def query_pkey_tables(guid2lid_path, env, cwd):
    """port GUID -> its P_Key table's valid entries in table order, via smpquery."""
    tables = {}
    with open(guid2lid_path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 2:
                continue
            guid, lid = int(parts[0], 16), int(parts[1], 16)
            try:
                r = subprocess.run(["smpquery", "pkeys", str(lid)], env=env, cwd=cwd, capture_output=True,
                                   text=True, timeout=30, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise Failure(f"smpquery pkeys {lid} did not answer in 30 s")
            if r.returncode != 0:
                raise Failure(f"smpquery pkeys {lid} failed: {r.stderr.strip()[-200:]}")
            keys = []
            for row in r.stdout.splitlines():
                if ":" not in row or "capacity" in row:
                    continue
                keys += [int(k, 16) for k in row.split(":", 1)[1].split() if int(k, 16) & 0x7FFF]
            tables[guid] = keys
    return tables


def log_phases(log_path, ref_epoch, t_up):
    """Splits the bring-up by opensm's own log lines (first sweep only):
    discovery = IS_SM set on the port -> "Entering MASTER state" (light+heavy sweep, LIDs);
    routing   = MASTER -> "<engine> tables configured on all switches" (route computation);
    configure = that -> "SUBNET UP" (LFT/MFT upload, port states, dump files if 0x40)."""
    marks = {}
    keys = (("bound", "Setting IS_SM on port"), ("master", "Entering MASTER state"),
            ("routed", "tables configured on all switches"), ("up", "-> SUBNET UP"))
    try:
        with open(log_path, "r", errors="replace") as f:
            for line in f:
                for k, needle in keys:
                    if k not in marks and needle in line:
                        m = LOG_TS_RE.match(line)
                        if m:
                            marks[k] = log_ts_to_epoch(m, ref_epoch)
    except OSError:
        return None
    out = {}
    if "bound" in marks and "master" in marks:
        out["discovery"] = round(marks["master"] - marks["bound"], 4)
    if "master" in marks and "routed" in marks:
        out["routing"] = round(marks["routed"] - marks["master"], 4)
    if "routed" in marks and "up" in marks:
        out["configure"] = round(marks["up"] - marks["routed"], 4)
    return out or None


def lid_summary(lfts_path, guid2lid_path):
    """LIDs OpenSM assigned: from guid2lid (port GUID -> base LID) and the LFT dump headers."""
    out = {}
    lids = []
    try:
        with open(guid2lid_path) as f:
            for line in f:
                p = line.split()
                if len(p) >= 2:
                    lids.append(int(p[1], 16))
    except (OSError, ValueError):
        pass
    if lids:
        out["assigned_min"] = min(lids)
        out["assigned_max"] = max(lids)
        out["assigned_count"] = len(lids)
    sw_lids = []
    try:
        # osm_dump.c: "Unicast lids [0-%u] of switch Lid %u guid 0x%016" PRIx64 " ('%s'):"
        hdr = re.compile(r"^Unicast lids \[(\d+)-(\d+)\] of switch Lid (\d+)")
        with open(lfts_path) as f:
            for line in f:
                m = hdr.match(line)
                if m:
                    sw_lids.append(int(m.group(3)))
                    out["lft_top"] = max(out.get("lft_top", 0), int(m.group(2)))
    except OSError:
        pass
    if sw_lids:
        out["switch_lids"] = sorted(sw_lids) if len(sw_lids) <= 8 else \
            {"min": min(sw_lids), "max": max(sw_lids), "count": len(sw_lids)}
    return out


def main():
    global _libc
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("netfile")
    ap.add_argument("--partitions", default=None, metavar="FILE",
                    help="partitions.conf for OpenSM (partition_config_file)")
    ap.add_argument("--query-pkeys", default=None, metavar="OUT",
                    help="after bring-up, write every end port's P_Key table (smpquery pkeys) to OUT")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="an extra opensm.conf line (repeatable), e.g. nue_max_num_vls=8")
    ap.add_argument("--routing-engine", "-R", default=None,
                    help="opensm -R value (updn, ftree, minhop, dfsssp, ...); default: minhop")
    ap.add_argument("--dump-dir", default=None,
                    help="turn on OpenSM's routing dumps (-D 0x43) and copy opensm-lfts.dump, "
                         "opensm-subnet.lst, opensm.fdbs, opensm-lid-matrix.dump, guid2lid ... "
                         "here")
    ap.add_argument("--timeout", type=float, default=180.0,
                    help="overall limit in seconds (ibsim start to opensm exit), default 180")
    ap.add_argument("--keep-logs", default=None, metavar="DIR",
                    help="copy the whole temp dir (logs, conf, dumps) into DIR")
    ap.add_argument("--sim-host", default=None, metavar="NODEID",
                    help="ibsim node OpenSM attaches to (SIM_HOST); default: the first Ca in "
                         "the file; \"\" leaves SIM_HOST unset (ibsim's default port)")
    ap.add_argument("--log-flags", type=lambda s: int(s, 0), default=None,
                    help="opensm -D flags (default 0x03, or 0x43 with --dump-dir; "
                         "0x02 INFO is always added)")
    ap.add_argument("--reassign-lids", action="store_true",
                    help="opensm -r: ignore the LIDs ibsim took from the net file's "
                         "'lid N' comments (ibnetdiscover output) and assign fresh ones")
    ap.add_argument("--exit-grace", type=float, default=30.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.log_flags is None:
        args.log_flags = LOG_FLAGS_DUMPS if args.dump_dir else LOG_FLAGS_PLAIN
    args.log_flags |= 0x02
    if args.routing_engine == "":
        args.routing_engine = None

    try:
        _libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        _libc = None

    result = {"tool": TOOL, "topology": os.path.basename(args.netfile),
              "routing_engine": args.routing_engine or "minhop(default)",
              "log_flags": f"0x{args.log_flags:02x}"}
    children = []
    tmp = None

    def on_signal(signum, _frame):
        raise Interrupted(f"interrupted by signal {signal.Signals(signum).name}")

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    ok = False
    reason = None
    try:
        try:
            tmp = tempfile.mkdtemp(prefix="softib-opensm-ibsim-")
            run(args, result, tmp, children)
            ok = True
        except (Failure, Interrupted) as e:
            reason = str(e)
        except Exception as e:  # keep the one-JSON-line contract even on harness bugs
            reason = f"harness error: {type(e).__name__}: {e}"
    finally:
        for s in old:  # no second interruption in the middle of the cleanup
            signal.signal(s, signal.SIG_IGN)
        # SIGTERM/SIGKILL both children on every path (opensm first: it is ibsim's client)
        for c in reversed(children):
            try:
                c.stop()
            except Exception:
                pass
        if tmp and args.keep_logs:
            try:
                shutil.copytree(tmp, args.keep_logs, dirs_exist_ok=True)
                result["logs_kept_in"] = os.path.abspath(args.keep_logs)
            except OSError as e:
                sys.stderr.write(f"could not keep logs: {e}\n")
        if not ok and tmp:
            for name in ("ibsim.out", "ibsim.err", "opensm.stdout", "opensm.stderr",
                         "opensm.log"):
                p = os.path.join(tmp, name)
                if os.path.exists(p):
                    sys.stderr.write(f"----- tail of {name}\n{tail(p)}\n")
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        for s, h in old.items():
            signal.signal(s, h)
    result["ok"] = ok
    if not ok:
        result["reason"] = reason
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
