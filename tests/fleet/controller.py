"""Test controller: plays Kubeflow Trainer's and JobSet's part in every cluster of a test fleet.

There is no kubelet, scheduler or Trainer/JobSet controller in the test fleet, so nothing runs. This controller
writes what they would: for each TrainJob it creates the pods its JobSet would have (one per node of each
replicatedJob of the referenced runtime: the MPI launcher and workers, or the torch/exec nodes), bound to the fake
nodes, Running; then it writes their logs (nccl_logs.py) where the fake kubelet serves them, sets their final
phase and container states, and marks the TrainJob Complete or Failed through the status subresource.

Pods carry the labels JobSet and the Job controller set (`jobset.sigs.k8s.io/jobset-name`,
`jobset.sigs.k8s.io/replicatedjob-name`, `jobset.sigs.k8s.io/job-index`, `batch.kubernetes.io/job-name`,
`batch.kubernetes.io/job-completion-index`, ...), the pod template's labels from the runtime, the run's labels of
the TrainJob (`gpufleet.burnin/*`, `app.kubernetes.io/managed-by`) and `gpufleet.test/fake-pod: "true"`; JobSet's
hostname (`<trainjob>-<replicatedJob>-<job index>-<pod index>`) and subdomain; an owner reference to the TrainJob,
so deleting it removes them (garbage collector). Workers go to the fake nodes in turn, the MPI launcher to the last
one. A pod being deleted is removed at once, as a kubelet does once its containers stopped.

Final states: Complete - every pod Succeeded (exit 0). Failed - the launcher (or, without one, the last pod) and the
last worker Failed (exit 1 and exit 137, killed), the others still Running. none - everything stays Running.
The launcher's log is nccl-tests output per the cluster's `nccl_log` (good, below-threshold, far-below, truncated,
none; default truncated for Failed TrainJobs, else good) and `nccl_busbw`, or the TrainJob's annotations
`gpufleet.test/nccl-log` and `gpufleet.test/nccl-busbw`; workers print sshd's lines.

The outcome of a TrainJob is, in order:
  1. its annotation `gpufleet.test/outcome`: Complete | Failed | none;
  2. the cluster's `trainjob_outcome` from the fleet spec (default Complete).
`none` leaves the TrainJob running for ever. Optional annotations:
  `gpufleet.test/delay-seconds`  wait this long after creation before setting the outcome (default 0);
  `gpufleet.test/reason`, `gpufleet.test/message`  override the condition's reason and message.
Suspended TrainJobs (spec.suspend: true) are left alone.

Usage (fleet.py starts and stops it; by hand):
    python controller.py --dir FLEET_DIR
It writes FLEET_DIR/controller.ready once it watches every cluster, and logs to stderr.
"""

import argparse
import hashlib
import heapq
import json
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import nccl_logs
from kubernetes import config, watch
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

GROUP_VERSION = "trainer.kubeflow.org/v1alpha1"
OUTCOME = "gpufleet.test/outcome"
DELAY = "gpufleet.test/delay-seconds"
REASON = "gpufleet.test/reason"
MESSAGE = "gpufleet.test/message"
NCCL_LOG = "gpufleet.test/nccl-log"
NCCL_BUSBW = "gpufleet.test/nccl-busbw"
FAKE_POD = "gpufleet.test/fake-pod"
FAKE_NODE = "gpufleet.test/fake-node"
JOBSET = "jobset.sigs.k8s.io/"
RUN_LABEL_PREFIXES = ("gpufleet.burnin/", "app.kubernetes.io/managed-by")
TERMINAL = ("Complete", "Failed")
# Reasons and messages as JobSet reports them; Trainer copies the JobSet's terminal condition.
DEFAULTS = {
    "Complete": ("JobSetCompleted", "jobset completed successfully (gpufleet test controller)"),
    "Failed": ("JobSetFailed", "jobset failed due to one or more job failures (gpufleet test controller)"),
}

stop_event = threading.Event()


def log(msg):
    print(f"{datetime.now().strftime('%H:%M:%S')} [controller] {msg}", file=sys.stderr, flush=True)


