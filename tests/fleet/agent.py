"""The test fleet's one home-made controller: the stand-in for what cannot run here.

Everything else in a fleet cluster is the real component (kube-apiserver, kube-controller-manager, kube-scheduler,
KWOK, JobSet, Kubeflow Trainer). Two things need GPUs and NICs, and this process plays them, in every cluster:

1. The GPU workload's output. For each pod of a TrainJob that the scheduler has bound to a KWOK node it writes the
   pod's log (nccl-tests output for the MPI launcher, sshd lines for MPI workers, torchrun/exec lines otherwise;
   tests/fleet/nccl_logs.py) as a CRI log file, registers it with KWOK (a `Logs` object, kwok.x-k8s.io), so that
   `pods/log` works through the API server, and annotates the pod with how its containers end
   (`gpufleet.test/exit-code`, `gpufleet.test/restarts`, `gpufleet.test/finish-after`), which the fleet's KWOK stages
   (tests/fleet/kwok-stages.yaml) carry out. The Job, JobSet and TrainJob conditions that follow are the real
   controllers' own.
2. NVIDIA's DRA driver for GPUs (its ComputeDomain controller and kubelet plugin). It publishes a DeviceClass
   `compute-domain-default-channel.nvidia.com` and, per KWOK GPU node, a ResourceSlice of IMEX channel devices
   (driver `compute-domain.nvidia.com`); for each ComputeDomain it creates the channel ResourceClaimTemplate the
   domain names and marks the domain Ready. The real kube-scheduler allocates the pods' claims from those slices.

How a TrainJob's pods end, in order: its annotation `gpufleet.test/outcome` (Complete | Failed | none), else the
cluster's `trainjob_outcome` in the fleet spec. Complete: every container exits 0 (MPI workers serve sshd until
JobSet removes them once the launcher is done). Failed: the MPI launcher (or,
without one, the last pod) exits 1 and the last worker is killed (137), crash-looping until their Jobs reach the
backoff limit, as a kubelet restarts an OnFailure container; the other pods keep running. none: everything keeps
running. `gpufleet.test/delay-seconds` ends them that long after the TrainJob was created (default 1 s). The
launcher's output: the TrainJob's `gpufleet.test/nccl-log` and `gpufleet.test/nccl-busbw`, else the cluster's
`nccl_log` and `nccl_busbw`; its NCCL transport lines: `gpufleet.test/nccl-transport`, else the cluster's
`nccl_transport` (expected | socket: a silent fall back to sockets). `gpufleet.test/nccl-replay`, else the
cluster's `nccl_replay`, makes the launcher print published output of the corpus instead (nccl_logs.REPLAYS: its
hosts rewritten to the workers' hostnames), whatever the other settings. A pod whose command runs `dcgmi diag` (the
catalogue's dcgm-diag workload, recognised by its TrainJob's trainer command) prints DCGM's diagnostic JSON
(tests/fleet/dcgm_logs.py): every GPU passes, except those the cluster's `dcgm_failing_gpus` lists for the pod's node
(a node of `dcgm_hung_nodes` prints what the workload prints when its timeout stops a hung dcgmi)
({<node name or <cluster>-gpu-<index>>: [<gpu index>, ...]}), which fail the diagnostic test; a node of
`dcgm_replay` ({<node>: <name>}) prints published dcgmi output instead (dcgm_logs.REPLAYS).
A slow NIC: an MPI job of 2 nodes or more with
a worker pod on one of the cluster's `slow_nodes` prints far-below output (nccl_logs.py: 25% of the good peak, below
every threshold), whatever the cluster's `nccl_log`; a job without a launcher (a node's own run) is not slowed.
The isolation's finer faults slow such a job the same way (Cluster.on_slow_node; the run's env is its TrainJob's
spec.trainer.env and the mpirun line's `-x NAME=VALUE`, run_env): `slow_rails` ({<node>: [<NIC name>]}, the names
the launcher's NIC list gives: `NET/IB : Using [0]mlx5_0:1/IB ...`, aws-ofi-nccl's `NET/OFI GUID of rdmap16s27: ...`
lines on EFA, nccl_logs.NICS) while the run may use that NIC (an exact `=` NCCL_IB_HCA list or an FI_EFA_IFACE list
without it excludes it; a run so limited lists only its NICs and carries their share of the pair's busbw, as real
NICs do: nccl_logs.launcher_log; a run with NVLink off, NCCL_P2P_DISABLE=1, carries what its NICs do, below the
2-node thresholds: nccl_logs.NETWORK_ONLY); `degraded_nvlink` ([<node>]) unless the run sets NCCL_P2P_DISABLE=1 (NVLink off); an
NVLink-only run (the isolation's, _lib/nccl/isolation.yaml: NCCL_MNNVL_ENABLE=1 and NCCL_NET=Socket, P2P on) whose
workers share one `nvidia.com/gpu.clique` prints its cross-node channels `via P2P/MNNVL`, no NET channel, and is
slowed by no network fault (slow node, rail or link), only by a degraded NVLink;
`bad_links` ([[<domain a>, <domain b>]], label values such as two `topology.k8s.aws/network-node-layer-3` ids) when
the labels of the job's worker nodes hold both.
`nccl_transport` (expected | socket: a silent fall back to sockets). An nccl-tests program run without mpirun (the
node stage's exec pods, `all_reduce_perf -g <gpus>`) prints single-node output per pod at the GPU's intra-node level,
or the spec's `node_busbw: {<node name>: <GB/s>}` for that node; the cluster's `nccl_log` and `nccl_busbw` describe
the multi-node run and do not apply to it; `node_spread_percent` spreads the other nodes' figure that many percent
either side, by node name (a real fleet's healthy nodes differ by a few percent; fleet.py's `node_driver` gives a
node another driver version in its GPU feature discovery labels). A Failed outcome cuts the last pod's output short.
A pod running the gpu-burn workload's script (the gpu stage, recognised by its trainer command) prints one line per
GPU (tests/fleet/gpu_logs.py): every GPU at its architecture's published figures, except those the cluster's
`slow_gpus` ({<node name or <cluster>-gpu-<index>>: [<gpu index>, ...]}) lists for the pod's node, which multiply
at 60 % of it.

    python agent.py --dir FLEET_DIR      (fleet.py starts and stops it; it writes FLEET_DIR/agent.ready)
"""

