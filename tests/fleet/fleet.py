"""Start, inspect and stop a fleet of real Kubernetes API servers on 127.0.0.1.

    fleet.py start  --spec SPEC.yml --dir DIR   start one etcd and N clusters, write kubeconfigs and inventory
    fleet.py status --dir DIR [--json]          report what runs (exit 0 when all of it does)
    fleet.py stop   --dir DIR                   stop every process recorded in DIR/state.json

Each cluster is a kube-apiserver (own --etcd-prefix on one shared etcd) and a kube-controller-manager that runs
only the namespace and garbage-collector controllers. There is no real kubelet and nothing runs: a test controller
(controller.py) plays Kubeflow Trainer's and JobSet's part: TrainJob status and the pods a TrainJob would have, bound to
the fake nodes; a fake kubelet (fake_kubelet.py) serves those pods' logs, so `pods/log` works through the API
servers. See tests/fleet/README.md.

Binaries come from $GPUFLEET_CACHE/k8s/<version>/bin (built by tests/fleet/build.sh); etcd from Debian's
etcd-server. Only loopback addresses are used.
"""

import argparse
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import fleet_nodes as fake_nodes  # noqa: E402
import fleet_rbac  # noqa: E402
import nccl_logs  # noqa: E402

RESTRICTED_NAMESPACE = "burnin-restricted"
RESTRICTED_USER = "burnin-restricted"
ADMIN_USER = "gpufleet-admin"
LOOPBACK = "127.0.0.1"
# Upstream CRDs installed into every cluster, read at run time from ../shared/crds (never copied).
CRD_FILES = (
    "trainer.kubeflow.org_trainingruntimes.yaml",
    "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    "trainer.kubeflow.org_trainjobs.yaml",
    "jobset.x-k8s.io_jobsets.v0.12.0.yaml",
    "resource.nvidia.com_computedomains.yaml",
)

