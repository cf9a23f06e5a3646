"""Start, inspect and stop a fleet of real Kubernetes clusters on 127.0.0.1.

    fleet.py start  --spec SPEC.yml --dir DIR   start one etcd and N clusters, write kubeconfigs and inventory
    fleet.py status --dir DIR [--json]          report what runs (exit 0 when all of it does)
    fleet.py stop   --dir DIR                   stop every process recorded in DIR/state.json

Each cluster is a control plane of its own Kubernetes version (kube-apiserver with its own --etcd-prefix on one
shared etcd, kube-controller-manager, kube-scheduler), KWOK for its GPU nodes and their pods, and the real JobSet
and Kubeflow Trainer controllers with their webhooks, all out of cluster on loopback. The one home-made process is
tests/fleet/agent.py: it stands in for the GPU workload's output and for NVIDIA's DRA driver (see its docstring).
Binaries and upstream manifests come from $GPUFLEET_CACHE/components (built by tests/fleet/build.sh from the Go
modules named in tests/fleet/components.env). See tests/fleet/README.md.
"""

import argparse
import base64
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dcgm_logs  # noqa: E402
import fleet_nodes as fake_nodes  # noqa: E402
import fleet_rbac  # noqa: E402
import nccl_logs  # noqa: E402
from fleet_procs import LOOPBACK, FleetError, Rest, abort, etcd_healthy, free_port, is_ours, log, spawn, stop_records, tail, wait_http_ok  # noqa: E402

RESTRICTED_NAMESPACE = "burnin-restricted"
RESTRICTED_USER = "burnin-restricted"
ADMIN_USER = "gpufleet-admin"
FAKE_NODE_LABEL = "gpufleet.test/fake-node"
# The cluster components, in start order after the API server; stopped before the API servers.
COMPONENTS = ("kube-controller-manager", "kube-scheduler", "kwok", "jobset", "trainer")
# Grace GPUs (arm64 nodes) and the image name the fleet's inventory gives their groups (nothing is pulled).
GRACE_GPUS = ("gb200", "gb300")
GRACE_STAND_IN_IMAGE = "localhost/gpufleet-test/nccl-tests:arm64-stand-in"


def raise_keyboard_interrupt(signum, frame):
    """SIGTERM handler: turn it into KeyboardInterrupt so that a half-done start cleans up after itself."""
    raise KeyboardInterrupt(f"signal {signum}")


# ---------------------------------------------------------------------------------------------- components


def read_env_file(path):
    """KEY=VALUE lines of a shell file such as components.env (quotes stripped, comments ignored)."""
    out = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip().strip('"')
    return out


VERSIONS = read_env_file(HERE / "components.env")
KUBERNETES_VERSIONS = VERSIONS["KUBERNETES_VERSIONS"].split()


def cache_root():
    return Path(os.environ.get("GPUFLEET_CACHE") or Path.home() / ".cache" / "gpufleet-burnin")


def components_dir():
    return cache_root() / "components"


def manifests_dir():
    return components_dir() / "manifests"


def kubernetes_version(wanted):
    """The full version built for WANTED (None, '1.37' or '1.37.2'); FleetError naming the built ones otherwise."""
    if wanted in (None, ""):
        return KUBERNETES_VERSIONS[0]
    wanted = str(wanted).lstrip("v")
    for v in KUBERNETES_VERSIONS:
        if v == wanted or v.rsplit(".", 1)[0] == wanted:
            return v
    raise FleetError(f"kubernetes_version {wanted!r} is not built; tests/fleet/components.env has " + ", ".join(KUBERNETES_VERSIONS))


def find_binaries(k8s_versions):
    root = components_dir()
    bins = {
        "etcd": root / f"etcd-{VERSIONS['ETCD_VERSION']}" / "bin" / "etcd",
        "kwok": root / f"kwok-{VERSIONS['KWOK_VERSION']}" / "bin" / "kwok",
        "jobset": root / f"jobset-{VERSIONS['JOBSET_VERSION']}" / "bin" / "jobset",
        "trainer": root / f"trainer-{VERSIONS['TRAINER_VERSION']}" / "bin" / "trainer-controller-manager",
    }
    for v in sorted(set(k8s_versions)):
        for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler"):
            bins[f"{name}-{v}"] = root / f"kubernetes-{v}" / "bin" / name
    missing = [str(p) for p in bins.values() if not os.access(p, os.X_OK)]
    if not (manifests_dir() / ".stamp").is_file():
        missing.append(str(manifests_dir()))
    if missing:
        raise FleetError(
            "missing: " + ", ".join(missing) + f"; run {HERE / 'build.sh'} first (builds the test " "bed's components from their Go modules once per machine)"
        )
    return {k: str(v) for k, v in bins.items()}


def load_yaml_docs(path):
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as fh:
        return [doc for doc in yaml.load_all(fh, Loader=loader) if doc]


def crd_documents():
    """The CRDs every cluster gets: Trainer's and JobSet's and KWOK's Logs (from their modules) and the ComputeDomain
    stand-in (tests/fleet/stand-ins: NVIDIA's DRA driver module is not served)."""
    docs = []
    for path in sorted((manifests_dir() / "crds").glob("*.yaml")):
        docs += load_yaml_docs(path)
    docs += load_yaml_docs(HERE / "stand-ins" / "computedomain-crd.yaml")
    return docs


def apply_json_patch(doc, ops):
    """The replace/add operations of the upstream kustomize patches (RFC 6902, object keys and list indexes)."""
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].lstrip("/").split("/")]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if isinstance(parent, list):
            parent[int(last)] = op["value"]
        else:
            parent[last] = op["value"]
    return doc