import argparse
import json
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import dcgm_logs
import fleet_nodes
import gpu_logs
import nccl_logs
from kubernetes import config, watch
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

TRAINER = "trainer.kubeflow.org/v1alpha1"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
FAKE_NODE = "gpufleet.test/fake-node"
OUTCOME, DELAY = "gpufleet.test/outcome", "gpufleet.test/delay-seconds"
NCCL_LOG, NCCL_BUSBW = "gpufleet.test/nccl-log", "gpufleet.test/nccl-busbw"
NCCL_TRANSPORT = "gpufleet.test/nccl-transport"
NCCL_REPLAY = "gpufleet.test/nccl-replay"
EXIT_CODE, RESTARTS, FINISH_AFTER = "gpufleet.test/exit-code", "gpufleet.test/restarts", "gpufleet.test/finish-after"
LOGGED = "gpufleet.test/logged"
DRA_DRIVER = "compute-domain.nvidia.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
CHANNELS_PER_NODE = 8

stop_event = threading.Event()


def log(msg):
    print(f"{datetime.now().strftime('%H:%M:%S')} [agent] {msg}", file=sys.stderr, flush=True)


def run_env(tj):
    """The env the TrainJob's ranks get: spec.trainer.env, then the mpirun line's `-x NAME=VALUE` (what mpirun forwards)."""
    trainer = (tj.get("spec") or {}).get("trainer") or {}
    env = {e.get("name"): str(e.get("value")) for e in trainer.get("env") or [] if isinstance(e, dict)}
    words = nccl_logs.trainer_words(tj)
    env.update(words[i + 1].split("=", 1) for i in range(len(words) - 1) if words[i] == "-x" and "=" in words[i + 1])
    return env


def cri_lines(text, stamp):
    """TEXT as a CRI log file (what a container runtime writes and KWOK's server reads): `<time> stdout F <line>`."""
    return "".join(f"{stamp} stdout F {line}\n" for line in text.splitlines())