def now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def decide(obj, default_outcome):
    """Return (outcome, delay, reason, message) or None when nothing is to be done."""
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return None
    if (obj.get("spec") or {}).get("suspend"):
        return None
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") in TERMINAL and c.get("status") == "True":
            return None
    ann = meta.get("annotations") or {}
    outcome = ann.get(OUTCOME, default_outcome)
    if outcome not in TERMINAL:
        return None
    try:
        delay = float(ann.get(DELAY, 0))
    except ValueError:
        delay = 0.0
    reason, message = DEFAULTS[outcome]
    return outcome, delay, ann.get(REASON, reason), ann.get(MESSAGE, message)


def _hash(text, n=5):
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    out = ""
    for dummy in range(n):
        h, r = divmod(h, len(alphabet))
        out += alphabet[r]
    return out


class Cluster:
    def __init__(self, name, kubeconfig, default_outcome, scheduler, record=None, log_root=None):
        record = record or {}
        self.name = name
        self.kubeconfig = kubeconfig
        self.default_outcome = default_outcome
        self.scheduler = scheduler
        self.platform = record.get("node_platform") or record.get("platform") or ""
        self.gpu = record.get("node_gpu_architecture") or record.get("gpu_architecture") or ""
        self.nccl_log = record.get("nccl_log") or ("truncated" if default_outcome == "Failed" else "good")
        self.nccl_busbw = record.get("nccl_busbw")
        self.log_root = Path(log_root) / name if log_root else None
        self.api_client = config.new_client_from_config(config_file=kubeconfig, context=name)
        self.ready = threading.Event()
        self._dyn = None
        self._started = set()
        self._lock = threading.Lock()

    def resource(self, kind, api_version=GROUP_VERSION):
        if self._dyn is None:
            self._dyn = DynamicClient(self.api_client)
        return self._dyn.resources.get(api_version=api_version, kind=kind)

    # ------------------------------------------------------------------------------------------ pods

    def runtime_of(self, obj):
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        kind = ref.get("kind") or "ClusterTrainingRuntime"
        try:
            return self.resource(kind).get(name=ref.get("name"), namespace=obj["metadata"]["namespace"]
                                           if kind == "TrainingRuntime" else None).to_dict()
        except (ApiException, ResourceNotFoundError, KeyError, TypeError):
            return None

    def fake_nodes(self):
        items = self.resource("Node", "v1").get(label_selector=f"{FAKE_NODE}=true").to_dict().get("items", [])
        return sorted(n["metadata"]["name"] for n in items)

    def plan_pods(self, obj):
        """The pods the TrainJob's JobSet would have: [(pod, role, index)] in rank order (workers first)."""
        meta = obj["metadata"]
        spec = obj.get("spec") or {}
        trainer = spec.get("trainer") or {}
        runtime = self.runtime_of(obj) or {}
        rt_spec = runtime.get("spec") or {}
        num_nodes = int(trainer.get("numNodes") or (rt_spec.get("mlPolicy") or {}).get("numNodes") or 1)
        jobs = ((rt_spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or [{"name": "node"}]
        nodes = self.fake_nodes()
        run_labels = {k: v for k, v in (meta.get("labels") or {}).items() if k.startswith(RUN_LABEL_PREFIXES)}
        planned = []
        global_index = 0
        for rj in jobs:
            role = rj.get("name") or "node"
            job_tpl = rj.get("template") or {}
            pod_tpl = ((job_tpl.get("spec") or {}).get("template")) or {}
            pod_spec = pod_tpl.get("spec") or {}
            count = num_nodes if role == "node" else int((job_tpl.get("spec") or {}).get("parallelism") or 1)
            for job_index in range(int(rj.get("replicas") or 1)):
                job_name = f"{meta['name']}-{role}-{job_index}"
                for index in range(count):
                    hostname = f"{job_name}-{index}"[:63].rstrip("-")
                    name = f"{job_name}-{index}-{_hash(meta.get('uid', '') + hostname)}"
                    labels = dict((pod_tpl.get("metadata") or {}).get("labels") or {})
                    labels.update(run_labels)
                    labels.update({
                        JOBSET + "jobset-name": meta["name"],
                        JOBSET + "jobset-uid": meta.get("uid", ""),
                        JOBSET + "replicatedjob-name": role,
                        JOBSET + "replicatedjob-replicas": str(rj.get("replicas") or 1),
                        JOBSET + "job-index": str(job_index),
                        JOBSET + "job-global-index": str(global_index),
                        JOBSET + "restart-attempt": "0",
                        "batch.kubernetes.io/job-name": job_name[:63],
                        "job-name": job_name[:63],
                        "batch.kubernetes.io/job-completion-index": str(index),
                        FAKE_POD: "true",
                    })
                    containers = []
                    for c in pod_spec.get("containers") or [{"name": "node"}]:
                        image = trainer.get("image") if c.get("name") == "node" and trainer.get("image") else c.get("image")
                        containers.append({"name": c.get("name") or "node", "image": image or "busybox"})
                    init = [{"name": c.get("name") or "init", "image": c.get("image") or "busybox"}
                            for c in pod_spec.get("initContainers") or []]
                    if role == "launcher":
                        node = nodes[-1] if nodes else None
                    else:
                        node = nodes[index % len(nodes)] if nodes else None
                    pod = {
                        "apiVersion": "v1", "kind": "Pod",
                        "metadata": {
                            "name": name, "namespace": meta["namespace"], "labels": labels,
                            "annotations": {"batch.kubernetes.io/job-completion-index": str(index),
                                            "gpufleet.test/note": "created by the test controller; nothing runs"},
                            "ownerReferences": [{"apiVersion": GROUP_VERSION, "kind": "TrainJob", "name": meta["name"],
                                                 "uid": meta.get("uid"), "controller": True, "blockOwnerDeletion": False}],
                        },
                        "spec": {
                            "hostname": hostname, "subdomain": meta["name"][:63],
                            "restartPolicy": pod_spec.get("restartPolicy") or "OnFailure",
                            "containers": containers,
                            "terminationGracePeriodSeconds": 30,
                        },
                    }
                    if init:
                        pod["spec"]["initContainers"] = init
                    if node:
                        pod["spec"]["nodeName"] = node
                    planned.append((pod, role, index))
                global_index += 1
        # Rank order: workers (node) first, the launcher last.
        planned.sort(key=lambda item: (item[1] == "launcher", item[2]))
        return planned

    def log_choice(self, obj):
        ann = (obj.get("metadata") or {}).get("annotations") or {}
        choice = ann.get(NCCL_LOG) or self.nccl_log
        if choice not in nccl_logs.RESULTS:
            choice = "good"
        busbw = ann.get(NCCL_BUSBW, self.nccl_busbw)
        try:
            busbw = float(busbw) if busbw not in (None, "") else None
        except ValueError:
            busbw = None
        return choice, busbw

    def write_logs(self, obj, planned, finished, outcome=None):
        if self.log_root is None:
            return
        meta = obj["metadata"]
        trainer = (obj.get("spec") or {}).get("trainer") or {}
        words = nccl_logs.trainer_words(obj)
        cmd = nccl_logs.nccl_command(obj)
        choice, busbw = self.log_choice(obj)
        workers = [(pod, index) for pod, role, index in planned if role != "launcher"]
        hosts = [pod["spec"]["hostname"] for pod, index in workers]
        gpus = int(trainer.get("numProcPerNode") or 0) or nccl_logs.GPUS_PER_NODE.get(self.gpu, 8)
        env = {e.get("name"): str(e.get("value")) for e in trainer.get("env") or [] if isinstance(e, dict)}
        mnnvl = env.get("NCCL_MNNVL_ENABLE") == "1" or "NCCL_MNNVL_ENABLE=1" in words
        has_launcher = any(role == "launcher" for pod, role, index in planned)
        torch = any("torchrun" in w for w in words) or (trainer.get("numProcPerNode") and not cmd)
        framework = "mpi" if has_launcher else ("torch" if torch else "exec")
        for pod, role, index in planned:
            if role == "launcher":
                text = nccl_logs.launcher_log(choice, hosts, gpus, self.platform, self.gpu, cmd, busbw=busbw, seed=meta.get("uid", ""),
                                              finished=finished, mnnvl=mnnvl)
            elif has_launcher:
                text = nccl_logs.worker_log(pod["spec"]["hostname"], index)
            else:
                text = nccl_logs.plain_log(framework, pod["spec"]["hostname"], index, gpus, len(workers) * gpus, self.gpu,
                                           finished=finished and outcome == "Complete")
            pod_dir = self.log_root / meta["namespace"] / pod["metadata"]["name"]
            pod_dir.mkdir(parents=True, exist_ok=True)
            for c in pod["spec"]["containers"]:
                tmp = pod_dir / f".{c['name']}.log.tmp"
                tmp.write_text(text)
                tmp.replace(pod_dir / f"{c['name']}.log")
            for c in pod["spec"].get("initContainers") or []:
                (pod_dir / f"{c['name']}.log").write_text("")

    def pod_status(self, pod, index, state, exit_code=0, reason=None):
        """Status of a pod as a kubelet reports it: state running | succeeded | failed."""
        stamp = now()
        running = state == "running"
        statuses = []
        for c in pod["spec"]["containers"]:
            entry = {"name": c["name"], "image": c["image"], "imageID": "", "restartCount": 0,
                     "containerID": "containerd://" + hashlib.sha256((pod["metadata"]["name"] + c["name"]).encode()).hexdigest(),
                     "ready": running, "started": running}
            if running:
                entry["state"] = {"running": {"startedAt": stamp}}
            else:
                entry["state"] = {"terminated": {"exitCode": exit_code, "reason": reason or ("Completed" if exit_code == 0 else "Error"),
                                                 "startedAt": stamp, "finishedAt": stamp}}
            statuses.append(entry)
        init = [{"name": c["name"], "image": c["image"], "imageID": "", "restartCount": 0, "ready": True,
                 "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": stamp, "finishedAt": stamp}}}
                for c in pod["spec"].get("initContainers") or []]
        ready = "True" if running else "False"
        status = {
            "phase": {"running": "Running", "succeeded": "Succeeded", "failed": "Failed"}[state],
            "hostIP": "127.0.0.1", "podIP": "10.244.%d.%d" % (index % 250 + 1, 17 + index % 200),
            "startTime": stamp,
            "conditions": [{"type": t, "status": v, "lastProbeTime": None, "lastTransitionTime": stamp}
                           for t, v in (("Initialized", "True"), ("Ready", ready), ("ContainersReady", ready),
                                        ("PodScheduled", "True"))],
            "containerStatuses": statuses,
            "qosClass": "BestEffort",
        }
        if init:
            status["initContainerStatuses"] = init
        return status

    def set_pod_status(self, pod, status):
        pods = self.resource("Pod", "v1")
        try:
            pods.status.patch(body={"status": status}, name=pod["metadata"]["name"], namespace=pod["metadata"]["namespace"],
                              content_type="application/merge-patch+json")
        except ApiException as e:
            if e.status != 404:
                raise

    def ensure_pods(self, obj):
        """Create the TrainJob's pods (Running, bound to the fake nodes) once; returns the plan."""
        uid = obj["metadata"].get("uid")
        planned = self.plan_pods(obj)
        with self._lock:
            if uid in self._started:
                return planned
        pods = self.resource("Pod", "v1")
        for pod, role, index in planned:
            try:
                pods.create(body=pod, namespace=pod["metadata"]["namespace"])
            except ApiException as e:
                if e.status != 409:
                    raise
                continue
            if pod["spec"].get("nodeName"):
                self.set_pod_status(pod, self.pod_status(pod, index, "running"))
        self.write_logs(obj, planned, finished=False)
        with self._lock:
            self._started.add(uid)
        log(f"{self.name}: TrainJob {obj['metadata']['namespace']}/{obj['metadata']['name']}: {len(planned)} pods running")
        return planned

    def finish_pods(self, obj, planned, outcome):
        self.write_logs(obj, planned, finished=True, outcome=outcome)
        workers = [(pod, index) for pod, role, index in planned if role != "launcher"]
        launcher = [(pod, index) for pod, role, index in planned if role == "launcher"]
        for pod, role, index in planned:
            if not pod["spec"].get("nodeName"):
                continue
            if outcome == "Complete":
                status = self.pod_status(pod, index, "succeeded")
            elif launcher and pod is launcher[0][0]:
                status = self.pod_status(pod, index, "failed", exit_code=1)
            elif workers and pod is workers[-1][0]:
                status = self.pod_status(pod, index, "failed", exit_code=137)
            elif not launcher and pod is planned[-1][0]:
                status = self.pod_status(pod, index, "failed", exit_code=1)
            else:
                continue  # still running when the job ended
            self.set_pod_status(pod, status)

    def pod_reaper(self):
        """Remove pods of the fake nodes once they are being deleted, as a kubelet does when their containers stopped."""
        while not stop_event.is_set():
            try:
                pods = self.resource("Pod", "v1")
                w = watch.Watch()
                for ev in pods.watch(label_selector=f"{FAKE_POD}=true", timeout=30, watcher=w):
                    if stop_event.is_set():
                        w.stop()
                        break
                    obj = ev["raw_object"]
                    meta = obj.get("metadata") or {}
                    if ev["type"] in ("ADDED", "MODIFIED") and meta.get("deletionTimestamp"):
                        try:
                            pods.delete(name=meta["name"], namespace=meta["namespace"], body={"gracePeriodSeconds": 0})
                        except ApiException as e:
                            if e.status != 404:
                                log(f"{self.name}: could not remove pod {meta['namespace']}/{meta['name']}: {e.status}")
            except Exception as e:  # noqa: BLE001 - keep running whatever a cluster does
                if not stop_event.is_set():
                    log(f"{self.name}: pod watch error: {e!r}")
                    self.reset_discovery()
                    stop_event.wait(1)

    def reset_discovery(self):
        self._dyn = None

    def consider(self, obj):
        d = decide(obj, self.default_outcome)
        if d is None:
            return
        meta = obj["metadata"]
        try:
            self.ensure_pods(obj)
        except Exception as e:  # noqa: BLE001 - retried when the TrainJob is finished
            log(f"{self.name}: could not create the pods of {meta.get('namespace')}/{meta.get('name')}: {e!r}")
        due = time.time()
        if d[1] > 0:
            created = meta.get("creationTimestamp")
            try:
                t = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
            except (TypeError, ValueError):
                t = time.time()
            due = t + d[1]
        self.scheduler.add(due, self, meta["namespace"], meta["name"], meta.get("uid"))

    def finish(self, namespace, name, uid):
        """Re-read the TrainJob and set its terminal condition through the status subresource."""
        res = self.resource("TrainJob")
        try:
            obj = res.get(name=name, namespace=namespace).to_dict()
        except ApiException as e:
            if e.status == 404:
                return
            raise
        if uid and obj["metadata"].get("uid") != uid:
            return
        d = decide(obj, self.default_outcome)
        if d is None:
            return
        outcome, reason, message = d[0], d[2], d[3]
        planned = self.ensure_pods(obj)
        self.finish_pods(obj, planned, outcome)
        status = obj.get("status") or {}
        conditions = [c for c in status.get("conditions") or [] if c.get("type") not in TERMINAL]
        conditions.append({"type": outcome, "status": "True", "reason": reason, "message": message,
                           "lastTransitionTime": now()})
        jobs = self.jobs_status(obj, outcome)
        body = {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]},
                "status": {"conditions": conditions}}
        if jobs:
            body["status"]["jobsStatus"] = jobs
        try:
            res.status.patch(body=body, name=name, namespace=namespace,
                             content_type="application/merge-patch+json")
        except ApiException as e:
            if e.status == 409:  # changed meanwhile: look again
                self.scheduler.add(time.time() + 0.2, self, namespace, name, uid)
                return
            if e.status == 404:
                return
            raise
        log(f"{self.name}: TrainJob {namespace}/{name} -> {outcome} ({reason})")

    def jobs_status(self, obj, outcome):
        """jobsStatus per replicatedJob of the referenced runtime, when it can be read."""
        try:
            names = [rj["name"] for rj in self.runtime_of(obj)["spec"]["template"]["spec"]["replicatedJobs"]]
        except (KeyError, TypeError):
            names = ["node"]
        return [{"name": n, "active": 0, "ready": 0, "succeeded": 1 if outcome == "Complete" else 0,
                 "failed": 1 if outcome == "Failed" and n == "node" else 0, "suspended": 0} for n in names]

    def run(self):
        while not stop_event.is_set():
            try:
                res = self.resource("TrainJob")
            except ResourceNotFoundError:
                # No TrainJob CRD (yet): nothing to watch. Look again later.
                self.ready.set()
                self.reset_discovery()
                stop_event.wait(3)
                continue
            except Exception as e:  # noqa: BLE001 - keep running whatever a cluster does
                log(f"{self.name}: discovery failed: {e}")
                self.reset_discovery()
                stop_event.wait(1)
                continue
            try:
                lst = res.get()
                for item in lst.to_dict().get("items", []):
                    self.consider(item)
                rv = lst.metadata.resourceVersion
                self.ready.set()
                w = watch.Watch()
                for ev in res.watch(resource_version=rv, timeout=30, watcher=w):
                    if stop_event.is_set():
                        w.stop()
                        break
                    if ev["type"] in ("ADDED", "MODIFIED"):
                        self.consider(ev["raw_object"])
                    elif ev["type"] == "ERROR":
                        break
            except ApiException as e:
                if e.status == 404:
                    self.reset_discovery()
                elif e.status != 410:
                    log(f"{self.name}: {e.status} {e.reason}")
                stop_event.wait(1)
            except Exception as e:  # noqa: BLE001
                if not stop_event.is_set():
                    log(f"{self.name}: watch error: {e!r}")
                    stop_event.wait(1)