# What a burn-in needs in its one namespace.
RESOURCECLAIMTEMPLATE_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "resourceclaimtemplates.resource.k8s.io",
        "annotations": {
            # A CRD in a *.k8s.io group must carry this annotation.
            "api-approved.kubernetes.io": "unapproved, gpufleet test stand-in for the built-in DRA API",
        },
        "labels": {"gpufleet.test/stand-in": "true"},
    },
    "spec": {
        "group": "resource.k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "resourceclaimtemplates", "singular": "resourceclaimtemplate",
                  "kind": "ResourceClaimTemplate", "listKind": "ResourceClaimTemplateList"},
        "versions": [
            {"name": v, "served": True, "storage": v == "v1",
             "schema": {"openAPIV3Schema": {
                 "type": "object",
                 "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                 "x-kubernetes-preserve-unknown-fields": True}}}
            for v in ("v1", "v1beta2", "v1beta1")
        ],
    },
}


# Grace GPUs (arm64 nodes) and the image name the fleet's inventory gives their groups (nothing is pulled).
GRACE_GPUS = ("gb200", "gb300")
GRACE_STAND_IN_IMAGE = "localhost/gpufleet-test/nccl-tests:arm64-stand-in"


class FleetError(Exception):
    pass


# Set when a start is being abandoned: worker threads stop waiting and spawn nothing more.
_abort = threading.Event()


def raise_keyboard_interrupt(signum, frame):
    """SIGTERM handler: turn it into KeyboardInterrupt so that a half-done start cleans up after itself."""
    raise KeyboardInterrupt(f"signal {signum}")


def log(msg):
    print(f"[fleet] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------- locations

def k8s_version():
    return os.environ.get("GPUFLEET_K8S_VERSION") or (HERE / "K8S_VERSION").read_text().strip()


def cache_root():
    return Path(os.environ.get("GPUFLEET_CACHE") or Path.home() / ".cache" / "gpufleet-burnin")


def bin_dir():
    return Path(os.environ.get("GPUFLEET_K8S_BIN") or cache_root() / "k8s" / k8s_version() / "bin")


def crd_dir():
    return Path(os.environ.get("GPUFLEET_CRD_DIR") or REPO.parent / "shared" / "crds")


def find_binaries():
    b = bin_dir()
    apiserver, kcm = b / "kube-apiserver", b / "kube-controller-manager"
    missing = [str(p) for p in (apiserver, kcm) if not os.access(p, os.X_OK)]
    etcd = os.environ.get("GPUFLEET_ETCD") or shutil.which("etcd") or "/usr/bin/etcd"
    if not os.access(etcd, os.X_OK):
        missing.append("etcd (Debian package etcd-server)")
    if missing:
        raise FleetError("missing binaries: " + ", ".join(missing) +
                         f"; run {HERE / 'build.sh'} first (builds Kubernetes {k8s_version()} once into the cache)")
    return {"kube-apiserver": str(apiserver), "kube-controller-manager": str(kcm), "etcd": etcd}


def crds_available():
    d = crd_dir()
    return d.is_dir() and all((d / f).is_file() for f in CRD_FILES)


# ---------------------------------------------------------------------------------------------- API server tuning

# `api: minimal` (the default) serves only these built-in API group versions. Every built-in type adds to the
# OpenAPI document that kube-apiserver 1.20 merges and converts again for each CRD (and keeps a copy of per
# CRD for server-side apply), so fewer groups make startup about twice as cheap and the process ~100 MB
# smaller. `api: full` serves everything 1.20 has.
MINIMAL_API = ("v1", "apiextensions.k8s.io/v1", "apiregistration.k8s.io/v1", "rbac.authorization.k8s.io/v1",
               "authentication.k8s.io/v1", "authorization.k8s.io/v1", "coordination.k8s.io/v1",
               "events.k8s.io/v1", "apps/v1", "batch/v1", "scheduling.k8s.io/v1")
# Admission plugins never wanted here: no pods run (ServiceAccount), fake nodes are Ready from the start
# (TaintNodesByCondition would taint them not-ready).
DISABLED_ADMISSION = ("ServiceAccount", "TaintNodesByCondition")
# Admission plugins that watch groups `api: minimal` does not serve (they would never become ready).
DISABLED_ADMISSION_MINIMAL = ("DefaultStorageClass", "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
                              "RuntimeClass", "CertificateApproval", "CertificateSigning",
                              "CertificateSubjectRestriction", "DefaultIngressClass", "MutatingAdmissionWebhook",
                              "ValidatingAdmissionWebhook")


def api_flags(api):
    if api == "full":
        return ["--disable-admission-plugins=" + ",".join(DISABLED_ADMISSION)]
    runtime = ["api/all=false"] + [("api/v1" if gv == "v1" else gv) + "=true" for gv in MINIMAL_API]
    return ["--runtime-config=" + ",".join(runtime),
            "--disable-admission-plugins=" + ",".join(DISABLED_ADMISSION + DISABLED_ADMISSION_MINIMAL)]


def go_env(component, memlimit, gogc="50"):
    """Go runtime settings of a fleet process: a low GOGC and a GOMEMLIMIT well above the live heap.

    A GOMEMLIMIT below the live heap makes the Go GC run non-stop: with the Trainer/JobSet CRDs installed an
    idle kube-apiserver has ~150 MB live heap, and with GOMEMLIMIT=200MiB it burned ~16% of a core for ever.
    A low GOGC (40 for API servers: heap ~1.4x live instead of 2x) trades a little CPU for memory. Override
    with GPUFLEET_<COMPONENT>_GOGC / GPUFLEET_<COMPONENT>_GOMEMLIMIT (APISERVER, KCM, ETCD).
    """
    return {"GOGC": os.environ.get(f"GPUFLEET_{component}_GOGC", gogc),
            "GOMEMLIMIT": os.environ.get(f"GPUFLEET_{component}_GOMEMLIMIT", memlimit)}


# ---------------------------------------------------------------------------------------------- spec

DEFAULT_MISMATCH_PLATFORMS = ("gcp", "aws", "azure", "oci")
DEFAULT_MISMATCH_GPUS = ("gb200", "h100", "gb300")


def load_spec(path):
    with open(path) as f:
        raw = yaml.safe_load(f) or {}
    clusters = raw.get("clusters") if isinstance(raw, dict) else None
    if not clusters:
        raise FleetError(f"{path}: no clusters")
    seen = set()
    out = []
    for c in clusters:
        name = str(c.get("name", ""))
        if not name or not all(ch.isalnum() or ch == "-" for ch in name) or name != name.lower():
            raise FleetError(f"{path}: bad cluster name {name!r} (lower-case letters, digits, '-')")
        if name in seen:
            raise FleetError(f"{path}: duplicate cluster {name}")
        seen.add(name)
        platform = str(c.get("platform", "")).lower()
        gpu = str(c.get("gpu_architecture", "")).lower()
        if not platform or not gpu:
            raise FleetError(f"{path}: cluster {name} needs platform and gpu_architecture")
        match = c.get("nodes_match_group", True)
        node_platform = c.get("node_platform")
        node_gpu = c.get("node_gpu_architecture")
        if not match:
            node_platform = node_platform or next(p for p in DEFAULT_MISMATCH_PLATFORMS if p != platform)
            node_gpu = node_gpu or next(g for g in DEFAULT_MISMATCH_GPUS if g != gpu)
        node_platform = str(node_platform or platform).lower()
        node_gpu = str(node_gpu or gpu).lower()
        outcome = c.get("trainjob_outcome", "Complete")
        outcome = "none" if outcome is None else str(outcome)
        if outcome not in ("Complete", "Failed", "none"):
            raise FleetError(f"{path}: cluster {name}: trainjob_outcome must be Complete, Failed or none")
        nccl_log = str(c.get("nccl_log") or ("truncated" if outcome == "Failed" else "good"))
        if nccl_log not in nccl_logs.RESULTS:
            raise FleetError(f"{path}: cluster {name}: nccl_log must be one of {', '.join(nccl_logs.RESULTS)}, got {nccl_log!r}")
        nccl_busbw = c.get("nccl_busbw")
        if nccl_busbw is not None and (isinstance(nccl_busbw, bool) or not isinstance(nccl_busbw, (int, float))
                                       or nccl_busbw <= 0):
            raise FleetError(f"{path}: cluster {name}: nccl_busbw must be a bandwidth in GB/s > 0, got {nccl_busbw!r}")
        out.append({
            "name": name,
            "platform": platform,
            "gpu_architecture": gpu,
            "nodes": int(c.get("nodes", 2)),
            "instance_type": c.get("instance_type"),
            "nodes_match_group": bool(match),
            "node_platform": node_platform,
            "node_gpu_architecture": node_gpu,
            "trainjob_outcome": outcome,
            "nccl_log": nccl_log,
            "nccl_busbw": nccl_busbw,
            "node_labels": dict(c.get("node_labels") or {}),
            "node_capacity": {k: str(v) for k, v in (c.get("node_capacity") or {}).items()},
            "node_taints": c.get("node_taints"),
        })
    kubelet_port = raw.get("kubelet_port", "auto")
    if kubelet_port != "auto" and (isinstance(kubelet_port, bool) or not isinstance(kubelet_port, int)
                                   or not 1024 <= kubelet_port <= 65535 - len(out)):
        raise FleetError(f"{path}: kubelet_port must be auto or a port number (the first cluster's; the next ones count "
                         f"up), got {kubelet_port!r}")
    api = str(raw.get("api") or "minimal")
    if api not in ("minimal", "full"):
        raise FleetError(f"{path}: api must be minimal or full")
    return {
        "clusters": out,
        "api": api,
        "restricted_namespace": str(raw.get("restricted_namespace") or RESTRICTED_NAMESPACE),
        "kubelet_port": kubelet_port,
    }


# ---------------------------------------------------------------------------------------------- processes

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


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
    if _abort.is_set():
        raise FleetError("start aborted")
    env = dict(os.environ)
    env.update(env_extra or {})
    logf = open(log_path, "ab")
    try:
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT, env=env,
                             start_new_session=True, close_fds=True)
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
    """Stop recorded processes that are still ours, tier by tier (controller, fake kubelet, controller managers, API
    servers, etcd): SIGTERM, wait, SIGKILL leftovers. Returns the names of the processes stopped."""
    tiers = {}
    for name, r in recs:
        kind = name.split("/")[-1]
        tiers.setdefault({"controller": 0, "kubelet": 0, "kube-controller-manager": 0, "kube-apiserver": 1}.get(kind, 2),
                         []).append((name, r))
    stopped, failed = [], []
    for t in sorted(tiers):
        live = [(n, r) for n, r in tiers[t] if is_ours(r)]
        failed += _stop_tier(live, timeout)
        stopped += [n for n, _rec in live]
    if failed:
        raise FleetError("could not stop: " + ", ".join(f"{n} (pid {r['pid']})" for n, r in failed))
    return stopped


# ---------------------------------------------------------------------------------------------- TLS, tokens

def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if r.returncode != 0:
        raise FleetError("openssl " + " ".join(args) + " failed: " + r.stdout.decode(errors="replace"))


def make_pki(pki):
    """A CA, a serving certificate for 127.0.0.1/localhost and a service-account signing key."""
    pki.mkdir(parents=True, exist_ok=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
            "-subj", "/CN=gpufleet-test-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=pki)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=kube-apiserver", cwd=pki)
    (pki / "server.ext").write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
        "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
        "DNS:kubernetes.default.svc\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.crt", "-days", "3650", "-extfile", "server.ext", cwd=pki)
    openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    # The fake kubelet's serving certificate (the API servers verify it: --kubelet-certificate-authority) and the
    # API servers' kubelet client certificate (the fake kubelet requires one of this CA).
    for name, cn, usage, san in (("kubelet", "gpufleet-fake-kubelet", "serverAuth", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"),
                                 ("kubelet-client", "kube-apiserver-kubelet-client", "clientAuth", "")):
        subject = f"/O=system:masters/CN={cn}" if usage == "clientAuth" else f"/CN={cn}"
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject,
                cwd=pki)
        (pki / f"{name}.ext").write_text(
            "basicConstraints=critical,CA:FALSE\n"
            "keyUsage=critical,digitalSignature,keyEncipherment\n"
            f"extendedKeyUsage={usage}\n" + san)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "3650", "-extfile", f"{name}.ext", cwd=pki)
    for f in ("ca.key", "server.key", "sa.key", "kubelet.key", "kubelet-client.key"):
        os.chmod(pki / f, 0o600)


