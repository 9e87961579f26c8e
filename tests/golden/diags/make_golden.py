#!/usr/bin/env python3
"""Golden outputs of the real infiniband-diags tools on OpenSM 3.3.23 + ibsim 0.10.

Usage:
  make_golden.py [--fabric NAME ...] [--out DIR] [--cmd-timeout SEC] [--softib PATH]

For each fabric: start ibsim on its net file (private IBSIM_SOCKNAME), bring the subnet up
with real OpenSM attached (SIM_HOST) to the first CA, and -- with ibsim still running --
run each diagnostic tool through LD_PRELOAD=libumad2sim.so SIM_HOST=<node>. Every tool's
stdout goes to <out>/<fabric>/<name>.txt, a non-empty stderr to <name>.stderr.txt, and the
exact argv, environment, exit status and notes to <out>/<fabric>/commands.json. The net
file is copied in as fabric.net. See README.md next to this file.

The results of a fabric replace the old ones only when the whole fabric ran; the exit
status is 0 when every fabric ran, 1 otherwise, 2 on bad usage.

Python 3 standard library only. The process handling (abstract-socket readiness, isolated
opensm.conf, PR_SET_PDEATHSIG, SIGTERM->SIGKILL on every path) comes from
bench/anchors/opensm_ibsim.py, which is imported.
"""

import argparse
import ctypes
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ANCHOR = os.path.join(REPO, "bench", "anchors", "opensm_ibsim.py")


def _load_anchor():
    spec = importlib.util.spec_from_file_location("opensm_ibsim_anchor", ANCHOR)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


A = _load_anchor()

# name, how the net file is obtained, the CA the SM and the tools run on ("a", default: the
# first Ca), the CA at the far end ("b": ibping server, PathRecord, ibtracert target)
FABRICS = {
    "switch2": {"gen": "switch:hosts=2", "a": "host-a", "b": "host-b"},
    "ft2-16": {"net": os.path.join(REPO, "topologies", "ft2-16.net"), "a": "H-00001",
               "b": "H-00016"},
}

# OpenSM stays up as master SM and SA while the tools run (saquery and sminfo need it);
# "-s 0" turns the periodic sweep off, so no sweep runs between the tools.
OPENSM_LOG_FLAGS = 0x03
PACKAGES = ("infiniband-diags", "ibsim-utils", "opensm", "libumad2sim0", "libibumad3",
            "libibmad5")
MAX_STDOUT = 8 << 20   # a tool printing more than this is cut (recorded); none does here
# umad2sim forwards at most 256 bytes per MAD and has no RMPP, so an SA GetTable response
# reaches saquery as its first MAD only: at most 200 // (AttributeOffset * 8) records.
SA_RECORD_BYTES = {  # record size rounded up to 8 (OpenSM's AttributeOffset * 8)
    "NodeRecord": 112, "PortInfoRecord": 72, "PathRecord": 64, "LinkRecord": 8,
    "SMInfoRecord": 32, "SwitchInfoRecord": 32, "LFTRecord": 72, "MFTRecord": 72,
    "MCMemberRecord": 56, "ServiceRecord": 176, "PKeyTableRecord": 72,
    "GUIDInfoRecord": 72, "SL2VLTableRecord": 16, "VLArbTableRecord": 72,
    "InformInfoRecord": 80,
}


class Failure(Exception):
    pass


class Interrupted(Exception):
    pass


_libc = None


def _preexec(parent_pid, uts_hostname=None):
    """In the child: die with the harness; optionally a private UTS namespace whose host
    name is the simulated node's (ibping's server answers with gethostname.getdomainname)."""
    def setup():
        try:
            if _libc is not None:
                _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
            if os.getppid() != parent_pid:
                os._exit(127)
        except Exception:
            pass
        if uts_hostname is not None and _libc is not None:
            if _libc.unshare(0x04000000) == 0:  # CLONE_NEWUTS
                h = uts_hostname.encode()
                _libc.sethostname(h, len(h))
                d = b"(none)"  # the kernel's "no NIS domain"
                _libc.setdomainname(d, len(d))
    return setup


# ---------------------------------------------------------------------------------------------
# fabric facts


NODE_RE = re.compile(r'^\s*(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"([^"]*)")?')


