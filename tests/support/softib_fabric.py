"""A private softib fabric for tests: `softib up` with its own runtime and state directories
(so tests run in parallel and never touch a user's fabric), commands run against it, and
`softib down` (or SIGKILL of the daemon) on every way out.

    with SoftibFabric(softib, topology="topologies/ft2-16.net") as f:
        r = f.run("stat", host="H-00001")
        assert r.returncode == 0, r.stderr

Python 3 standard library only.
"""

import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time


class SoftibFabric:
    def __init__(self, softib, topology=None, sm=True, up_args=(), name=None, keep_state=None):
        self.softib = os.path.abspath(softib)
        self.topology = topology
        self.sm = sm
        self.up_args = list(up_args)
        self.name = name or "t" + secrets.token_hex(4)
        self.tmp = tempfile.mkdtemp(prefix="softib-test-")
        self.state_dir = keep_state or os.path.join(self.tmp, "state")
        self.runtime_dir = os.path.join(self.tmp, "run")
        self.env = dict(os.environ)
        self.env.update({
            "SOFTIB_FABRIC": self.name,
            "SOFTIB_RUNTIME_DIR": self.runtime_dir,
            "SOFTIB_STATE_DIR": self.state_dir,
            "LC_ALL": "C",
        })
        self.env.pop("SOFTIB_HOST", None)
        self.pid = None

    # ---- life ----
    def up(self, timeout=120):
        argv = [self.softib, "up"]
        if self.topology:
            argv.append(self.topology)
        if not self.sm:
            argv.append("--no-sm")
        argv += self.up_args
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"softib up failed ({r.returncode}): {r.stderr}{self.log()}")
        self.pid = self.daemon_pid()
        return r

    def down(self):
        if self.daemon_pid() is None:
            return
        subprocess.run([self.softib, "down"], env=self.env, capture_output=True, text=True, timeout=30)

    def kill9(self):
        pid = self.daemon_pid()
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            for _ in range(500):
                if not os.path.exists(f"/proc/{pid}") or _zombie(pid):
                    break
                time.sleep(0.01)

    def daemon_pid(self):
        try:
            with open(os.path.join(self.runtime_dir, self.name, "softibd.pid")) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if os.path.exists(f"/proc/{pid}") and not _zombie(pid) else None

    def log(self):
        try:
            with open(os.path.join(self.runtime_dir, self.name, "softibd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def __enter__(self):
        try:
            self.up()
        except BaseException:
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc):
        self.cleanup()

    def cleanup(self):
        try:
            self.down()
        except Exception:
            pass
        self.kill9()
        shutil.rmtree(self.tmp, ignore_errors=True)

    # ---- commands ----
    def run(self, *args, host=None, timeout=60, input=None, env=None):
        e = dict(self.env)
        if host:
            e["SOFTIB_HOST"] = host
        if env:
            e.update(env)
        return subprocess.run([self.softib, *args], env=e, capture_output=True, text=True,
                              timeout=timeout, input=input)

    def popen(self, *args, host=None, env=None):
        e = dict(self.env)
        if host:
            e["SOFTIB_HOST"] = host
        if env:
            e.update(env)
        return subprocess.Popen([self.softib, *args], env=e, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True