def webhook_configurations(component, port, ca_data):
    """The upstream webhook configurations of trainer or jobset, with their kustomize patches applied and each
    service reference turned into a URL on 127.0.0.1 (a Service cannot route to loopback)."""
    d = manifests_dir() / f"{component}-webhook"
    docs = load_yaml_docs(d / "manifests.yaml")
    patches = {
        "trainer": {"MutatingWebhookConfiguration": "patch_mutating.yaml", "ValidatingWebhookConfiguration": "patch_validating.yaml"},
        "jobset": {"MutatingWebhookConfiguration": "mutating-patch.yaml", "ValidatingWebhookConfiguration": "validating-patch.yaml"},
    }[component]
    out = []
    for doc in docs:
        apply_json_patch(doc, yaml.safe_load((d / patches[doc["kind"]]).read_text()))
        if component == "jobset":
            doc["metadata"]["name"] = f"jobset-{doc['metadata']['name']}"
        for hook in doc["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://{LOOPBACK}:{port}{path}", "caBundle": ca_data}
            hook["timeoutSeconds"] = 10
        out.append(doc)
    return out


# ---------------------------------------------------------------------------------------------- spec

DEFAULT_MISMATCH_PLATFORMS = ("gcp", "aws", "azure", "oci")
DEFAULT_MISMATCH_GPUS = ("gb200", "h100", "gb300")
OUTCOMES = ("Complete", "Failed", "none")


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
        outcome = c.get("trainjob_outcome", "Complete")
        outcome = "none" if outcome is None else str(outcome)
        if outcome not in OUTCOMES:
            raise FleetError(f"{path}: cluster {name}: trainjob_outcome must be one of {', '.join(OUTCOMES)}")
        nccl_log = str(c.get("nccl_log") or ("truncated" if outcome == "Failed" else "good"))
        if nccl_log not in nccl_logs.RESULTS:
            raise FleetError(f"{path}: cluster {name}: nccl_log must be one of {', '.join(nccl_logs.RESULTS)}, " f"got {nccl_log!r}")
        nccl_busbw = c.get("nccl_busbw")
        if nccl_busbw is not None and (isinstance(nccl_busbw, bool) or not isinstance(nccl_busbw, (int, float)) or nccl_busbw <= 0):
            raise FleetError(f"{path}: cluster {name}: nccl_busbw must be a bandwidth in GB/s > 0, got {nccl_busbw!r}")
        failing = c.get("dcgm_failing_gpus") or {}
        if not isinstance(failing, dict) or not all(
            isinstance(node, str) and isinstance(gpus, list) and all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in gpus)
            for node, gpus in failing.items()
        ):
            raise FleetError(f"{path}: cluster {name}: dcgm_failing_gpus must map node names to lists of GPU indexes, got {failing!r}")
        slow_gpus = c.get("slow_gpus") or {}
        if not isinstance(slow_gpus, dict) or not all(
            isinstance(node, str) and isinstance(gpus, list) and all(isinstance(g, int) and not isinstance(g, bool) and g >= 0 for g in gpus)
            for node, gpus in slow_gpus.items()
        ):
            raise FleetError(f"{path}: cluster {name}: slow_gpus must map node names to lists of GPU indexes, got {slow_gpus!r}")
        hung = c.get("dcgm_hung_nodes") or []
        if not isinstance(hung, list) or not all(isinstance(n, str) and n for n in hung):
            raise FleetError(f"{path}: cluster {name}: dcgm_hung_nodes must be a list of node names, got {hung!r}")
        dcgm_replay = c.get("dcgm_replay") or {}
        if not isinstance(dcgm_replay, dict) or not all(isinstance(n, str) and v in dcgm_logs.REPLAYS for n, v in dcgm_replay.items()):
            raise FleetError(f"{path}: cluster {name}: dcgm_replay must map node names to one of {', '.join(sorted(dcgm_logs.REPLAYS))}, got {dcgm_replay!r}")
        kernel_xids = c.get("kernel_xids") or {}
        if not isinstance(kernel_xids, dict) or not all(
            isinstance(n, str)
            and isinstance(v, list)
            and all(isinstance(x, list) and 2 <= len(x) <= 3 and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in x) for x in v)
            for n, v in kernel_xids.items()
        ):
            raise FleetError(
                f"{path}: cluster {name}: kernel_xids must map node names to lists of [gpu index, xid] or [gpu index, xid, cause], got {kernel_xids!r}"
            )
        slow_nodes = c.get("slow_nodes") or []
        if not isinstance(slow_nodes, list) or not all(isinstance(n, str) and n for n in slow_nodes):
            raise FleetError(f"{path}: cluster {name}: slow_nodes must be a list of node names, got {slow_nodes!r}")
        # The isolation's finer faults (agent.py): a slow rail, a degraded NVLink, a bad link between two domains.
        slow_rails = c.get("slow_rails") or {}
        if not isinstance(slow_rails, dict) or not all(
            isinstance(n, str) and isinstance(v, list) and v and all(isinstance(x, str) and x for x in v) for n, v in slow_rails.items()
        ):
            raise FleetError(f"{path}: cluster {name}: slow_rails must map node names to lists of NIC names, got {slow_rails!r}")
        # MNNVL nodes whose NVLink fabric is not registered: no nvidia.com/gpu.clique label (fleet_nodes.build_nodes).
        unregistered_fabric = c.get("unregistered_fabric") or []
        if not isinstance(unregistered_fabric, list) or not all(isinstance(n, str) and n for n in unregistered_fabric):
            raise FleetError(f"{path}: cluster {name}: unregistered_fabric must be a list of node names, got {unregistered_fabric!r}")
        degraded_nvlink = c.get("degraded_nvlink") or []
        if not isinstance(degraded_nvlink, list) or not all(isinstance(n, str) and n for n in degraded_nvlink):
            raise FleetError(f"{path}: cluster {name}: degraded_nvlink must be a list of node names, got {degraded_nvlink!r}")
        bad_links = c.get("bad_links") or []
        if not isinstance(bad_links, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) and x for x in pair) for pair in bad_links
        ):
            raise FleetError(f"{path}: cluster {name}: bad_links must be a list of [domain a, domain b] label values, got {bad_links!r}")
        inventory_vars = c.get("inventory_vars") or {}
        if not isinstance(inventory_vars, dict):
            raise FleetError(f"{path}: cluster {name}: inventory_vars must be a mapping of host variables, got {inventory_vars!r}")
        node_naming = str(c.get("node_naming") or "platform")
        if node_naming not in fake_nodes.NODE_NAMINGS:
            raise FleetError(f"{path}: cluster {name}: node_naming must be one of {', '.join(fake_nodes.NODE_NAMINGS)}, got {node_naming!r}")
        nccl_transport = str(c.get("nccl_transport") or "expected")
        if nccl_transport not in nccl_logs.TRANSPORTS:
            raise FleetError(f"{path}: cluster {name}: nccl_transport must be one of {', '.join(nccl_logs.TRANSPORTS)}, got {nccl_transport!r}")
        nccl_replay = str(c.get("nccl_replay") or "")
        if nccl_replay and nccl_replay not in nccl_logs.replay_names():
            raise FleetError(f"{path}: cluster {name}: nccl_replay must be one of {', '.join(nccl_logs.replay_names())}, got {nccl_replay!r}")
        node_busbw = c.get("node_busbw") or {}
        if not isinstance(node_busbw, dict) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0 or not isinstance(k, str) for k, v in node_busbw.items()
        ):
            raise FleetError(f"{path}: cluster {name}: node_busbw must map node names to a bandwidth in GB/s > 0, got {node_busbw!r}")
        # Issue 45: a node's own driver version (a skew the drift check names) and the spread of healthy nodes' figures.
        node_driver = c.get("node_driver") or {}
        if not isinstance(node_driver, dict) or any(not isinstance(v, str) or len(v.split(".")) != 3 for v in node_driver.values()):
            raise FleetError(f"{path}: cluster {name}: node_driver must map node names to a driver version major.minor.rev, got {node_driver!r}")
        node_nccl = c.get("node_nccl") or {}
        if not isinstance(node_nccl, dict) or any(not isinstance(v, str) or not re.match(r"^\d+\.\d+\.\d+(?:\+[\w.]+)?\Z", v) for v in node_nccl.values()):
            raise FleetError(f"{path}: cluster {name}: node_nccl must map node names to an NCCL version such as 2.27.3+cuda12.9, got {node_nccl!r}")
        spread = c.get("node_spread_percent", 0)
        if isinstance(spread, bool) or not isinstance(spread, (int, float)) or not 0 <= spread < 20:
            raise FleetError(f"{path}: cluster {name}: node_spread_percent must be a number from 0 to 20, got {spread!r}")
        try:
            version = kubernetes_version(c.get("kubernetes_version"))
        except FleetError as e:
            raise FleetError(f"{path}: cluster {name}: {e}") from None
        out.append(
            {
                "name": name,
                "platform": platform,
                "gpu_architecture": gpu,
                "kubernetes_version": version,
                "dra_beta_apis": bool(c.get("dra_beta_apis", False)),
                "nodes": int(c.get("nodes", 2)),
                "instance_type": c.get("instance_type"),
                "nodes_match_group": bool(match),
                "node_platform": str(node_platform or platform).lower(),
                "node_gpu_architecture": str(node_gpu or gpu).lower(),
                "trainjob_outcome": outcome,
                "nccl_log": nccl_log,
                "nccl_busbw": nccl_busbw,
                "nccl_transport": nccl_transport,
                "nccl_replay": nccl_replay,
                "dcgm_replay": dict(dcgm_replay),
                "kernel_xids": dict(kernel_xids),
                "node_busbw": dict((fake_nodes.gpu_node_name(str(node_platform or platform).lower(), name, k, node_naming), v) for k, v in node_busbw.items()),
                "node_driver": dict(
                    (fake_nodes.gpu_node_name(str(node_platform or platform).lower(), name, k, node_naming), v) for k, v in node_driver.items()
                ),
                "node_nccl": dict((fake_nodes.gpu_node_name(str(node_platform or platform).lower(), name, k, node_naming), v) for k, v in node_nccl.items()),
                "node_spread_percent": float(spread),
                "node_labels": dict(c.get("node_labels") or {}),
                "node_capacity": {k: str(v) for k, v in (c.get("node_capacity") or {}).items()},
                "node_taints": c.get("node_taints"),
                "dcgm_failing_gpus": {str(node): list(gpus) for node, gpus in failing.items()},
                "dcgm_hung_nodes": list(hung),
                "slow_gpus": {str(node): list(gpus) for node, gpus in slow_gpus.items()},
                "node_naming": node_naming,
                "slow_nodes": list(slow_nodes),
                "slow_rails": dict((n, list(v)) for n, v in slow_rails.items()),
                "degraded_nvlink": list(degraded_nvlink),
                "unregistered_fabric": list(unregistered_fabric),
                "bad_links": [list(pair) for pair in bad_links],
                "inventory_vars": dict(inventory_vars),
            }
        )
    return {"clusters": out, "restricted_namespace": str(raw.get("restricted_namespace") or RESTRICTED_NAMESPACE)}