def net_nodes(path):
    """nodeid -> (kind, nports, NodeDescription) in file order (ibsim takes the description
    from the quoted comment after the node id)."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = NODE_RE.match(line)
            if m:
                kind = "Ca" if m.group(1) == "Hca" else m.group(1)
                out[m.group(3)] = (kind, int(m.group(2)), m.group(4) or m.group(3))
    return out


LST_END_RE = re.compile(
    r"\{ (\S+) Ports:[0-9A-Fa-f]+ SystemGUID:([0-9A-Fa-f]+) NodeGUID:([0-9A-Fa-f]+) "
    r"PortGUID:([0-9A-Fa-f]+) VenID:[0-9A-Fa-f]+ DevID:[0-9A-Fa-f]+ Rev:[0-9A-Fa-f]+ "
    r"\{(.*?)\} LID:([0-9A-Fa-f]+) PN:([0-9A-Fa-f]+) \}")


def subnet_lst(path):
    """opensm-subnet.lst -> ({desc: {lid, port_guid, node_guid, type}}, [links]); read from
    OpenSM's own dump, so finding the LIDs sends no MAD (the PMA counters stay untouched)."""
    nodes, links = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            ends = LST_END_RE.findall(line)
            if len(ends) != 2:
                continue
            pair = []
            for typ, _sys, node_guid, port_guid, desc, lid, pn in ends:
                nodes.setdefault(desc, {"type": typ.split("-")[0], "lid": int(lid, 16),
                                        "node_guid": int(node_guid, 16),
                                        "port_guid": int(port_guid, 16)})
                pair.append((desc, int(pn, 16)))
            links.append(tuple(pair))
    return nodes, links


# ---------------------------------------------------------------------------------------------
# running things


class Tool:
    """One tool invocation, waited for with a bounded time; its whole process group (the
    ibhosts/ibswitches/ibnodes shell scripts fork ibnetdiscover) is killed on a timeout."""

    @staticmethod
    def run(argv, env, cwd, timeout):
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, preexec_fn=_preexec(os.getpid()),
                                close_fds=True)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        except BaseException:
            _killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        _killpg(proc.pid, signal.SIGKILL)  # stragglers of a script, if any
        return {"rc": proc.returncode, "out": out, "err": err, "timed_out": timed_out,
                "seconds": time.monotonic() - t0}


def _killpg(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Background:
    """A long-running tool (ibping -S): output to files, stopped with SIGTERM->SIGKILL."""

    def __init__(self, argv, env, cwd, out_path, err_path, uts_hostname=None):
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True, preexec_fn=_preexec(os.getpid(), uts_hostname),
                close_fds=True)
        self.pid = self.proc.pid

    def running(self):
        return self.proc.poll() is None

    def stop(self, grace=3.0):
        if self.proc.poll() is not None:
            return self.proc.returncode
        for sig, wait_s in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            _killpg(self.pid, sig)
            try:
                self.proc.wait(wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        return self.proc.returncode


def dpkg_versions():
    out = {}
    for p in PACKAGES:
        try:
            r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", p], capture_output=True,
                               text=True, timeout=20)
            out[p] = r.stdout.strip() if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            out[p] = None
    return out


def ensure_softib(path):
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    build = os.path.join(REPO, "build", "release")
    if not os.path.isdir(build):
        subprocess.run(["cmake", "--preset", "release"], cwd=REPO, check=True, timeout=1800)
    subprocess.run(["cmake", "--build", build, "--target", "softib"], cwd=REPO, check=True,
                   timeout=3600)
    exe = os.path.join(build, "bin", "softib")
    if not os.path.isfile(exe):
        raise Failure(f"{exe} was not built")
    return exe


# ---------------------------------------------------------------------------------------------
# one fabric


