"""Processes, waits and a small REST client for the test fleet (tests/fleet/fleet.py, tests/fleet/agent.py).

Every process of a fleet is recorded with its PID, start time and a marker (the fleet directory) that must be in
its command line, so that `stop` never signals a process that merely reuses a recorded PID.
"""

import http.client
import json
import os
import random
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

LOOPBACK = "127.0.0.1"


class FleetError(Exception):
    pass


# Set when a start is being abandoned: worker threads stop waiting and spawn nothing more.
abort = threading.Event()


def log(msg):
    print(f"[fleet] {msg}", file=sys.stderr, flush=True)


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


_HANDED_OUT = set()
_PORTS_LOCK = threading.Lock()


def free_port():
    """A free loopback port below the kernel's ephemeral range. Not bind(0): that hands out an ephemeral port, which
    any outgoing connection (the fleet's own clients) may take before the component binds it (seen in CI: Trainer's
    "address already in use"). Ports below the range are never given to outgoing connections."""
    low, _high = _ephemeral_range()
    top = low - 1 if low > 12000 else 65535
    with _PORTS_LOCK:
        for _attempt in range(1000):
            port = random.randint(10000, top)
            if port in _HANDED_OUT:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind((LOOPBACK, port))
                except OSError:
                    continue
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free loopback port found below the ephemeral range")


def proc_start_time(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    # Field 22 (starttime), counted after the parenthesised command name.
    rest = data.rsplit(")", 1)[1].split()
    return int(rest[19]), rest[0]


def is_ours(rec):
    """True when rec's PID is still the process that was started (same start time, cmdline has the marker)."""
    if not rec or not rec.get("pid"):
        return False
    st = proc_start_time(rec["pid"])
    if st is None or st[0] != rec.get("start_time") or st[1] == "Z":
        return False
    try:
        with open(f"/proc/{rec['pid']}/cmdline", "rb") as f:
            cmdline = f.read().decode(errors="replace")
    except OSError:
        return False
    return rec.get("marker", "") in cmdline


def spawn(args, log_path, env_extra=None):
    if abort.is_set():
        raise FleetError("start aborted")
    env = dict(os.environ)
    env.update(env_extra or {})
    logf = open(log_path, "ab")
    try:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, env=env, start_new_session=True, close_fds=True)
    finally:
        logf.close()
    try:
        st = proc_start_time(p.pid)
        return p, {"pid": p.pid, "start_time": st[0] if st else None, "args": args, "log": str(log_path)}
    except BaseException:
        p.kill()
        p.wait()
        raise


def reap(pid):
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _stop_tier(live, timeout):
    for name, r in live:
        try:
            os.kill(r["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
    pending = list(live)
    for sig, wait in ((None, timeout), (signal.SIGKILL, 5.0)):
        if sig is not None:
            for name, r in pending:
                log(f"{name} (pid {r['pid']}) still running {timeout:.0f}s after SIGTERM; killing")
                try:
                    os.kill(r["pid"], sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + wait
        while pending:
            for _name, r in pending:
                reap(r["pid"])
            pending = [(n, r) for n, r in pending if is_ours(r)]
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if not pending:
            break
    return pending


def stop_records(recs, timeout=15.0):
    """Stop recorded processes that are still ours, tier by tier: everything that talks to an API server first, then
    the API servers, then etcd (SIGTERM, wait, SIGKILL leftovers). Returns the names of the processes stopped."""
    tiers = {}
    for name, r in recs:
        kind = name.split("/")[-1]
        tiers.setdefault({"kube-apiserver": 1, "etcd": 2}.get(kind, 0), []).append((name, r))
    stopped, failed = [], []
    for t in sorted(tiers):
        live = [(n, r) for n, r in tiers[t] if is_ours(r)]
        failed += _stop_tier(live, timeout)
        stopped += [n for n, _rec in live]
    if failed:
        raise FleetError("could not stop: " + ", ".join(f"{n} (pid {r['pid']})" for n, r in failed))
    return stopped


def wait_http_ok(check, proc, what, log_path, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if abort.is_set():
            raise FleetError(f"{what}: start aborted")
        if proc is not None and proc.poll() is not None:
            raise FleetError(f"{what} exited with {proc.returncode} while starting; log {log_path}:\n" + tail(log_path))
        try:
            if check():
                return
        except (OSError, http.client.HTTPException, ssl.SSLError) as e:
            last = e
        time.sleep(0.1)
    raise FleetError(f"{what} not ready after {timeout}s ({last}); log {log_path}:\n" + tail(log_path))


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def etcd_healthy(port):
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=2)
    try:
        conn.request("GET", "/health")
        r = conn.getresponse()
        body = r.read()
        return r.status == 200 and b'"true"' in body
    finally:
        conn.close()


class Rest:
    """A minimal HTTPS client for one API server (bearer token, verified TLS)."""

    def __init__(self, server, token, ca_file, impersonate=None, client_cert=None):
        hostport = server.split("://", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.token = token
        self.ctx = ssl.create_default_context(cafile=str(ca_file))
        # (cert, key) of a client certificate (fleet.issue_node_client) instead of the token (None).
        if client_cert:
            self.ctx.load_cert_chain(str(client_cert[0]), str(client_cert[1]))
        # A user name to act as (the admin token may impersonate): requests then go through that user's RBAC and
        # admission, as tests/e2e/test_rbac_manifest.py needs for the admission policy.
        self.impersonate = impersonate

    def request(self, method, path, body=None, content_type="application/json", timeout=30):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        try:
            headers = {"Accept": "application/json"}
            if self.token:
                headers["Authorization"] = f"Bearer {self.token}"
            if self.impersonate:
                headers["Impersonate-User"] = self.impersonate
            data = None
            if body is not None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                headers["Content-Type"] = content_type
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            try:
                payload = json.loads(raw) if raw else None
            except ValueError:
                payload = raw.decode(errors="replace")
            return resp.status, payload
        finally:
            conn.close()

    def must(self, method, path, body=None, ok=(200, 201), **kw):
        status, payload = self.request(method, path, body, **kw)
        if status not in ok:
            raise FleetError(f"{method} {path}: HTTP {status}: {str(payload)[:500]}")
        return payload

    def create(self, path, obj):
        """POST, treating AlreadyExists as success."""
        return self.must("POST", path, obj, ok=(200, 201, 409))