# ---------------------------------------------------------------------------------------------- TLS


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if r.returncode != 0:
        raise FleetError("openssl " + " ".join(args) + " failed: " + r.stdout.decode(errors="replace"))


def issue(pki, name, cn, usage, san="", organization="system:masters"):
    """A key and a certificate of the fleet CA: pki/NAME.key, pki/NAME.crt (a client's in ORGANIZATION, its group)."""
    subject = f"/O={organization}/CN={cn}" if usage == "clientAuth" else f"/CN={cn}"
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=pki)
    (pki / f"{name}.ext").write_text(
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage={usage}\n" + (f"subjectAltName={san}\n" if san else "")
    )
    openssl(
        "x509",
        "-req",
        "-in",
        f"{name}.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        f"{name}.crt",
        "-days",
        "3650",
        "-extfile",
        f"{name}.ext",
        cwd=pki,
    )
    os.chmod(pki / f"{name}.key", 0o600)


def make_pki(pki):
    """The fleet CA and what it signs: the API servers' serving certificate, the service-account key, KWOK's
    kubelet serving certificate (the API servers verify it), the API servers' kubelet client certificate, and the
    serving certificate of the Trainer and JobSet webhooks (127.0.0.1)."""
    pki.mkdir(parents=True, exist_ok=True)
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "3650",
        "-subj",
        "/CN=gpufleet-test-ca",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=pki,
    )
    os.chmod(pki / "ca.key", 0o600)
    issue(pki, "server", "kube-apiserver", "serverAuth", "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc")
    issue(pki, "kubelet", "gpufleet-kwok-kubelet", "serverAuth", "IP:127.0.0.1,DNS:localhost")
    issue(pki, "kubelet-client", "kube-apiserver-kubelet-client", "clientAuth")
    issue(pki, "webhook", "gpufleet-webhooks", "serverAuth", "IP:127.0.0.1,DNS:localhost")
    openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    os.chmod(pki / "sa.key", 0o600)