class Scheduler:
    """Runs Cluster.finish at the due time, one worker thread for the whole fleet."""

    def __init__(self):
        self.heap = []
        self.cv = threading.Condition()
        self.seq = 0
        self.queued = set()

    def add(self, due, cluster, namespace, name, uid):
        key = (cluster.name, namespace, name, uid)
        with self.cv:
            if key in self.queued:
                return
            self.queued.add(key)
            self.seq += 1
            heapq.heappush(self.heap, (due, self.seq, cluster, namespace, name, uid))
            self.cv.notify()

    def run(self):
        while not stop_event.is_set():
            with self.cv:
                while not stop_event.is_set() and (not self.heap or self.heap[0][0] > time.time()):
                    self.cv.wait(timeout=0.5 if not self.heap else max(0.01, min(0.5, self.heap[0][0] - time.time())))
                if stop_event.is_set():
                    return
                cluster, namespace, name, uid = heapq.heappop(self.heap)[2:]
                self.queued.discard((cluster.name, namespace, name, uid))
            try:
                cluster.finish(namespace, name, uid)
            except Exception as e:  # noqa: BLE001
                log(f"{cluster.name}: could not update {namespace}/{name}: {e!r}")
                self.add(time.time() + 1, cluster, namespace, name, uid)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="fleet directory (holds state.json and kubeconfig)")
    a = ap.parse_args(argv)
    d = Path(a.dir).resolve()
    state = json.loads((d / "state.json").read_text())

    def on_signal(signum, frame):
        stop_event.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    sched = Scheduler()
    clusters = [Cluster(name, state["kubeconfig"], c.get("trainjob_outcome", "Complete"), sched, record=c, log_root=d / "kubelet")
                for name, c in state["clusters"].items()]
    threads = [threading.Thread(target=sched.run, name="scheduler", daemon=True)]
    threads += [threading.Thread(target=c.run, name=c.name, daemon=True) for c in clusters]
    threads += [threading.Thread(target=c.pod_reaper, name=c.name + "/pods", daemon=True) for c in clusters]
    for t in threads:
        t.start()
    for c in clusters:
        while not c.ready.wait(0.2):
            if stop_event.is_set():
                return 0
    (d / "controller.ready").write_text(str(time.time()))
    log(f"watching TrainJobs in {len(clusters)} clusters")
    while not stop_event.wait(1):
        pass
    log("stopping")
    return 0


if __name__ == "__main__":
    sys.exit(main())