# ---------------------------------------------------------------------------------------------- REST

class Rest:
    """A minimal HTTPS client for one API server (bearer token, verified TLS)."""

    def __init__(self, server, token, ca_file):
        hostport = server.split("://", 1)[1]
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.token = token
        self.ctx = ssl.create_default_context(cafile=str(ca_file))

    def request(self, method, path, body=None, content_type="application/json", timeout=30):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        try:
            headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
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


# ---------------------------------------------------------------------------------------------- fleet files

def write_kubeconfig(path, clusters, ca_data, token_key, namespace=None):
    cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {}, "clusters": [], "users": [], "contexts": []}
    for c in clusters:
        name = c["name"]
        cluster = {"server": c["server"], "certificate-authority-data": ca_data}
        cfg["clusters"].append({"name": name, "cluster": cluster})
        user = f"{name}-{token_key.split('_')[0]}"
        cfg["users"].append({"name": user, "user": {"token": c[token_key]}})
        ctx = {"cluster": name, "user": user}
        if namespace:
            ctx["namespace"] = namespace
        cfg["contexts"].append({"name": name, "context": ctx})
    cfg["current-context"] = clusters[0]["name"] if clusters else ""
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def build_inventory(state):
    hostvars_common = {"ansible_connection": "local",
                       "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    groups = {}
    platform_groups = {}
    gpu_groups = {}
    for name, c in state["clusters"].items():
        g = f"{c['platform']}_{c['gpu_architecture']}"
        group_vars = {"burnin_platform": c["platform"], "burnin_gpu_architecture": c["gpu_architecture"]}
        if c["gpu_architecture"] in GRACE_GPUS:
            # The nccl-tests workloads have no default image for Grace (arm64) nodes. Nothing runs on the test
            # fleet, so a stand-in name does; real GB200/GB300 groups name an arm64 image that holds nccl-tests.
            group_vars["burnin_image"] = GRACE_STAND_IN_IMAGE
        grp = groups.setdefault(g, {"vars": group_vars, "hosts": {}})
        grp["hosts"][name] = {
            "burnin_kubeconfig": state["kubeconfig"],
            "burnin_context": name,
            "burnin_restricted_kubeconfig": state["restricted_kubeconfig"],
            "burnin_restricted_namespace": state["restricted_namespace"],
            **hostvars_common,
        }
        platform_groups.setdefault(f"platform_{c['platform']}", set()).add(g)
        gpu_groups.setdefault(f"gpu_{c['gpu_architecture']}", set()).add(g)
    children = {g: groups[g] for g in sorted(groups)}
    for axis in (platform_groups, gpu_groups):
        for g in sorted(axis):
            if g not in children:
                children[g] = {"children": {child: {} for child in sorted(axis[g])}}
    return {"all": {"vars": dict(hostvars_common), "children": children}}


def state_path(d):
    return Path(d) / "state.json"


def read_state(d):
    p = state_path(d)
    if not p.is_file():
        return None
    return json.loads(p.read_text())


_state_lock = threading.RLock()


def write_state(d, state):
    with _state_lock:
        p = state_path(d)
        tmp = Path(str(p) + ".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True))
        tmp.replace(p)


def all_records(state):
    """(name, record) for every process, in stop order: controller, fake kubelet, controller managers, API servers,
    etcd."""
    recs = []
    if state.get("controller"):
        recs.append(("controller", state["controller"]))
    if state.get("kubelet"):
        recs.append(("kubelet", state["kubelet"]))
    for n, c in state.get("clusters", {}).items():
        if c.get("controller_manager"):
            recs.append((f"{n}/kube-controller-manager", c["controller_manager"]))
    for n, c in state.get("clusters", {}).items():
        if c.get("apiserver"):
            recs.append((f"{n}/kube-apiserver", c["apiserver"]))
    if state.get("etcd"):
        recs.append(("etcd", state["etcd"]))
    return recs


# ---------------------------------------------------------------------------------------------- start

_crd_cache = {}


def adapt_crd_for_old_apiserver(doc):
    """Make an upstream CRD acceptable to kube-apiserver 1.20, returning the number of changes.

    1.20 rejects `default: ""` in a structural schema ('default: Invalid value: "null": in body must be of type
    string'), although "" is a valid string. Such a default only fills in an empty name; dropping it cannot
    prune anything. A key of an `x-kubernetes-list-map` must have a default or be required, so a key that lost
    its "" default becomes required in its item schema (e.g. imagePullSecrets[].name): objects without it are
    meaningless anyway. Nothing else is changed (CEL rules are ignored by 1.20 anyway).

    Unless GPUFLEET_CRD_KEEP_DESCRIPTIONS=1, schema descriptions are dropped as well: they are ~80% of the bytes,
    and 1.20 rebuilds its whole OpenAPI document for every CRD, which with the full texts takes tens of CPU
    seconds per cluster. Descriptions play no part in validation, defaulting or pruning.
    """
    changed = 0
    strip_descriptions = os.environ.get("GPUFLEET_CRD_KEEP_DESCRIPTIONS") != "1"

    def walk(node):
        nonlocal changed
        if isinstance(node, dict):
            if strip_descriptions and isinstance(node.get("description"), str):
                del node["description"]
            if node.get("default") == "":
                del node["default"]
                changed += 1
            for v in node.values():
                walk(v)
            if node.get("x-kubernetes-list-type") == "map" and isinstance(node.get("items"), dict):
                items = node["items"]
                props = items.get("properties") or {}
                for key in node.get("x-kubernetes-list-map-keys") or []:
                    if key in props and "default" not in props[key] and key not in items.get("required", []):
                        items.setdefault("required", []).append(key)
                        changed += 1
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for v in doc.get("spec", {}).get("versions", []):
        walk(v.get("schema"))
    return changed


def load_crds():
    d = crd_dir()
    if not crds_available():
        return None
    key = str(d)
    if key not in _crd_cache:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        docs = []
        for f in CRD_FILES:
            with open(d / f) as fh:
                docs.extend(doc for doc in yaml.load_all(fh, Loader=loader) if doc)
        for doc in docs:
            adapt_crd_for_old_apiserver(doc)
        # Pre-encode once; every cluster gets the same bytes.
        _crd_cache[key] = [(doc["metadata"]["name"], json.dumps(doc).encode()) for doc in docs]
    return _crd_cache[key]


def wait_http_ok(check, proc, what, log_path, timeout):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if _abort.is_set():
            raise FleetError(f"{what}: start aborted")
        if proc is not None and proc.poll() is not None:
            raise FleetError(f"{what} exited with {proc.returncode} while starting; log {log_path}:\n"
                             + tail(log_path))
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


def install_cluster(rest, c, spec_c, crds, restricted_ns, kubelet_port):
    """Namespace, RBAC, CRDs (and stand-in), fake GPU nodes."""
    rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": restricted_ns}})
    # The namespaced part of the collection's least-privilege RBAC manifest (extras/rbac/burnin-rbac.yaml).
    fleet_rbac.install(rest, restricted_ns, RESTRICTED_USER)

    crd_names = []
    for name, body in (crds or []):
        rest.must("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body, ok=(200, 201, 409))
        crd_names.append(name)
    rest.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", RESOURCECLAIMTEMPLATE_CRD)
    crd_names.append(RESOURCECLAIMTEMPLATE_CRD["metadata"]["name"])

    for node, status in fake_nodes.build_nodes(
            c["name"], spec_c["node_platform"], spec_c["node_gpu_architecture"], spec_c["nodes"],
            instance_type=spec_c["instance_type"], kubelet_port=kubelet_port,
            extra_labels=spec_c["node_labels"], extra_capacity=spec_c["node_capacity"],
            taints=spec_c["node_taints"]):
        rest.create("/api/v1/nodes", node)
        rest.must("PATCH", f"/api/v1/nodes/{node['metadata']['name']}/status", {"status": status},
                  content_type="application/merge-patch+json")

    # Wait until every CRD is Established and its API is served.
    deadline = time.monotonic() + 60
    pending = set(crd_names)
    while pending:
        for name in sorted(pending):
            obj = rest.must("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            conds = {x["type"]: x["status"] for x in (obj.get("status") or {}).get("conditions") or []}
            if conds.get("Established") == "True":
                pending.discard(name)
        if pending:
            if time.monotonic() > deadline or _abort.is_set():
                raise FleetError(f"{c['name']}: CRDs not established: {sorted(pending)}")
            time.sleep(0.1)
    return crd_names


def start(spec_path, d, timeout=120.0):
    t0 = time.monotonic()
    _abort.clear()
    spec = load_spec(spec_path)
    bins = find_binaries()
    d = Path(d).resolve()
    d.mkdir(parents=True, exist_ok=True)
    old = read_state(d)
    if old and any(is_ours(r) for _name, r in all_records(old)):
        raise FleetError(f"a fleet is already running in {d}; stop it first")
    crds = load_crds()
    if crds is None:
        log(f"WARNING: {crd_dir()} is absent or incomplete: upstream CRDs (Trainer, JobSet, ComputeDomain) are NOT "
            "installed; tests that need them will be skipped")

    for sub in ("etcd", "clusters", "pki", "logs", "kubelet"):
        p = d / sub
        if p.exists():
            shutil.rmtree(p)
    make_pki(d / "pki")
    ca_file = d / "pki" / "ca.crt"
    import base64
    ca_data = base64.b64encode(ca_file.read_bytes()).decode()

    state = {
        "version": 1,
        "dir": str(d),
        "spec": str(Path(spec_path).resolve()),
        "status": "starting",
        "k8s_version": k8s_version(),
        "binaries": bins,
        "crds_installed": crds is not None,
        "crd_dir": str(crd_dir()),
        "restricted_namespace": spec["restricted_namespace"],
        "restricted_user": RESTRICTED_USER,
        "ca_file": str(ca_file),
        "kubeconfig": str(d / "kubeconfig"),
        "restricted_kubeconfig": str(d / "restricted.kubeconfig"),
        "inventory": str(d / "inventory.yml"),
        "kubelet_port": spec["kubelet_port"],
        "api": spec["api"],
        "clusters": {},
        "etcd": None,
        "controller": None,
        "kubelet": None,
        "started_at": time.time(),
    }
    marker = str(d)
    procs = []
    logs = d / "logs"
    logs.mkdir()
    try:
        # etcd, shared by every cluster.
        eport, pport = free_port(), free_port()
        etcd_args = [
            bins["etcd"], "--name", "gpufleet", "--data-dir", str(d / "etcd"),
            "--listen-client-urls", f"http://{LOOPBACK}:{eport}", "--advertise-client-urls", f"http://{LOOPBACK}:{eport}",
            "--listen-peer-urls", f"http://{LOOPBACK}:{pport}",
            "--initial-advertise-peer-urls", f"http://{LOOPBACK}:{pport}",
            "--initial-cluster", f"gpufleet=http://{LOOPBACK}:{pport}",
            "--log-level", "warn", "--logger", "zap",
            "--auto-compaction-mode", "periodic", "--auto-compaction-retention", "5m",
            "--quota-backend-bytes", str(4 * 1024 ** 3),
            # Fewer raft entries kept in memory (CRDs are large objects).
            "--snapshot-count", "10000",
        ]
        p, rec = spawn(etcd_args, logs / "etcd.log", go_env("ETCD", "300MiB"))
        procs.append(p)
        rec.update(marker=marker, client_port=eport, peer_port=pport, data_dir=str(d / "etcd"))
        state["etcd"] = rec
        write_state(d, state)
        wait_http_ok(lambda: etcd_healthy(eport), p, "etcd", logs / "etcd.log", 30)

        pki = d / "pki"
        api_procs = {}
        used_ports = set()
        for index, sc in enumerate(spec["clusters"]):
            name = sc["name"]
            cdir = d / "clusters" / name
            cdir.mkdir(parents=True)
            port = free_port()
            # Each cluster's nodes point at their own fake-kubelet port, so the kubelet knows whose pod is asked for.
            kubelet_port = (spec["kubelet_port"] + index) if spec["kubelet_port"] != "auto" else free_port()
            while spec["kubelet_port"] == "auto" and kubelet_port in used_ports | {port, eport, pport}:
                kubelet_port = free_port()
            used_ports.update((port, kubelet_port))
            c = {
                "name": name,
                "platform": sc["platform"],
                "gpu_architecture": sc["gpu_architecture"],
                "node_platform": sc["node_platform"],
                "node_gpu_architecture": sc["node_gpu_architecture"],
                "nodes_match_group": sc["nodes_match_group"],
                "node_instance_type": sc["instance_type"] or fake_nodes.instance_type_for(
                    sc["node_platform"], sc["node_gpu_architecture"]),
                "trainjob_outcome": sc["trainjob_outcome"],
                "nccl_log": sc["nccl_log"],
                "nccl_busbw": sc["nccl_busbw"],
                "kubelet_port": kubelet_port,
                "port": port,
                "server": f"https://{LOOPBACK}:{port}",
                "etcd_prefix": f"/gpufleet/{name}",
                "context": name,
                "admin_token": secrets.token_hex(20),
                "kcm_token": secrets.token_hex(20),
                "restricted_token": secrets.token_hex(20),
                "restricted_namespace": spec["restricted_namespace"],
                "dir": str(cdir),
            }
            (cdir / "tokens.csv").write_text(
                f'{c["admin_token"]},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'
                f'{c["kcm_token"]},system:kube-controller-manager,kcm,"system:masters"\n'
                f'{c["restricted_token"]},{RESTRICTED_USER},{RESTRICTED_USER}\n')
            os.chmod(cdir / "tokens.csv", 0o600)
            args = [
                bins["kube-apiserver"],
                f"--etcd-servers=http://{LOOPBACK}:{eport}", f"--etcd-prefix={c['etcd_prefix']}",
                f"--bind-address={LOOPBACK}", f"--advertise-address={LOOPBACK}",
                f"--secure-port={port}", "--insecure-port=0",
                f"--tls-cert-file={pki / 'server.crt'}", f"--tls-private-key-file={pki / 'server.key'}",
                f"--cert-dir={cdir / 'certs'}",
                f"--token-auth-file={cdir / 'tokens.csv'}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={pki / 'sa.key'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--api-audiences=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--endpoint-reconciler-type=none",
                *api_flags(spec["api"]),
                "--enable-priority-and-fairness=false",
                "--allow-privileged=true",
                "--profiling=false",
                "--event-ttl=1h",
                "--kubelet-preferred-address-types=InternalIP,Hostname",
                # pods/log goes to the fake kubelet over verified, mutually authenticated TLS.
                f"--kubelet-certificate-authority={pki / 'ca.crt'}",
                f"--kubelet-client-certificate={pki / 'kubelet-client.crt'}",
                f"--kubelet-client-key={pki / 'kubelet-client.key'}",
            ]
            p, rec = spawn(args, logs / f"{name}.apiserver.log", go_env("APISERVER", "512MiB", gogc="40"))
            procs.append(p)
            rec["marker"] = marker
            c["apiserver"] = rec
            api_procs[name] = p
            state["clusters"][name] = c
            write_state(d, state)

        clusters = list(state["clusters"].values())
        write_kubeconfig(d / "kubeconfig", clusters, ca_data, "admin_token")
        write_kubeconfig(d / "restricted.kubeconfig", clusters, ca_data, "restricted_token",
                         namespace=spec["restricted_namespace"])
        spec_by_name = {sc["name"]: sc for sc in spec["clusters"]}

        def bring_up(c):
            name = c["name"]
            rest = Rest(c["server"], c["admin_token"], ca_file)

            def ready():
                return rest.request("GET", "/readyz", timeout=5)[0] == 200
            wait_http_ok(ready, api_procs[name], f"{name}: kube-apiserver", logs / f"{name}.apiserver.log", timeout)
            t_ready = time.monotonic() - t0
            cdir = Path(c["dir"])
            write_kubeconfig(cdir / "kcm.kubeconfig", [c], ca_data, "kcm_token")
            kcm_args = [
                bins["kube-controller-manager"],
                f"--kubeconfig={cdir / 'kcm.kubeconfig'}",
                "--controllers=namespace,garbagecollector",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--port=0", "--secure-port=0",
                "--concurrent-gc-syncs=5", "--concurrent-namespace-syncs=2",
            ]
            p, rec = spawn(kcm_args, logs / f"{name}.controller-manager.log", go_env("KCM", "200MiB", gogc="25"))
            procs.append(p)
            rec["marker"] = marker
            with _state_lock:
                c["controller_manager"] = rec
                write_state(d, state)
            installed = install_cluster(rest, c, spec_by_name[name], crds, spec["restricted_namespace"],
                                        c["kubelet_port"])
            with _state_lock:
                c["crds"] = installed
                c["ready_seconds"] = round(t_ready, 2)
                c["installed_seconds"] = round(time.monotonic() - t0, 2)
            if p.poll() is not None:
                raise FleetError(f"{name}: kube-controller-manager exited; log "
                                 f"{logs / (name + '.controller-manager.log')}:\n"
                                 + tail(logs / f"{name}.controller-manager.log"))
            return name

        with ThreadPoolExecutor(max_workers=len(clusters)) as ex:
            futures = [ex.submit(bring_up, c) for c in clusters]
            errors = []
            for f in futures:
                try:
                    f.result()
                except Exception as e:  # noqa: BLE001 - collected and re-raised below
                    errors.append(e)
                    _abort.set()  # the fleet is lost anyway: let the other workers stop early
                    if os.environ.get("GPUFLEET_DEBUG"):
                        import traceback
                        traceback.print_exception(e)
                except BaseException:
                    _abort.set()  # interrupted: workers stop before the executor waits for them
                    raise
            if errors:
                raise FleetError("; ".join(str(e) for e in errors))

        inv = build_inventory(state)
        Path(state["inventory"]).write_text(
            "# Generated by tests/fleet/fleet.py: hosts are clusters, groups are <platform>_<gpu>.\n"
            + yaml.safe_dump(inv, sort_keys=False))

        def start_helper(key, script, ready_name, what, timeout):
            """Start one of the fleet's helper processes and wait for the file it writes once it is ready."""
            ready = d / ready_name
            if ready.exists():
                ready.unlink()
            log_path = logs / (key + ".log")
            p, rec = spawn([sys.executable, str(HERE / script), "--dir", str(d)], log_path)
            procs.append(p)
            rec["marker"] = marker
            state[key] = rec
            write_state(d, state)
            wait_http_ok(ready.exists, p, what, log_path, timeout)

        # The fake kubelet (serves the pods' logs to the API servers), then the test controller (plays Kubeflow
        # Trainer's and JobSet's part: TrainJob status, pods, their logs).
        start_helper("kubelet", "fake_kubelet.py", "kubelet.ready", "fake kubelet", 30)
        start_helper("controller", "controller.py", "controller.ready", "test controller", 60)

        state["status"] = "running"
        state["startup_seconds"] = round(time.monotonic() - t0, 2)
        write_state(d, state)
        return state
    except BaseException:
        log("start failed; stopping what was started")
        try:
            stop_records(all_records(state))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
            state["status"] = "failed"
            write_state(d, state)
        raise


# ---------------------------------------------------------------------------------------------- stop, status

def stop(d):
    state = read_state(d)
    if state is None:
        log(f"no fleet state in {d}; nothing to stop")
        return []
    stopped = stop_records(all_records(state))
    state["status"] = "stopped"
    write_state(d, state)
    return stopped


def status(d):
    state = read_state(d)
    if state is None:
        return None
    out = {"dir": state["dir"], "status": state.get("status"), "processes": {}, "clusters": {}}
    for name, r in all_records(state):
        out["processes"][name] = {"pid": r["pid"], "running": is_ours(r)}
    for name, c in state.get("clusters", {}).items():
        ready = False
        if c.get("apiserver") and is_ours(c["apiserver"]):
            try:
                rest = Rest(c["server"], c["admin_token"], state["ca_file"])
                ready = rest.request("GET", "/readyz", timeout=3)[0] == 200
            except (OSError, http.client.HTTPException, ssl.SSLError):
                ready = False
        out["clusters"][name] = {"server": c["server"], "group": f"{c['platform']}_{c['gpu_architecture']}",
                                 "ready": ready}
    out["running"] = bool(out["processes"]) and all(p["running"] for p in out["processes"].values()) and all(
        c["ready"] for c in out["clusters"].values())
    return out


def rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="start a fleet")
    s.add_argument("--spec", default=str(HERE / "default-fleet.yml"))
    s.add_argument("--dir", required=True)
    s.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each API server")
    s = sub.add_parser("stop", help="stop the fleet recorded in DIR/state.json")
    s.add_argument("--dir", required=True)
    s = sub.add_parser("status", help="show the fleet recorded in DIR/state.json")
    s.add_argument("--dir", required=True)
    s.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "start":
            signal.signal(signal.SIGTERM, raise_keyboard_interrupt)
            st = start(a.spec, a.dir, a.timeout)
            total = sum(rss_bytes(r["pid"]) for _name, r in all_records(st))
            log(f"fleet of {len(st['clusters'])} clusters running in {st['startup_seconds']} s, "
                f"{total / 2**20:.0f} MiB RSS")
            print(f"kubeconfig: {st['kubeconfig']}")
            print(f"restricted kubeconfig: {st['restricted_kubeconfig']} (namespace {st['restricted_namespace']})")
            print(f"inventory: {st['inventory']}")
            for name, c in st["clusters"].items():
                print(f"  {name}: {c['server']} group {c['platform']}_{c['gpu_architecture']}"
                      + ("" if c["nodes_match_group"] else
                         f" (nodes look like {c['node_platform']}/{c['node_gpu_architecture']})"))
            return 0
        if a.cmd == "stop":
            stopped = stop(a.dir)
            log(f"stopped {len(stopped)} processes")
            return 0
        st = status(a.dir)
        if st is None:
            print(f"no fleet in {a.dir}")
            return 1
        if a.json:
            print(json.dumps(st, indent=2))
        else:
            print(f"fleet {st['dir']}: state {st['status']}; "
                  f"{'all processes running and ready' if st['running'] else 'NOT fully running'}")
            for name, p in st["processes"].items():
                print(f"  {name}: pid {p['pid']} {'running' if p['running'] else 'gone'}")
            for name, c in st["clusters"].items():
                print(f"  {name}: {c['server']} {c['group']} {'ready' if c['ready'] else 'not ready'}")
        return 0 if st["running"] else 1
    except FleetError as e:
        log(f"error: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