def issue_node_client(pki, node):
    """A kubelet's client certificate for NODE, as a kubelet's TLS bootstrap gets it (CN=system:node:<node>,
    O=system:nodes): the API servers' Node authorizer and NodeRestriction admission apply to it. (cert, key) paths."""
    name = "node-" + node
    issue(pki, name, "system:node:" + node, "clientAuth", organization="system:nodes")
    return pki / f"{name}.crt", pki / f"{name}.key"


# ---------------------------------------------------------------------------------------------- fleet files


def write_kubeconfig(path, clusters, ca_data, token_key, namespace=None):
    cfg = {"apiVersion": "v1", "kind": "Config", "preferences": {}, "clusters": [], "users": [], "contexts": []}
    for c in clusters:
        name = c["name"]
        cfg["clusters"].append({"name": name, "cluster": {"server": c["server"], "certificate-authority-data": ca_data}})
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
    hostvars_common = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    groups, platform_groups, gpu_groups = {}, {}, {}
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
            "gpufleet_test_restricted_kubeconfig": state["restricted_kubeconfig"],
            "gpufleet_test_restricted_namespace": state["restricted_namespace"],
            **hostvars_common,
            # The spec's own host variables for this cluster (e.g. burnin_nodes for a cluster of 4 nodes).
            **(c.get("inventory_vars") or {}),
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
    return json.loads(p.read_text()) if p.is_file() else None


_state_lock = threading.Lock()