class FabricRun:
    def __init__(self, name, spec, args, umad2sim, stage, tmp, children):
        self.name = name
        self.spec = spec
        self.args = args
        self.umad2sim = umad2sim
        self.stage = stage      # where the files of this fabric are written
        self.tmp = tmp          # ibsim/opensm/tool working dir (umad2sim's ./sys-<pid>)
        self.children = children
        self.records = []
        self.names = set()
        self.base_env = None

    # -- environment
    def tool_env(self, host, extra=None):
        env = dict(self.base_env)
        env["LD_PRELOAD"] = self.umad2sim
        env["SIM_HOST"] = host
        if extra:
            env.update(extra)
        return env

    def save(self, name, argv, host, res, extra_env=None, note=None, expect=None, sa=None):
        if name in self.names:
            raise Failure(f"duplicate output name {name}")
        self.names.add(name)
        out = res["out"]
        cut = None
        if len(out) > MAX_STDOUT:
            cut = len(out)
            out = out[:MAX_STDOUT]
            out = out[:out.rfind(b"\n") + 1]
        with open(os.path.join(self.stage, name + ".txt"), "wb") as f:
            f.write(out)
        rec = {"name": name, "argv": argv, "env": {"SIM_HOST": host}}
        if extra_env:
            rec["env"].update(extra_env)
        rec["exit_status"] = res["rc"]
        if res.get("timed_out"):
            rec["timed_out_after_s"] = self.args.cmd_timeout
        rec["stdout"] = name + ".txt"
        if cut is not None:
            rec["stdout_truncated_from_bytes"] = cut
        if res["err"]:
            with open(os.path.join(self.stage, name + ".stderr.txt"), "wb") as f:
                f.write(res["err"])
            rec["stderr"] = name + ".stderr.txt"
        if expect is not None:
            rec["expect"] = expect
        if sa is not None:
            rec.update(sa)
        if note:
            rec["note"] = note
        self.records.append(rec)
        return out.decode(errors="replace")

    def tool(self, name, argv, host=None, note=None, expect="ok", extra_env=None,
             complete=False):
        """complete: an SA query whose whole answer is known to fit one MAD."""
        host = host or self.host_a
        res = Tool.run(argv, self.tool_env(host, extra_env), self.tmp, self.args.cmd_timeout)
        sa = None
        if argv[0] == "saquery":
            sa = sa_info(res["out"].decode(errors="replace"), complete)
        text = self.save(name, argv, host, res, extra_env, note, expect, sa)
        ok = res["rc"] == 0 and not res["timed_out"]
        if expect == "ok" and not ok:
            sys.stderr.write(f"[{self.name}] warning: {' '.join(argv)} exited {res['rc']}"
                             f"{' (timeout)' if res['timed_out'] else ''}: "
                             f"{res['err'].decode(errors='replace').strip()[-300:]}\n")
            self.unexpected.append(name)
        if expect == "fail" and ok:
            sys.stderr.write(f"[{self.name}] warning: {' '.join(argv)} was expected to fail\n")
            self.unexpected.append(name)
        return text

    # -- the run
    def run(self):
        self.unexpected = []
        spec = self.spec
        net_path = os.path.join(self.stage, "fabric.net")
        if "gen" in spec:
            argv = [self.args.softib, "topo", "gen", spec["gen"], "-o", net_path]
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise Failure(f"{' '.join(argv)} failed: {r.stderr.strip()[-300:]}")
            source = {"generated_by": ["softib", "topo", "gen", spec["gen"]]}
        else:
            shutil.copyfile(spec["net"], net_path)
            source = {"copied_from": os.path.relpath(spec["net"], REPO)}
        nodes = net_nodes(net_path)
        self.host_a = spec.get("a") or next(n for n, v in nodes.items() if v[0] == "Ca")
        self.host_b = spec["b"]
        for h in (self.host_a, self.host_b):
            if h not in nodes or nodes[h][0] != "Ca":
                raise Failure(f"{h} is not a Ca in {net_path}")
        net = A.parse_net(net_path)

        # ---- ibsim
        for _ in range(100):
            sockname = f"softib-golden-{os.getpid()}-{secrets.token_hex(4)}"
            if not A.abstract_socket_listed(sockname + ":ctl"):
                break
        env = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "IBSIM_SERVER_NAME", "IBSIM_SERVER_PORT", "SIM_HOST",
                            "SIM_SET_ISSM", "OSM_TMP_DIR", "OSM_CACHE_DIR", "IBPATH")}
        env["IBSIM_SOCKNAME"] = sockname
        env["LC_ALL"] = "C"
        env["LANG"] = "C"
        self.base_env = env
        deadline = time.monotonic() + self.args.setup_timeout
        ibsim_argv = ["ibsim", "-s", "-n"] + A.ibsim_size_args(net) + [net_path]
        ibsim = A.Child("ibsim", ibsim_argv, env, self.tmp, os.path.join(self.tmp, "ibsim.out"),
                        os.path.join(self.tmp, "ibsim.err"))
        self.children.append(ibsim)
        self.ibsim = ibsim
        delay = 0.001
        while not A.abstract_socket_listed(sockname + ":ctl"):
            if not ibsim.poll():
                raise Failure(f"ibsim exited before it was ready ({ibsim.exit_desc()})")
            if time.monotonic() >= deadline:
                raise Failure("timeout waiting for ibsim's control socket")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

        # ---- OpenSM: master SM and SA for the whole of phase 1
        log_path = os.path.join(self.tmp, "opensm.log")
        conf_path = os.path.join(self.tmp, "opensm.conf")
        cache_dir = os.path.join(self.tmp, "cache")
        os.mkdir(cache_dir)
        A.write_opensm_conf(conf_path, self.tmp, log_path, OPENSM_LOG_FLAGS, None)
        open(os.path.join(self.tmp, "node-name-map"), "w").close()
        osm_env = dict(env)
        osm_env.update({"LD_PRELOAD": self.umad2sim, "SIM_HOST": self.host_a,
                        "OSM_CACHE_DIR": cache_dir, "OSM_TMP_DIR": self.tmp})
        osm_argv = ["opensm", "-F", conf_path, "-s", "0", "-f", log_path,
                    "-D", f"0x{OPENSM_LOG_FLAGS:02x}", "--dump_files_dir", self.tmp]
        opensm = A.Child("opensm", osm_argv, osm_env, self.tmp,
                         os.path.join(self.tmp, "opensm.stdout"),
                         os.path.join(self.tmp, "opensm.stderr"))
        self.children.append(opensm)
        logtail = A.LogTail(log_path)
        delay = 0.002
        while logtail.subnet_up_line is None:
            logtail.scan()
            if not opensm.poll():
                raise Failure(f"opensm ended before SUBNET UP ({opensm.exit_desc()})")
            if not ibsim.poll():
                raise Failure(f"ibsim died while opensm was running ({ibsim.exit_desc()})")
            if time.monotonic() >= deadline:
                raise Failure("timeout waiting for SUBNET UP")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.02)
        # let whatever OpenSM still has in flight after SUBNET UP finish
        time.sleep(self.args.settle)
        if not opensm.poll():
            raise Failure(f"opensm ended after SUBNET UP ({opensm.exit_desc()})")
        lst, links = subnet_lst(os.path.join(self.tmp, "opensm-subnet.lst"))
        desc = {n: v[2] for n, v in nodes.items()}

        def info(nodeid):
            d = desc[nodeid]
            if d not in lst:
                raise Failure(f"{nodeid} ({d!r}) not in opensm-subnet.lst")
            return lst[d]

        a, b = info(self.host_a), info(self.host_b)
        lid_a, lid_b = str(a["lid"]), str(b["lid"])
        # the switch host-a hangs off, and its port towards host-a; an uplink of it if any
        sw_of_a, sw_port = None, None
        for (d1, p1), (d2, p2) in links:
            if d1 == desc[self.host_a] and lst[d2]["type"] == "SW":
                sw_of_a, sw_port = d2, p2
        if sw_of_a is None:
            raise Failure(f"{self.host_a} is not cabled to a switch")
        sw_lid = str(lst[sw_of_a]["lid"])
        uplinks = sorted(p1 for (d1, p1), (d2, _p2) in links
                         if d1 == sw_of_a and lst[d2]["type"] == "SW")
        switches = [(n, lst[desc[n]]) for n, v in nodes.items() if v[0] == "Switch"]
        far_sw = max(switches, key=lambda s: s[1]["lid"])  # e.g. a spine in ft2-16
        facts = {"host_a": self.host_a, "host_b": self.host_b,
                 "lids": {n: lst[desc[n]]["lid"] for n in nodes if desc[n] in lst},
                 "port_guids": {n: f"0x{lst[desc[n]]['port_guid']:016x}" for n in nodes
                                if desc[n] in lst},
                 "switch_of_host_a": {"desc": sw_of_a, "lid": int(sw_lid), "port": sw_port}}

        T = self.tool
        # ---------------- phase 1: OpenSM is master SM and SA, tools on host_a
        # ibstat only reads umad2sim's fake sysfs (no MAD is sent)
        T("ibstat", ["ibstat"])
        ca = T("ibstat-l", ["ibstat", "-l"]).split("\n")[0].strip() or "ibsim0"
        T("ibstat-p", ["ibstat", "-p"])
        T("ibstat-s", ["ibstat", "-s"])
        T("ibstat-ca-port", ["ibstat", ca, "1"])
        # the PMA counters count every MAD ibsim forwards: query them before anything else
        # sends MADs, and always in this order
        T("perfquery", ["perfquery"], note="own port; data/packet counters count MADs")
        T("perfquery-x", ["perfquery", "-x"])
        T("perfquery-switch-port", ["perfquery", sw_lid, str(sw_port)],
          note=f"switch {sw_of_a!r}, the port cabled to {self.host_a}")
        T("perfquery-x-switch-port", ["perfquery", "-x", sw_lid, str(sw_port)])
        if uplinks:
            T("perfquery-switch-uplink", ["perfquery", sw_lid, str(uplinks[0])],
              note=f"switch {sw_of_a!r}, its first uplink port")
        T("perfquery-host-b", ["perfquery", lid_b, "1"])
        T("sminfo", ["sminfo"], note="activity count = SMInfo/MADs the SM has handled")
        T("ibnetdiscover", ["ibnetdiscover"])
        T("ibnetdiscover-p", ["ibnetdiscover", "-p"])
        T("ibnetdiscover-l", ["ibnetdiscover", "-l"])
        T("ibnetdiscover-H", ["ibnetdiscover", "-H"])
        T("ibnetdiscover-S", ["ibnetdiscover", "-S"])
        T("ibnetdiscover-g", ["ibnetdiscover", "-g"])
        T("ibhosts", ["ibhosts"])
        T("ibswitches", ["ibswitches"])
        T("ibnodes", ["ibnodes"])
        T("iblinkinfo", ["iblinkinfo"])
        T("iblinkinfo-l", ["iblinkinfo", "-l"])
        T("iblinkinfo-d", ["iblinkinfo", "-d"])
        T("iblinkinfo-switches-only", ["iblinkinfo", "--switches-only"])
        T("iblinkinfo-cas-only", ["iblinkinfo", "--cas-only"])
        T("ibtracert", ["ibtracert", lid_a, lid_b])
        T("ibtracert-reverse", ["ibtracert", lid_b, lid_a])
        T("ibtracert-to-switch", ["ibtracert", lid_a, str(far_sw[1]["lid"])],
          note=f"to switch {far_sw[0]}")
        for nodeid, sw in switches:
            T(f"ibroute-{nodeid}", ["ibroute", str(sw["lid"])])
        T("ibroute-M", ["ibroute", "-M", sw_lid], note=f"multicast table of {sw_of_a!r}")
        T("smpquery-nodeinfo-host-b", ["smpquery", "nodeinfo", lid_b])
        T("smpquery-nodeinfo-switch", ["smpquery", "nodeinfo", sw_lid])
        T("smpquery-portinfo-host-b", ["smpquery", "portinfo", lid_b, "1"])
        T("smpquery-portinfo-switch-port", ["smpquery", "portinfo", sw_lid, str(sw_port)])
        T("smpquery-portinfo-switch-port0", ["smpquery", "portinfo", sw_lid, "0"])
        T("smpquery-nodedesc-host-b", ["smpquery", "nodedesc", lid_b])
        T("smpquery-switchinfo", ["smpquery", "switchinfo", sw_lid])
        T("smpquery-pkeys-host-b", ["smpquery", "pkeys", lid_b])
        # SA (OpenSM). GetTable answers are cut to their first MAD by umad2sim (no RMPP):
        # commands.json says how many records were printed and how many fit one MAD.
        T("saquery", ["saquery"], note="default query: NodeRecords")
        nr_text = T("saquery-NR", ["saquery", "NR"])
        for nodeid in nodes:
            T(f"saquery-NR-{nodeid}", ["saquery", "NR", str(lst[desc[nodeid]]["lid"])],
              complete=True, note="one NodeRecord per LID: complete although the "
                                  "all-nodes answer is cut")
        T("saquery-PIR", ["saquery", "PIR"])
        T("saquery-PIR-host-b", ["saquery", "PIR", lid_b], complete=True)
        T("saquery-PIR-switch-port", ["saquery", "PIR", f"{sw_lid}/{sw_port}"],
          complete=True)
        T("saquery-s", ["saquery", "-s"], note="PortInfoRecords with IsSM / IsSMdisabled")
        T("saquery-LR", ["saquery", "LR"])
        T("saquery-x", ["saquery", "-x"])
        T("saquery-LR-host-b", ["saquery", "LR", f"{lid_b}/1"])
        T("saquery-p", ["saquery", "-p"], note="every PathRecord")
        T("saquery-p-a-b", ["saquery", "-p", "--slid", lid_a, "--dlid", lid_b], complete=True)
        T("saquery-PR-a-b", ["saquery", "PR", "--slid", lid_a, "--dlid", lid_b], complete=True)
        T("saquery-src-to-dst", ["saquery", "--src-to-dst", f"{lid_a}:{lid_b}"], complete=True)
        T("saquery-SMIR", ["saquery", "SMIR"])
        T("saquery-c", ["saquery", "-c"], note="SA ClassPortInfo")
        T("saquery-CPI", ["saquery", "CPI"])
        T("saquery-SWIR", ["saquery", "SWIR"])
        T("saquery-SWIR-switch", ["saquery", "SWIR", sw_lid])
        T("saquery-LFTR-switch", ["saquery", "LFTR", sw_lid])
        T("saquery-MFTR", ["saquery", "MFTR"])
        T("saquery-g", ["saquery", "-g"], note="multicast groups")
        T("saquery-m", ["saquery", "-m"], note="multicast members")
        T("saquery-MCMR", ["saquery", "MCMR"])
        T("saquery-PKTR-host-b", ["saquery", "--smkey", "1", "PKTR", lid_b],
          note="OpenSM answers PKeyTableRecord only to a trusted requester (SM_Key = its "
               "sa_key, default 1)")
        T("saquery-GIR-host-b", ["saquery", "GIR", lid_b])
        T("saquery-SL2VL-host-b", ["saquery", "SL2VL", lid_b])
        T("saquery-VLAR-host-b", ["saquery", "VLAR", lid_b])
        T("saquery-SR", ["saquery", "SR"], expect="any", note="no service registered")
        T("saquery-I", ["saquery", "-I"], expect="any", note="InformInfo subscriptions")
        T("saquery-D", ["saquery", "-D"], note="node descriptions of the CAs")
        # the name lookups below read every NodeRecord; only the first one reaches saquery
        # (see above), so they ask about the node whose record that is: they then print
        # what they would print with the whole table
        first = first_node_record(nr_text)
        if first is None:
            raise Failure("saquery NR printed no NodeRecord")
        fdesc, flid, fguid = first
        facts["first_node_record"] = {"desc": fdesc, "lid": flid, "port_guid": fguid}
        T("saquery-L", ["saquery", "-L", fdesc])
        T("saquery-l", ["saquery", "-l", fdesc])
        T("saquery-G", ["saquery", "-G", fdesc])
        T("saquery-O", ["saquery", "-O", str(flid)])
        T("saquery-U", ["saquery", "-U", fguid])
        # failing invocations, SM still up
        T("fail-perfquery-999", ["perfquery", "999"], expect="fail", note="no such LID")
        T("fail-ibroute-999", ["ibroute", "999"], expect="fail", note="no such LID")
        T("fail-ibroute-ca", ["ibroute", lid_b], expect="fail", note="a CA is not a switch")
        T("fail-smpquery-nodeinfo-999", ["smpquery", "nodeinfo", "999"], expect="fail")
        T("fail-ibtracert-999", ["ibtracert", lid_a, "999"], expect="fail")
        T("fail-ibstat-no-such-ca", ["ibstat", "mlx5_9"], expect="fail")
        T("fail-ibstat-no-such-port", ["ibstat", ca, "2"], expect="fail")
        T("fail-saquery-NR-999", ["saquery", "NR", "999"], expect="any",
          note="the SA has no record for that LID")
        T("fail-saquery-bad-query", ["saquery", "NoSuchRecord"], expect="fail")
        T("fail-saquery-PKTR-untrusted", ["saquery", "PKTR", lid_b], expect="fail",
          note="SM_Key 0: OpenSM ignores the request (ERR 4608), SA_ERR_REQ_INVALID")
        T("fail-ibping-switch", ["ibping", "-c", "2", "-L", sw_lid], expect="any",
          note="no ibping server on the switch: every ping times out")

        # ---------------- phase 2: OpenSM stopped
        opensm.stop()
        with open(log_path, errors="replace") as f:  # without the time stamps
            osm_errors = [l.split(" -> ", 1)[1].rstrip() for l in f if " 0x01 -> " in l]
        T("fail-sminfo-no-sm", ["sminfo"], expect="fail", note="OpenSM has exited")
        T("fail-saquery-no-sa", ["saquery"], expect="fail", note="OpenSM has exited")
        T("fail-ibping-no-server", ["ibping", "-c", "2", "-L", lid_b], expect="any",
          note=f"nothing listens on {self.host_b}: every ping times out")
        # ibsim hands a request MAD on QP1 only to a client that set IsSM, so the ibping
        # server needs SIM_SET_ISSM=1 (this sets IsSM in host_b's CapabilityMask: ibping
        # runs last). It runs in its own UTS namespace named after the node, so the host
        # name it answers with is not the build machine's.
        srv_env = {"SIM_SET_ISSM": "1"}
        srv_out = os.path.join(self.stage, "ibping-server.txt")
        srv_err = os.path.join(self.tmp, "ibping-server.stderr")
        srv_argv = ["ibping", "-S"]
        server = Background(srv_argv, self.tool_env(self.host_b, srv_env), self.tmp, srv_out,
                            srv_err, uts_hostname=self.host_b)
        self.children.append(server)
        t_wait = time.monotonic() + 20
        while not A.abstract_socket_listed(f"{sockname}:in{server.pid}"):
            if not server.running() or time.monotonic() > t_wait:
                raise Failure("ibping -S did not attach to ibsim")
            time.sleep(0.01)
        time.sleep(0.3)  # its SET_ISSM control message and agent registration
        T("ibping", ["ibping", "-c", "5", "-L", lid_b])
        T("fail-ibping-G-no-sa", ["ibping", "-c", "2", "-G", facts["port_guids"][self.host_b]],
          expect="fail", note="-G resolves the GUID with an SA PathRecord query: no SA now")
        rc = server.stop()
        self.names.add("ibping-server")
        rec = {"name": "ibping-server", "argv": srv_argv,
               "env": {"SIM_HOST": self.host_b, **srv_env}, "background": True,
               "exit_status": rc, "stdout": "ibping-server.txt",
               "note": "ran during ibping and fail-ibping-G-no-sa, stopped with SIGTERM; hostname "
                       f"{self.host_b!r}, domainname '(none)' (private UTS namespace)"}
        if os.path.getsize(srv_err):
            shutil.copyfile(srv_err, os.path.join(self.stage, "ibping-server.stderr.txt"))
            rec["stderr"] = "ibping-server.stderr.txt"
        self.records.append(rec)

        ibsim.stop()
        doc = {
            "fabric": self.name,
            "net_file": "fabric.net",
            "net_source": source,
            "ibsim_argv": ["ibsim"] + ibsim_argv[1:-1] + ["fabric.net"],
            "opensm_argv": ["opensm", "-F", "<tmp>/opensm.conf", "-s", "0", "-f",
                            "<tmp>/opensm.log", "-D", f"0x{OPENSM_LOG_FLAGS:02x}",
                            "--dump_files_dir", "<tmp>"],
            "opensm_sim_host": self.host_a,
            "opensm_log_error_lines": osm_errors,
            "common_env": {"LD_PRELOAD": "libumad2sim.so (package libumad2sim0)",
                           "IBSIM_SOCKNAME": "<private per run>", "LC_ALL": "C",
                           "cwd": "<private temp dir>"},
            "facts": facts,
            "commands": self.records,
            "unexpected": self.unexpected,
        }
        return doc


