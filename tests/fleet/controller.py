"""Test controller: plays Kubeflow Trainer's part for TrainJob status in every cluster of a test fleet.

There is no kubelet and no Trainer/JobSet controller in the test fleet, so no pod ever runs. This controller
only writes what Trainer would eventually write: it watches TrainJobs in all clusters and, through the
status subresource, marks each one Complete or Failed.

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
import heapq
import json
import signal
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from kubernetes import config, watch
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import ResourceNotFoundError

GROUP_VERSION = "trainer.kubeflow.org/v1alpha1"
OUTCOME = "gpufleet.test/outcome"
DELAY = "gpufleet.test/delay-seconds"
REASON = "gpufleet.test/reason"
MESSAGE = "gpufleet.test/message"
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


class Cluster:
    def __init__(self, name, kubeconfig, default_outcome, scheduler):
        self.name = name
        self.kubeconfig = kubeconfig
        self.default_outcome = default_outcome
        self.scheduler = scheduler
        self.api_client = config.new_client_from_config(config_file=kubeconfig, context=name)
        self.ready = threading.Event()
        self._dyn = None

    def resource(self, kind):
        if self._dyn is None:
            self._dyn = DynamicClient(self.api_client)
        return self._dyn.resources.get(api_version=GROUP_VERSION, kind=kind)

    def reset_discovery(self):
        self._dyn = None

    def consider(self, obj):
        d = decide(obj, self.default_outcome)
        if d is None:
            return
        meta = obj["metadata"]
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
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        kind = ref.get("kind") or "ClusterTrainingRuntime"
        try:
            res = self.resource(kind)
            rt = res.get(name=ref.get("name"), namespace=obj["metadata"]["namespace"] if kind == "TrainingRuntime"
                         else None).to_dict()
            names = [rj["name"] for rj in rt["spec"]["template"]["spec"]["replicatedJobs"]]
        except (ApiException, ResourceNotFoundError, KeyError, TypeError):
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
    clusters = [Cluster(name, state["kubeconfig"], c.get("trainjob_outcome", "Complete"), sched)
                for name, c in state["clusters"].items()]
    threads = [threading.Thread(target=sched.run, name="scheduler", daemon=True)]
    threads += [threading.Thread(target=c.run, name=c.name, daemon=True) for c in clusters]
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