def write_state(d, state):
    with _state_lock:
        p = state_path(d)
        tmp = Path(str(p) + ".tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True))
        tmp.replace(p)


def all_records(state):
    """(name, record) for every process: the agent, each cluster's components, API servers, etcd."""
    recs = [("agent", state["agent"])] if state.get("agent") else []
    for n, c in state.get("clusters", {}).items():
        recs += [(f"{n}/{kind}", c["processes"][kind]) for kind in COMPONENTS if kind in c.get("processes", {})]
    for n, c in state.get("clusters", {}).items():
        if "kube-apiserver" in c.get("processes", {}):
            recs.append((f"{n}/kube-apiserver", c["processes"]["kube-apiserver"]))
    if state.get("etcd"):
        recs.append(("etcd", state["etcd"]))
    return recs


# ---------------------------------------------------------------------------------------------- one cluster


def go_env(component, memlimit, gogc="50"):
    """Go runtime settings of a fleet process: a low GOGC and a GOMEMLIMIT well above the live heap (a limit below
    it makes the GC run non-stop). Override with GPUFLEET_<COMPONENT>_GOGC / _GOMEMLIMIT."""
    return {"GOGC": os.environ.get(f"GPUFLEET_{component}_GOGC", gogc), "GOMEMLIMIT": os.environ.get(f"GPUFLEET_{component}_GOMEMLIMIT", memlimit)}


class ClusterStarter:
    """Starts one cluster of a fleet, stage by stage: API server, what is installed into it, its components."""

    def __init__(self, fleet, c, spec_c):
        self.fleet = fleet
        self.c = c
        self.spec_c = spec_c
        self.name = c["name"]
        self.dir = Path(c["dir"])
        self.logs = fleet.dir / "logs"
        self.pki = fleet.dir / "pki"
        self.rest = Rest(c["server"], c["admin_token"], self.pki / "ca.crt")

    def spawn(self, kind, args, env=None):
        p, rec = spawn(args, self.logs / f"{self.name}.{kind}.log", env)
        rec["marker"] = str(self.fleet.dir)
        self.fleet.procs.append(p)
        self.c["processes"][kind] = rec
        self.fleet.save()
        return p

    def log_of(self, kind):
        return self.logs / f"{self.name}.{kind}.log"

    # -- stage 1: the API server
    def start_apiserver(self):
        c, pki, bins = self.c, self.pki, self.fleet.bins
        (self.dir / "tokens.csv").write_text(
            f'{c["admin_token"]},{ADMIN_USER},{ADMIN_USER},"system:masters"\n'
            f'{c["components_token"]},gpufleet-components,gpufleet-components,"system:masters"\n'
            f'{c["restricted_token"]},{RESTRICTED_USER},{RESTRICTED_USER}\n'
        )
        os.chmod(self.dir / "tokens.csv", 0o600)
        args = [
            bins[f"kube-apiserver-{c['kubernetes_version']}"],
            f"--etcd-servers=http://{LOOPBACK}:{self.fleet.etcd_port}",
            f"--etcd-prefix={c['etcd_prefix']}",
            f"--bind-address={LOOPBACK}",
            f"--advertise-address={LOOPBACK}",
            f"--secure-port={c['port']}",
            f"--tls-cert-file={pki / 'server.crt'}",
            f"--tls-private-key-file={pki / 'server.key'}",
            f"--cert-dir={self.dir / 'certs'}",
            f"--token-auth-file={self.dir / 'tokens.csv'}",
            # As kubeadm and the managed clouds run it: kubelets are authorized by the Node authorizer and confined to
            # their own Node by NodeRestriction; client certificates of the fleet CA authenticate (issue_node_client).
            "--authorization-mode=Node,RBAC",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--service-account-key-file={pki / 'sa.key'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc",
            "--api-audiences=https://kubernetes.default.svc",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--endpoint-reconciler-type=none",
            # Nodes are KWOK's and Ready from the start: no node-lifecycle controller removes the not-ready taint
            # that TaintNodesByCondition would add. ExtendedResourceToleration is on as on GKE, whose GPU nodes
            # carry the nvidia.com/gpu taint.
            "--disable-admission-plugins=TaintNodesByCondition",
            "--enable-admission-plugins=ExtendedResourceToleration,NodeRestriction",
            "--allow-privileged=true",
            "--profiling=false",
            "--event-ttl=1h",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            # pods/log goes to KWOK's kubelet server over verified TLS.
            f"--kubelet-certificate-authority={pki / 'ca.crt'}",
            f"--kubelet-client-certificate={pki / 'kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'kubelet-client.key'}",
        ]
        if c["dra_beta_apis"]:
            # What a cluster admin opts in to for clients of the older DRA API versions.
            args.append("--runtime-config=resource.k8s.io/v1beta1=true,resource.k8s.io/v1beta2=true")
        self.proc = self.spawn("kube-apiserver", args, go_env("APISERVER", "768MiB", gogc="50"))

    def wait_apiserver(self, timeout):
        wait_http_ok(
            lambda: self.rest.request("GET", "/readyz", timeout=5)[0] == 200, self.proc, f"{self.name}: kube-apiserver", self.log_of("kube-apiserver"), timeout
        )
        self.c["ready_seconds"] = round(time.monotonic() - self.fleet.t0, 2)

    # -- stage 2: what every cluster holds before its controllers start
    def install(self):
        """The CRDs, the restricted namespace with its RBAC, the nodes; then wait until the CRDs are established."""
        names = self.create_crds()
        self.create_restricted_namespace()
        self.create_nodes()
        self.wait_crds_established(names)
        self.c["crds"] = names

    def create_crds(self):
        names = []
        for doc in self.fleet.crds:
            self.rest.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc)
            names.append(doc["metadata"]["name"])
        return names

    def create_restricted_namespace(self):
        ns = self.fleet.spec["restricted_namespace"]
        self.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        # The namespaced part of the collection's least-privilege RBAC manifest (extras/rbac/burnin-rbac.yaml).
        fleet_rbac.install(self.rest, ns, RESTRICTED_USER)

    def create_nodes(self):
        """The KWOK GPU nodes of the spec and one system (CPU) node, Ready from the start."""
        rest, c, spec_c = self.rest, self.c, self.spec_c
        nodes = fake_nodes.build_nodes(
            c["name"],
            spec_c["node_platform"],
            spec_c["node_gpu_architecture"],
            spec_c["nodes"],
            instance_type=spec_c["instance_type"],
            kubelet_port=c["kwok_port"],
            extra_labels=spec_c["node_labels"],
            extra_capacity=spec_c["node_capacity"],
            taints=spec_c["node_taints"],
            kubelet_version="v" + c["kubernetes_version"],
            naming=spec_c["node_naming"],
            unregistered=spec_c.get("unregistered_fabric") or (),
            node_driver=spec_c.get("node_driver"),
        )
        nodes.append(fake_nodes.system_node(c["name"], spec_c["node_platform"], kubelet_port=c["kwok_port"], kubelet_version="v" + c["kubernetes_version"]))
        for node, status in nodes:
            rest.create("/api/v1/nodes", node)
            rest.must("PATCH", f"/api/v1/nodes/{node['metadata']['name']}/status", {"status": status}, content_type="application/merge-patch+json")

    def wait_crds_established(self, names):
        rest = self.rest
        deadline = time.monotonic() + 60
        pending = set(names)
        while pending:
            for name in sorted(pending):
                obj = rest.must("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                conds = {x["type"]: x["status"] for x in (obj.get("status") or {}).get("conditions") or []}
                if conds.get("Established") == "True":
                    pending.discard(name)
            if pending:
                if time.monotonic() > deadline or abort.is_set():
                    raise FleetError(f"{self.name}: CRDs not established: {sorted(pending)}")
                time.sleep(0.1)

    # -- stage 3: controllers, scheduler, KWOK, JobSet, Trainer
    def start_components(self):
        kubeconfig = self.dir / "components.kubeconfig"
        write_kubeconfig(kubeconfig, [self.c], self.fleet.ca_data, "components_token")
        self.start_control_plane_components(kubeconfig)
        self.start_kwok(kubeconfig)
        self.start_job_controllers(kubeconfig)

    def start_control_plane_components(self, kubeconfig):
        """kube-controller-manager with the controllers the chain needs, and kube-scheduler."""
        c, bins, pki = self.c, self.fleet.bins, self.pki
        version = c["kubernetes_version"]
        self.spawn(
            "kube-controller-manager",
            [
                bins[f"kube-controller-manager-{version}"],
                f"--kubeconfig={kubeconfig}",
                # What the chain needs: Jobs (JobSet's), pods' ResourceClaims from templates (DRA), service accounts
                # and their tokens (pods are admitted with one), namespace deletion and ownerReference cleanup.
                "--controllers=namespace-controller,garbage-collector-controller,job-controller,resourceclaim-controller,"
                "serviceaccount-controller,serviceaccount-token-controller,root-ca-certificate-publisher-controller,"
                "ttl-after-finished-controller,pod-garbage-collector-controller",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                "--secure-port=0",
                "--concurrent-gc-syncs=5",
                "--concurrent-namespace-syncs=2",
                "--concurrent-job-syncs=5",
            ],
            go_env("KCM", "256MiB", gogc="40"),
        )
        self.spawn(
            "kube-scheduler",
            [
                bins[f"kube-scheduler-{version}"],
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
            ],
            go_env("SCHEDULER", "256MiB", gogc="40"),
        )

    def start_kwok(self, kubeconfig):
        """KWOK for the fake nodes and their pods, with the upstream stages and the fleet's own."""
        c, bins, pki, cdir = self.c, self.fleet.bins, self.pki, self.dir
        stages = cdir / "kwok-stages.yaml"
        stage_docs = []
        for path in sorted((manifests_dir() / "kwok-stages").glob("*.yaml")):
            stage_docs += load_yaml_docs(path)
        stage_docs += load_yaml_docs(HERE / "kwok-stages.yaml")
        stages.write_text(yaml.safe_dump_all(stage_docs, sort_keys=False))
        self.spawn(
            "kwok",
            [
                bins["kwok"],
                f"--kubeconfig={kubeconfig}",
                f"--config={stages}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-label-selector={FAKE_NODE_LABEL}=true",
                f"--node-ip={LOOPBACK}",
                f"--node-port={c['kwok_port']}",
                f"--server-address={LOOPBACK}:{c['kwok_port']}",
                f"--tls-cert-file={pki / 'kubelet.crt'}",
                f"--tls-private-key-file={pki / 'kubelet.key'}",
                "--enable-crds=Logs",
                "--cidr=10.244.0.0/16",
            ],
            go_env("KWOK", "256MiB", gogc="40"),
        )

    def start_job_controllers(self, kubeconfig):
        """JobSet and Trainer: their own config files, certificates from the fleet CA (their cert rotators are off)."""
        c, bins, pki, cdir = self.c, self.fleet.bins, self.pki, self.dir
        for kind, port, health in (
            ("jobset", c["jobset_webhook_port"], c["jobset_health_port"]),
            ("trainer", c["trainer_webhook_port"], c["trainer_health_port"]),
        ):
            certs = cdir / kind / "k8s-webhook-server" / "serving-certs"
            certs.mkdir(parents=True, exist_ok=True)
            shutil.copy(pki / "webhook.crt", certs / "tls.crt")
            shutil.copy(pki / "webhook.key", certs / "tls.key")
            config = cdir / kind / "config.yaml"
            if kind == "jobset":
                cfg = {
                    "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
                    "kind": "Configuration",
                    "leaderElection": {"leaderElect": False},
                    "internalCertManagement": {"enable": False},
                    "webhook": {"port": port, "host": LOOPBACK, "certDir": str(certs)},
                    "metrics": {"bindAddress": "0"},
                    "health": {"healthProbeBindAddress": f"{LOOPBACK}:{health}"},
                    "clientConnection": {"qps": 50, "burst": 100},
                }
                args = [
                    bins["jobset"],
                    f"--config={config}",
                    f"--kubeconfig={kubeconfig}",
                    "--metrics-bind-address=0",
                    f"--health-probe-bind-address={LOOPBACK}:{health}",
                ]
            else:
                cfg = {
                    "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
                    "kind": "Configuration",
                    "leaderElection": {"leaderElect": False},
                    "certManagement": {"enable": False},
                    "webhook": {"port": port, "host": LOOPBACK},
                    "metrics": {"bindAddress": "0"},
                    "health": {"healthProbeBindAddress": f"{LOOPBACK}:{health}"},
                    "clientConnection": {"qps": 50, "burst": 100},
                }
                args = [bins["trainer"], f"--config={config}", f"--kubeconfig={kubeconfig}"]
            config.write_text(yaml.safe_dump(cfg, sort_keys=False))
            # controller-runtime reads the webhook certificates from $TMPDIR/k8s-webhook-server/serving-certs.
            env = dict(go_env(kind.upper(), "256MiB", gogc="40"), TMPDIR=str(cdir / kind))
            self.spawn(kind, args, env)

    def wait_components(self, timeout):
        import http.client

        def healthy(port):
            conn = http.client.HTTPConnection(LOOPBACK, port, timeout=2)
            try:
                conn.request("GET", "/readyz")
                return conn.getresponse().status == 200
            finally:
                conn.close()

        for kind, port in (("jobset", self.c["jobset_health_port"]), ("trainer", self.c["trainer_health_port"])):
            proc = next(p for p in self.fleet.procs if p.pid == self.c["processes"][kind]["pid"])
            wait_http_ok(lambda port=port: healthy(port), proc, f"{self.name}: {kind}", self.log_of(kind), timeout)
        for kind in ("kube-controller-manager", "kube-scheduler", "kwok"):
            proc = next(p for p in self.fleet.procs if p.pid == self.c["processes"][kind]["pid"])
            if proc.poll() is not None:
                raise FleetError(f"{self.name}: {kind} exited; log {self.log_of(kind)}:\n" + tail(self.log_of(kind)))

    # -- stage 4: the webhooks, once their servers answer
    def install_webhooks(self):
        for kind, port in (("jobset", self.c["jobset_webhook_port"]), ("trainer", self.c["trainer_webhook_port"])):
            for doc in webhook_configurations(kind, port, self.fleet.ca_data):
                plural = "mutatingwebhookconfigurations" if doc["kind"].startswith("Mutating") else "validatingwebhookconfigurations"
                self.rest.create(f"/apis/admissionregistration.k8s.io/v1/{plural}", doc)
        self.c["installed_seconds"] = round(time.monotonic() - self.fleet.t0, 2)

    def bring_up(self, timeout):
        """Stages 2 to 4 once the API server was started: wait for it, install, start and wait for the components,
        install the webhooks."""
        self.wait_apiserver(timeout)
        self.install()
        self.start_components()
        self.wait_components(timeout)
        self.install_webhooks()


class FleetStarter:
    def __init__(self, spec_path, d, timeout):
        self.t0 = time.monotonic()
        self.spec = load_spec(spec_path)
        self.bins = find_binaries(c["kubernetes_version"] for c in self.spec["clusters"])
        self.dir = Path(d).resolve()
        self.timeout = timeout
        self.procs = []
        self.crds = crd_documents()
        self.state = {
            "version": 2,
            "dir": str(self.dir),
            "spec": str(Path(spec_path).resolve()),
            "status": "starting",
            "components": dict(VERSIONS),
            "binaries": self.bins,
            "crds_installed": True,
            "restricted_namespace": self.spec["restricted_namespace"],
            "restricted_user": RESTRICTED_USER,
            "ca_file": str(self.dir / "pki" / "ca.crt"),
            "kubeconfig": str(self.dir / "kubeconfig"),
            "restricted_kubeconfig": str(self.dir / "restricted.kubeconfig"),
            "inventory": str(self.dir / "inventory.yml"),
            "clusters": {},
            "etcd": None,
            "agent": None,
            "started_at": time.time(),
        }

    def save(self):
        write_state(self.dir, self.state)

    def prepare_dir(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        old = read_state(self.dir)
        if old and any(is_ours(r) for _name, r in all_records(old)):
            raise FleetError(f"a fleet is already running in {self.dir}; stop it first")
        for sub in ("etcd", "clusters", "pki", "logs", "pod-logs"):
            if (self.dir / sub).exists():
                shutil.rmtree(self.dir / sub)
        (self.dir / "logs").mkdir()
        make_pki(self.dir / "pki")
        self.ca_data = base64.b64encode((self.dir / "pki" / "ca.crt").read_bytes()).decode()

    def start_etcd(self):
        self.etcd_port, peer = free_port(), free_port()
        args = [
            self.bins["etcd"],
            "--name",
            "gpufleet",
            "--data-dir",
            str(self.dir / "etcd"),
            "--listen-client-urls",
            f"http://{LOOPBACK}:{self.etcd_port}",
            "--advertise-client-urls",
            f"http://{LOOPBACK}:{self.etcd_port}",
            "--listen-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-advertise-peer-urls",
            f"http://{LOOPBACK}:{peer}",
            "--initial-cluster",
            f"gpufleet=http://{LOOPBACK}:{peer}",
            "--log-level",
            "warn",
            "--auto-compaction-mode",
            "periodic",
            "--auto-compaction-retention",
            "5m",
            "--quota-backend-bytes",
            str(4 * 1024**3),
            "--snapshot-count",
            "10000",
            # One member on loopback: no need to fsync every write (a test bed keeps nothing).
            "--unsafe-no-fsync",
        ]
        p, rec = spawn(args, self.dir / "logs" / "etcd.log", go_env("ETCD", "512MiB"))
        self.procs.append(p)
        rec.update(marker=str(self.dir), client_port=self.etcd_port, peer_port=peer)
        self.state["etcd"] = rec
        self.save()
        wait_http_ok(lambda: etcd_healthy(self.etcd_port), p, "etcd", self.dir / "logs" / "etcd.log", 30)

    def cluster_record(self, sc):
        name = sc["name"]
        cdir = self.dir / "clusters" / name
        cdir.mkdir(parents=True)
        port = free_port()
        rec = {
            k: sc[k]
            for k in (
                "name",
                "platform",
                "gpu_architecture",
                "node_platform",
                "node_gpu_architecture",
                "nodes_match_group",
                "trainjob_outcome",
                "nccl_log",
                "nccl_busbw",
                "nccl_transport",
                "nccl_replay",
                "dcgm_replay",
                "kernel_xids",
                "node_busbw",
                "node_nccl",
                "node_spread_percent",
                "node_naming",
                "kubernetes_version",
                "dra_beta_apis",
                "dcgm_failing_gpus",
                "dcgm_hung_nodes",
                "slow_gpus",
                "slow_nodes",
                "slow_rails",
                "degraded_nvlink",
                "unregistered_fabric",
                "bad_links",
                "inventory_vars",
            )
        }
        rec.update(
            {
                "node_instance_type": (sc["instance_type"] or fake_nodes.instance_type_for(sc["node_platform"], sc["node_gpu_architecture"])),
                "port": port,
                "server": f"https://{LOOPBACK}:{port}",
                "etcd_prefix": f"/gpufleet/{name}",
                "kwok_port": free_port(),
                "jobset_webhook_port": free_port(),
                "jobset_health_port": free_port(),
                "trainer_webhook_port": free_port(),
                "trainer_health_port": free_port(),
                "context": name,
                "admin_token": secrets.token_hex(20),
                "components_token": secrets.token_hex(20),
                "restricted_token": secrets.token_hex(20),
                "restricted_namespace": self.spec["restricted_namespace"],
                "dir": str(cdir),
                "processes": {},
            }
        )
        return rec

    def start_agent(self):
        """tests/fleet/agent.py: the stand-in for the workloads' output and NVIDIA's DRA driver."""
        ready = self.dir / "agent.ready"
        if ready.exists():
            ready.unlink()
        log_path = self.dir / "logs" / "agent.log"
        p, rec = spawn([sys.executable, str(HERE / "agent.py"), "--dir", str(self.dir)], log_path)
        self.procs.append(p)
        rec["marker"] = str(self.dir)
        self.state["agent"] = rec
        self.save()
        wait_http_ok(ready.exists, p, "agent", log_path, 60)

    def plan_clusters(self):
        """A record per cluster of the spec (ports, tokens, directory) in the state, and its starter."""
        starters = []
        for sc in self.spec["clusters"]:
            c = self.cluster_record(sc)
            self.state["clusters"][c["name"]] = c
            starters.append(ClusterStarter(self, c, sc))
        return starters

    def write_kubeconfigs(self):
        clusters = list(self.state["clusters"].values())
        write_kubeconfig(self.dir / "kubeconfig", clusters, self.ca_data, "admin_token")
        write_kubeconfig(self.dir / "restricted.kubeconfig", clusters, self.ca_data, "restricted_token", namespace=self.spec["restricted_namespace"])

    def bring_up_clusters(self, starters):
        """Every cluster's stages after its API server, in parallel; the first failure aborts the others."""
        with ThreadPoolExecutor(max_workers=len(starters)) as ex:
            futures = [ex.submit(s.bring_up, self.timeout) for s in starters]
            errors = []
            for f in futures:
                try:
                    f.result()
                except Exception as e:  # noqa: BLE001 - collected and re-raised below
                    errors.append(e)
                    abort.set()  # the fleet is lost anyway: let the other workers stop early
                except BaseException:
                    abort.set()
                    raise
            if errors:
                raise FleetError("; ".join(str(e) for e in errors))

    def write_inventory(self):
        Path(self.state["inventory"]).write_text(
            "# Generated by tests/fleet/fleet.py: hosts are clusters, groups are <platform>_<gpu>.\n"
            + yaml.safe_dump(build_inventory(self.state), sort_keys=False)
        )
        self.save()

    def mark_running(self):
        self.state["status"] = "running"
        self.state["startup_seconds"] = round(time.monotonic() - self.t0, 2)
        self.save()

    def stop_started(self):
        """After a failure: stop every process this start recorded or spawned, and record the failure."""
        log("start failed; stopping what was started")
        try:
            stop_records(all_records(self.state))
        finally:
            for p in self.procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
            self.state["status"] = "failed"
            self.save()

    def run(self):
        """The stages: directory and PKI, etcd, the cluster records and kubeconfigs, the API servers, each cluster's
        install and components (in parallel), the inventory, the agent, the state."""
        abort.clear()
        self.prepare_dir()
        try:
            self.start_etcd()
            starters = self.plan_clusters()
            self.write_kubeconfigs()
            for s in starters:
                s.start_apiserver()
            self.bring_up_clusters(starters)
            self.write_inventory()
            self.start_agent()
            self.mark_running()
            return self.state
        except BaseException:
            self.stop_started()
            raise


def start(spec_path, d, timeout=180.0):
    return FleetStarter(spec_path, d, timeout).run()


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
        if is_ours(c.get("processes", {}).get("kube-apiserver")):
            try:
                ready = Rest(c["server"], c["admin_token"], state["ca_file"]).request("GET", "/readyz", timeout=3)[0] == 200
            except OSError:
                ready = False
        out["clusters"][name] = {
            "server": c["server"],
            "group": f"{c['platform']}_{c['gpu_architecture']}",
            "kubernetes_version": c["kubernetes_version"],
            "ready": ready,
        }
    out["running"] = bool(out["processes"]) and all(p["running"] for p in out["processes"].values()) and all(c["ready"] for c in out["clusters"].values())
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
    s.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for each component")
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
            log(f"fleet of {len(st['clusters'])} clusters running in {st['startup_seconds']} s, " f"{total / 2**20:.0f} MiB RSS")
            print(f"kubeconfig: {st['kubeconfig']}")
            print(f"restricted kubeconfig: {st['restricted_kubeconfig']} (namespace {st['restricted_namespace']})")
            print(f"inventory: {st['inventory']}")
            for name, c in st["clusters"].items():
                print(
                    f"  {name}: {c['server']} Kubernetes {c['kubernetes_version']} group "
                    f"{c['platform']}_{c['gpu_architecture']}"
                    + ("" if c["nodes_match_group"] else f" (nodes look like {c['node_platform']}/{c['node_gpu_architecture']})")
                )
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
            print(f"fleet {st['dir']}: state {st['status']}; " f"{'all processes running and ready' if st['running'] else 'NOT fully running'}")
            for name, p in st["processes"].items():
                print(f"  {name}: pid {p['pid']} {'running' if p['running'] else 'gone'}")
            for name, c in st["clusters"].items():
                print(f"  {name}: {c['server']} {c['kubernetes_version']} {c['group']} " f"{'ready' if c['ready'] else 'not ready'}")
        return 0 if st["running"] else 1
    except FleetError as e:
        log(f"error: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