def sa_info(text, complete):
    """Records saquery printed, how many of that type fit one 256-byte MAD, and whether the
    SA may have had more (the printed count reached that limit)."""
    kinds = {}
    for line in text.splitlines():
        # "NodeRecord dump:", "LFT Record dump:", "MCMemberRecord group dump:", ...
        m = re.match(r"^([A-Za-z][A-Za-z0-9 ]*?) (?:group |member )?dump:$", line)
        if m:
            kind = m.group(1).replace(" ", "")
            kinds[kind] = kinds.get(kind, 0) + 1
    if not kinds:
        return {"sa_records_printed": 0}
    out = {"sa_records_printed": sum(kinds.values())}
    if len(kinds) == 1:
        kind, n = next(iter(kinds.items()))
        size = SA_RECORD_BYTES.get(kind)
        if size:
            cap = 200 // size
            out["sa_records_per_mad"] = cap
            out["sa_may_be_cut_by_umad2sim"] = n >= cap and not complete
    return out


def first_node_record(text):
    """(NodeDescription, lid, port_guid) of the first record saquery NR printed."""
    lid = guid = None
    for line in text.splitlines():
        m = re.match(r"^\s+(lid|port_guid|NodeDescription)\.+(.*)$", line)
        if not m:
            continue
        if m.group(1) == "lid":
            lid = int(m.group(2))
        elif m.group(1) == "port_guid":
            guid = m.group(2).strip()
        elif lid is not None and guid is not None:
            return m.group(2).strip(), lid, guid
    return None