class Cluster:
    def __init__(self, name, kubeconfig, record, log_root):
        self.name = name
        self.record = record
        self.platform = record.get("node_platform") or record["platform"]
        self.gpu = record.get("node_gpu_architecture") or record["gpu_architecture"]
        self.default_outcome = record.get("trainjob_outcome") or "Complete"
        self.nccl_log = record.get("nccl_log") or ("truncated" if self.default_outcome == "Failed" else "good")
        self.nccl_busbw = record.get("nccl_busbw")
        self.nccl_transport = record.get("nccl_transport") or "expected"
        self.nccl_replay = record.get("nccl_replay") or ""
        self.dcgm_failing_gpus = dict(record.get("dcgm_failing_gpus") or {})
        self.dcgm_hung_nodes = list(record.get("dcgm_hung_nodes") or [])
        self.dcgm_replay = dict(record.get("dcgm_replay") or {})
        # {node: [[gpu, xid(, cause)]]}: kernel Xid lines a dcgm-diag pod with kernel_log on prints for that node.
        self.kernel_xids = dict(record.get("kernel_xids") or {})
        # {node: [GPU index, ...]}: the GPUs a gpu-burn pod on that node reports slow (the gpu stage).
        self.slow_gpus = dict(record.get("slow_gpus") or {})
        self.slow_nodes = set(record.get("slow_nodes") or [])
        # The isolation's finer faults: {node: [NIC]} slow rails, nodes with a degraded NVLink, [[domain, domain]] links.
        self.slow_rails = dict(record.get("slow_rails") or {})
        self.degraded_nvlink = set(record.get("degraded_nvlink") or [])
        self.bad_links = [set(pair) for pair in record.get("bad_links") or []]
        # {node name: GB/s}: that node's own all_reduce (the node stage's single-node output) reaches only this.
        self.node_busbw = dict(record.get("node_busbw") or {})
        # {node name: NCCL version}: the version that node's own pod prints (a skew the drift check names).
        self.node_nccl = dict(record.get("node_nccl") or {})
        # Healthy nodes' own all_reduce spread this many percent either side of the GPU's figure (by node name).
        self.node_spread = float(record.get("node_spread_percent") or 0) / 100.0
        self.log_root = Path(log_root) / name
        self.client = DynamicClient(config.new_client_from_config(config_file=kubeconfig, context=name))
        self.ready = threading.Event()
        self.handled = set()
        # A failed MPI job's killed worker ends only once its launcher runs (mpirun reports the rank it lost): ended
        # first, its Job would fail the JobSet before the launcher's pod exists, and no log would say what happened.
        self.launcher_seen = set()
        self.pending_kill = {}

    def res(self, api_version, kind):
        return self.client.resources.get(api_version=api_version, kind=kind)

    # ------------------------------------------------------------------------------------------ NVIDIA DRA driver
    def publish_devices(self):
        """The DeviceClass of IMEX channels and one ResourceSlice of channels per KWOK node."""
        classes = self.res("resource.k8s.io/v1", "DeviceClass")
        expression = f"device.driver == '{DRA_DRIVER}' && device.attributes['{DRA_DRIVER}'].type == 'channel'"
        body = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": CHANNEL_CLASS, "labels": {"gpufleet.test/stand-in": "nvidia-dra-driver-gpu"}},
            "spec": {"selectors": [{"cel": {"expression": expression}}]},
        }
        self.create(classes, body)
        slices = self.res("resource.k8s.io/v1", "ResourceSlice")
        nodes = self.res("v1", "Node").get(label_selector=f"{FAKE_NODE}=true,nvidia.com/gpu.present=true").to_dict()["items"]
        for node in nodes:
            name = node["metadata"]["name"]
            self.create(
                slices,
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": f"{name}-{DRA_DRIVER}-channels", "labels": {"gpufleet.test/stand-in": "nvidia-dra-driver-gpu"}},
                    "spec": {
                        "driver": DRA_DRIVER,
                        "nodeName": name,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": [
                            {"name": f"channel-{i}", "attributes": {"type": {"string": "channel"}, "id": {"int": i}}} for i in range(CHANNELS_PER_NODE)
                        ],
                    },
                },
            )

    def create(self, resource, body, namespace=None):
        try:
            resource.create(body=body, namespace=namespace)
        except ApiException as e:
            if e.status != 409:
                raise

    def compute_domain(self, cd):
        """What NVIDIA's ComputeDomain controller does for a new domain: its channel ResourceClaimTemplate."""
        meta, spec = cd["metadata"], cd.get("spec") or {}
        rct_name = ((spec.get("channel") or {}).get("resourceClaimTemplate") or {}).get("name")
        if not rct_name or meta.get("deletionTimestamp"):
            return
        self.create(
            self.res("resource.k8s.io/v1", "ResourceClaimTemplate"),
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": {
                    "name": rct_name,
                    "namespace": meta["namespace"],
                    "labels": {"resource.nvidia.com/computeDomain": meta["uid"]},
                    "ownerReferences": [
                        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "name": meta["name"], "uid": meta["uid"], "controller": True}
                    ],
                },
                "spec": {
                    "spec": {
                        "devices": {
                            "requests": [{"name": "channel", "exactly": {"deviceClassName": CHANNEL_CLASS, "allocationMode": "ExactCount", "count": 1}}],
                            "config": [
                                {
                                    "requests": ["channel"],
                                    "opaque": {
                                        "driver": DRA_DRIVER,
                                        "parameters": {
                                            "apiVersion": "resource.nvidia.com/v1beta1",
                                            "kind": "ComputeDomainChannelConfig",
                                            "domainID": meta["uid"],
                                            "allocationMode": (spec.get("channel") or {}).get("allocationMode") or "Single",
                                        },
                                    },
                                }
                            ],
                        }
                    }
                },
            },
            namespace=meta["namespace"],
        )
        if ((cd.get("status") or {}).get("status")) != "Ready":
            try:
                self.res("resource.nvidia.com/v1beta1", "ComputeDomain").status.patch(
                    body={"status": {"status": "Ready"}}, name=meta["name"], namespace=meta["namespace"], content_type="application/merge-patch+json"
                )
            except ApiException as e:
                if e.status != 404:
                    raise

    # ------------------------------------------------------------------------------------------ workload output
    def trainjob(self, namespace, name):
        try:
            return self.res(TRAINER, "TrainJob").get(name=name, namespace=namespace).to_dict()
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def jobset_shape(self, namespace, name):
        """{replicatedJob name: parallelism} of the TrainJob's JobSet (what Trainer made of runtime + TrainJob)."""
        try:
            js = self.res("jobset.x-k8s.io/v1alpha2", "JobSet").get(name=name, namespace=namespace).to_dict()
        except ApiException:
            return {}
        return {
            rj["name"]: int(((rj.get("template") or {}).get("spec") or {}).get("parallelism") or 1) for rj in (js.get("spec") or {}).get("replicatedJobs") or []
        }

    def decide(self, tj):
        ann = (tj.get("metadata") or {}).get("annotations") or {}
        outcome = ann.get(OUTCOME, self.default_outcome)
        choice = ann.get(NCCL_LOG) or self.nccl_log
        if choice not in nccl_logs.RESULTS:
            choice = "good"
        busbw = ann.get(NCCL_BUSBW, self.nccl_busbw)
        try:
            busbw = float(busbw) if busbw not in (None, "") else None
        except ValueError:
            busbw = None
        try:
            delay = float(ann.get(DELAY, 1))
        except ValueError:
            delay = 1.0
        created = tj["metadata"].get("creationTimestamp")
        try:
            t = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
        except (TypeError, ValueError):
            t = time.time()
        return outcome, choice, busbw, max(0.5, t + delay - time.time())

    def on_slow_node(self, tj, shape):
        """Why the TrainJob's MPI run is slow: the faults of the nodes its workers run on (none for a job without a
        launcher or of one node). The launcher starts once the workers are Ready (the runtime's dependsOn), so they
        are bound by then. A slow node is slow in any run; a degraded NVLink unless the run's env turns NVLink off
        (NCCL_P2P_DISABLE=1); a slow rail while the run may use that NIC (nccl_logs.nics_used: NCCL_IB_HCA's exact "="
        list, FI_EFA_IFACE's list); a bad link when the workers' topology labels hold both of its domains."""
        faults = self.slow_nodes or self.slow_rails or self.degraded_nvlink or self.bad_links
        if not faults or "launcher" not in shape or shape.get("node", 1) < 2:
            return []
        nodes = self.worker_nodes(tj)
        env = run_env(tj)
        why = [f"{n} (NVLink)" for n in nodes if n in self.degraded_nvlink] if env.get("NCCL_P2P_DISABLE") != "1" else []
        if self.stays_on_nvlink(tj, shape, nodes):
            return why  # no traffic on the network: its faults do not apply
        why += [n for n in nodes if n in self.slow_nodes]
        # A slow NIC slows the run while the run may use it: every NIC unless the transport's NIC variable
        # (NCCL_IB_HCA's exact "=" list, FI_EFA_IFACE's list) leaves it out.
        allowed = nccl_logs.nics_used(env, self.platform, self.gpu)
        restricted = allowed != nccl_logs.nics_used({}, self.platform, self.gpu)
        for n in nodes:
            nics = [nic for nic in self.slow_rails.get(n) or [] if not restricted or nic in allowed]
            why += [f"{n} (NIC {nic})" for nic in nics]
        if self.bad_links:
            values = set()
            for n in nodes:
                try:
                    values.update((self.res("v1", "Node").get(name=n).to_dict()["metadata"].get("labels") or {}).values())
                except ApiException:
                    pass
            why += [f"link {' - '.join(sorted(link))}" for link in self.bad_links if link <= values]
        return why

    def worker_nodes(self, tj):
        meta = tj["metadata"]
        pods = self.res("v1", "Pod").get(namespace=meta["namespace"], label_selector=f"{JOBSET_NAME}={meta['name']},{REPLICATED_JOB}=node").to_dict()
        return sorted(set(p["spec"].get("nodeName") for p in pods["items"]) - {None})

    def stays_on_nvlink(self, tj, shape, nodes=None):
        """An NVLink-only MPI run (NCCL_MNNVL_ENABLE=1, NCCL_NET=Socket, P2P on) whose worker nodes share one
        nvidia.com/gpu.clique: NCCL keeps its traffic on the multi-node NVLink domain."""
        env = run_env(tj)
        if "launcher" not in shape or env.get("NCCL_MNNVL_ENABLE") != "1" or env.get("NCCL_NET") != "Socket" or env.get("NCCL_P2P_DISABLE") == "1":
            return False
        cliques = set()
        for n in nodes if nodes is not None else self.worker_nodes(tj):
            try:
                cliques.add((self.res("v1", "Node").get(name=n).to_dict()["metadata"].get("labels") or {}).get("nvidia.com/gpu.clique"))
            except ApiException:
                cliques.add(None)
        return len(cliques) == 1 and None not in cliques

    def pod_text(self, tj, pod, shape, choice, busbw, finished, outcome):
        meta = tj["metadata"]
        trainer = (tj.get("spec") or {}).get("trainer") or {}
        role = pod["metadata"]["labels"].get(REPLICATED_JOB, "node")
        index = int(pod["metadata"]["labels"].get(COMPLETION_INDEX, "0"))
        workers = shape.get("node", 1)
        hosts = [f"{meta['name']}-node-0-{i}" for i in range(workers)]
        words = nccl_logs.trainer_words(tj)
        gpus = int(trainer.get("numProcPerNode") or 0) or nccl_logs.GPUS_PER_NODE.get(self.gpu, 8)
        env = {e.get("name"): str(e.get("value")) for e in trainer.get("env") or [] if isinstance(e, dict)}
        mnnvl = env.get("NCCL_MNNVL_ENABLE") == "1" or "NCCL_MNNVL_ENABLE=1" in words
        cmd = nccl_logs.nccl_command(tj)
        if role == "launcher":
            replay = (meta.get("annotations") or {}).get(NCCL_REPLAY) or self.nccl_replay
            if replay:
                try:
                    return nccl_logs.replay_log(replay, hosts, self.platform, self.gpu, finished=finished)
                except ValueError as e:
                    log(f"{self.name}: {meta['name']}: {e}; printing the modelled output instead")
            transport = (meta.get("annotations") or {}).get(NCCL_TRANSPORT) or self.nccl_transport
            if transport not in nccl_logs.TRANSPORTS:
                transport = "expected"
            slow = self.on_slow_node(tj, shape)
            if slow:
                log(f"{self.name}: {meta['name']}: slow: {', '.join(slow)}: far-below output")
                choice, busbw = "far-below", None
            if self.stays_on_nvlink(tj, shape):
                transport = "nvlink"
            # A run its NIC variable limits to some NICs (the isolation's one-NIC runs) prints and carries only those.
            allowed = nccl_logs.nics_used(run_env(tj), self.platform, self.gpu)
            nics = allowed if allowed != nccl_logs.nics_used({}, self.platform, self.gpu) else None
            return nccl_logs.launcher_log(
                choice,
                hosts,
                gpus,
                self.platform,
                self.gpu,
                cmd,
                busbw=busbw,
                seed=meta.get("uid", ""),
                finished=finished,
                mnnvl=mnnvl,
                transport=transport,
                nics=nics,
                network_only=run_env(tj).get("NCCL_P2P_DISABLE") == "1",
            )
        if "launcher" in shape:
            return nccl_logs.worker_log(hosts[index] if index < len(hosts) else pod["spec"].get("hostname", ""), index)
        level = dcgm_logs.level_of(words)
        if level is not None:
            node = pod["spec"].get("nodeName", "")
            seconds = dcgm_logs.timeout_of(words)
            if seconds is not None and self.hung(node):
                return dcgm_logs.hung_log(pod["spec"].get("hostname", "") or pod["metadata"]["name"], gpus, level, seconds)
            replay = self.by_node(self.dcgm_replay, node)
            if replay:
                return dcgm_logs.replay_log(replay, pod["spec"].get("hostname", "") or pod["metadata"]["name"], gpus, level)
            diag = dcgm_logs.diag_log(pod["spec"].get("hostname", "") or pod["metadata"]["name"], gpus, level, self.failing_gpus(node), self.gpu)
            if any("/dev/kmsg" in word for word in words):
                # the workload's kernel_log: the node's GPU list and the run's kernel Xid lines, before its exit line
                head, exit_line = diag.rstrip("\n").rsplit("\n", 1)
                diag = head + "\n" + dcgm_logs.kernel_section(gpus, self.by_node(self.kernel_xids, node) or []) + exit_line + "\n"
            return diag
        if gpu_logs.is_gpu_burn(words):
            node = pod["spec"].get("nodeName", "")
            host = pod["spec"].get("hostname", "") or pod["metadata"]["name"]
            return gpu_logs.gpu_log(host, node, gpus, self.gpu, self.by_node(self.slow_gpus, node) or [])
        torch = any("torchrun" in w for w in words) or (trainer.get("numProcPerNode") and not cmd)
        if cmd and not torch:
            # An nccl-tests program without mpirun (the node stage): each pod measures its own node alone.
            node = pod["spec"].get("nodeName") or ""
            busbw = self.node_busbw.get(node)
            killed = outcome == "Failed" and index == workers - 1
            return nccl_logs.launcher_log(
                "truncated" if killed else "good",
                [pod["spec"].get("hostname") or pod["metadata"]["name"]],
                cmd["gpus"] if cmd["gpus"] > 1 else gpus,
                self.platform,
                self.gpu,
                cmd,
                busbw=float(busbw) if busbw is not None else round(nccl_logs.intra_node_busbw(self.gpu) * nccl_logs._jitter(node, self.node_spread), 1),
                seed="%s/%s" % (meta.get("uid", ""), node),
                finished=finished,
                nccl_version=self.node_nccl.get(node),
            )
        return nccl_logs.plain_log(
            "torch" if torch else "exec", pod["spec"].get("hostname", ""), index, gpus, workers * gpus, self.gpu, finished=finished and outcome == "Complete"
        )

    def hung(self, node):
        """Whether NODE is one of the spec's dcgm_hung_nodes (by its name or `<cluster>-gpu-<i>`)."""
        if node in self.dcgm_hung_nodes:
            return True
        return any(fleet_nodes._node_name(self.platform, self.name, i) == node for i in range(256) if f"{self.name}-gpu-{i}" in self.dcgm_hung_nodes)

    def by_node(self, mapping, node):
        """MAPPING's value for NODE: keyed by the node's name, or by `<cluster>-gpu-<i>` (its index in the cluster)."""
        if node in mapping:
            return mapping[node]
        for i in range(256):
            if fleet_nodes._node_name(self.platform, self.name, i) == node:
                return mapping.get(f"{self.name}-gpu-{i}")
        return None

    def failing_gpus(self, node):
        """The GPUs of NODE the spec's dcgm_failing_gpus fails: keyed by the node's name, or by `<cluster>-gpu-<i>`
        (its index in the cluster, whatever the platform calls its nodes)."""
        if node in self.dcgm_failing_gpus:
            return self.dcgm_failing_gpus[node]
        for i in range(256):
            if fleet_nodes._node_name(self.platform, self.name, i) == node:
                return self.dcgm_failing_gpus.get(f"{self.name}-gpu-{i}") or []
        return []

    def ending(self, pod, shape, outcome):
        """(exit code, restarts) for the pod, or None when it keeps running."""
        role = pod["metadata"]["labels"].get(REPLICATED_JOB, "node")
        index = int(pod["metadata"]["labels"].get(COMPLETION_INDEX, "0"))
        if outcome == "Complete":
            # MPI workers serve sshd until JobSet ends them once the launcher is done.
            return None if role == "node" and "launcher" in shape else 0
        if outcome != "Failed":
            return None
        if role == "launcher":
            return 1
        last = shape.get("node", 1) - 1
        if role == "node" and index == last:
            return 137 if "launcher" in shape else 1
        return None

    def backoff_limit(self, pod):
        owner = next((o for o in pod["metadata"].get("ownerReferences") or [] if o.get("kind") == "Job"), None)
        if owner:
            try:
                job = self.res("batch/v1", "Job").get(name=owner["name"], namespace=pod["metadata"]["namespace"])
                return int(job.to_dict()["spec"].get("backoffLimit", 6))
            except ApiException:
                pass
        return 6

    def pod(self, pod):
        meta, spec = pod["metadata"], pod.get("spec") or {}
        if meta.get("deletionTimestamp") or not spec.get("nodeName") or meta["uid"] in self.handled:
            return
        if (meta.get("annotations") or {}).get(LOGGED):
            self.handled.add(meta["uid"])
            return
        tj = self.trainjob(meta["namespace"], meta["labels"][JOBSET_NAME])
        if tj is None:
            return
        shape = self.jobset_shape(meta["namespace"], tj["metadata"]["name"])
        outcome, choice, busbw, after = self.decide(tj)
        code = self.ending(pod, shape, outcome)
        self.write_log(tj, pod, shape, choice, busbw, outcome)
        ann = {LOGGED: "true"}
        ended = None
        if code is not None:
            ended = {EXIT_CODE: str(code), FINISH_AFTER: f"{after:.1f}s", RESTARTS: str(max(1, self.backoff_limit(pod)))}
        key = (meta["namespace"], meta["labels"][JOBSET_NAME])
        role = meta["labels"].get(REPLICATED_JOB, "node")
        if ended and outcome == "Failed" and "launcher" in shape and role == "node" and key not in self.launcher_seen:
            self.pending_kill[key] = (pod, ended)
            ended = None
        if ended:
            ann.update(ended)
        self.annotate(pod, ann)
        self.handled.add(meta["uid"])
        if role == "launcher":
            self.launcher_seen.add(key)
            if key in self.pending_kill:
                worker, worker_ended = self.pending_kill.pop(key)
                self.annotate(worker, worker_ended)

    def write_log(self, tj, pod, shape, choice, busbw, outcome):
        meta = pod["metadata"]
        finished = outcome in ("Complete", "Failed")
        text = self.pod_text(tj, pod, shape, choice, busbw, finished, outcome)
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        pod_dir = self.log_root / meta["namespace"] / meta["name"]
        pod_dir.mkdir(parents=True, exist_ok=True)
        logs = []
        for c in pod["spec"].get("initContainers") or []:
            path = pod_dir / f"{c['name']}.log"
            path.write_text("")
            logs.append({"containers": [c["name"]], "logsFile": str(path)})
        for c in pod["spec"]["containers"]:
            path = pod_dir / f"{c['name']}.log"
            tmp = pod_dir / f".{c['name']}.log.tmp"
            tmp.write_text(cri_lines(text, stamp))
            tmp.replace(path)
            logs.append({"containers": [c["name"]], "logsFile": str(path)})
        self.create(
            self.res("kwok.x-k8s.io/v1alpha1", "Logs"),
            {
                "apiVersion": "kwok.x-k8s.io/v1alpha1",
                "kind": "Logs",
                # Owned by the TrainJob, not the pod: a pod removed in the foreground (JobSet ending its Jobs) would
                # take its Logs with it while it still terminates and its log can be read.
                "metadata": {
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "ownerReferences": [{"apiVersion": TRAINER, "kind": "TrainJob", "name": tj["metadata"]["name"], "uid": tj["metadata"]["uid"]}],
                },
                "spec": {"logs": logs},
            },
            namespace=meta["namespace"],
        )

    def annotate(self, pod, annotations):
        try:
            self.res("v1", "Pod").patch(
                body={"metadata": {"annotations": annotations}},
                name=pod["metadata"]["name"],
                namespace=pod["metadata"]["namespace"],
                content_type="application/merge-patch+json",
            )
        except ApiException as e:
            if e.status != 404:
                raise

    # ------------------------------------------------------------------------------------------ watches
    def watch_forever(self, api_version, kind, handler, **kw):
        while not stop_event.is_set():
            try:
                resource = self.res(api_version, kind)
                w = watch.Watch()
                for ev in resource.watch(timeout=30, watcher=w, **kw):
                    if stop_event.is_set():
                        w.stop()
                        break
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        try:
                            handler(ev["raw_object"])
                        except Exception as e:  # noqa: BLE001 - one object must not stop the watch
                            meta = ev["raw_object"].get("metadata") or {}
                            detail = getattr(e, "body", None) or getattr(e, "summary", lambda: None)() or repr(e)
                            log(f"{self.name}: {kind} {meta.get('namespace')}/{meta.get('name')}: {detail}")
            except Exception as e:  # noqa: BLE001 - keep running whatever a cluster does
                if not stop_event.is_set():
                    log(f"{self.name}: {kind} watch: {e!r}")
                    stop_event.wait(1)

    def run(self):
        while not stop_event.is_set():
            try:
                self.publish_devices()
                break
            except Exception as e:  # noqa: BLE001 - the API server may still be settling
                log(f"{self.name}: publishing DRA devices: {e!r}")
                stop_event.wait(1)
        threads = [
            threading.Thread(target=self.watch_forever, daemon=True, name=f"{self.name}/{kind}", args=args, kwargs=kw)
            for kind, args, kw in (
                ("pods", ("v1", "Pod", self.pod), {"label_selector": JOBSET_NAME}),
                ("computedomains", ("resource.nvidia.com/v1beta1", "ComputeDomain", self.compute_domain), {}),
            )
        ]
        for t in threads:
            t.start()
        self.ready.set()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args(argv)
    d = Path(a.dir)
    state = json.loads((d / "state.json").read_text())
    signal.signal(signal.SIGTERM, lambda *_: stop_event.set())
    clusters = [Cluster(name, state["kubeconfig"], c, d / "pod-logs") for name, c in state["clusters"].items()]
    for c in clusters:
        threading.Thread(target=c.run, name=c.name, daemon=True).start()
    for c in clusters:
        while not c.ready.wait(0.2):
            if stop_event.is_set():
                return 0
    (d / "agent.ready").write_text(str(time.time()))
    log(f"standing in for workloads and NVIDIA's DRA driver in {len(clusters)} clusters")
    while not stop_event.wait(1):
        pass
    log("stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