def run_fabric(name, spec, args, umad2sim, versions):
    children = []
    tmp = tempfile.mkdtemp(prefix=f"softib-golden-{name}-")
    stage = os.path.join(tmp, "out")
    os.mkdir(stage)
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    try:
        fr = FabricRun(name, spec, args, umad2sim, stage, work, children)
        doc = fr.run()
        doc["packages"] = versions
        with open(os.path.join(stage, "commands.json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        dest = os.path.join(args.out, name)
        os.makedirs(dest, exist_ok=True)
        for old in os.listdir(dest):
            p = os.path.join(dest, old)
            if os.path.isfile(p) and (old.endswith(".txt") or old in ("commands.json",
                                                                        "fabric.net")):
                os.unlink(p)
        for new in sorted(os.listdir(stage)):
            shutil.copyfile(os.path.join(stage, new), os.path.join(dest, new))
        return doc
    except Failure:
        if args.keep_logs:
            shutil.copytree(tmp, os.path.join(args.keep_logs, name), dirs_exist_ok=True)
        for f in ("ibsim.out", "ibsim.err", "opensm.stdout", "opensm.stderr", "opensm.log"):
            p = os.path.join(work, f)
            if os.path.exists(p):
                sys.stderr.write(f"----- [{name}] tail of {f}\n{A.tail(p)}\n")
        raise
    finally:
        for c in reversed(children):
            try:
                c.stop()
            except Exception:
                pass
        if args.keep_logs and os.path.isdir(tmp):
            shutil.copytree(tmp, os.path.join(args.keep_logs, name), dirs_exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global _libc
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fabric", action="append", choices=sorted(FABRICS),
                    help="only this fabric (repeatable); default: all")
    ap.add_argument("--out", default=HERE, help="output root (default: next to this script)")
    ap.add_argument("--cmd-timeout", type=float, default=60.0,
                    help="limit for each tool invocation, seconds (default 60)")
    ap.add_argument("--setup-timeout", type=float, default=120.0,
                    help="limit for ibsim start + OpenSM bring-up, seconds (default 120)")
    ap.add_argument("--settle", type=float, default=1.0,
                    help="seconds to wait after SUBNET UP before the first tool (default 1)")
    ap.add_argument("--softib", default=os.path.join(REPO, "build", "release", "bin", "softib"),
                    help="softib binary for `topo gen` (built if missing)")
    ap.add_argument("--keep-logs", default=None, metavar="DIR",
                    help="copy each fabric's temp dir (ibsim/opensm logs) to DIR/<fabric>")
    args = ap.parse_args()
    try:
        _libc = ctypes.CDLL(None, use_errno=True)
        A._libc = _libc
    except OSError:
        _libc = None

    def on_signal(signum, _frame):
        raise Interrupted(f"interrupted by signal {signal.Signals(signum).name}")

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    umad2sim = A.find_umad2sim()
    missing = [p for p in ("ibsim", "opensm", "ibstat", "saquery", "ibping") if not shutil.which(p)]
    if not umad2sim or missing:
        sys.stderr.write("needs the Debian packages opensm ibsim-utils libumad2sim0 "
                         f"infiniband-diags (missing: {missing or 'libumad2sim.so'})\n")
        return 1
    versions = dpkg_versions()
    names = args.fabric or list(FABRICS)
    failed = []
    try:
        if any("gen" in FABRICS[n] for n in names):
            args.softib = ensure_softib(args.softib)
        for name in names:
            t0 = time.monotonic()
            try:
                doc = run_fabric(name, FABRICS[name], args, umad2sim, versions)
                bad = doc["unexpected"]
                print(f"{name}: {len(doc['commands'])} commands in "
                      f"{time.monotonic() - t0:.1f} s -> {os.path.join(args.out, name)}"
                      + (f"; unexpected exit status: {', '.join(bad)}" if bad else ""))
            except Failure as e:
                failed.append(name)
                print(f"{name}: FAILED: {e}")
    except (Interrupted, subprocess.SubprocessError) as e:
        print(f"stopped: {e}")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
