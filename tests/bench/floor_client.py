# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark baseline, not a test: the floor of a fleet stage, the least any tool can do. A minimal Python client (the
kubernetes package alone, nothing of the collection) that, for every cluster at once (a thread per cluster), applies
the rendered manifests (playbooks/render.yml's <cluster>/manifests.yaml) server-side, watches the TrainJob to its end
and reads every pod's log (all containers, whole). No checks, no verdict, no reports, no retries but the one every
client needs (Trainer's webhook refuses a TrainJob whose runtime its cache has not seen yet).

    python tests/bench/floor_client.py --jobs jobs.json [--timeout 600] [--out floor.json]

jobs.json: [{name, kubeconfig, context, manifests}]. tests/bench/bench_whole_run.py and bench_scale.py run it (as a
process of its own, so its start and CPU count as a tool's would) beside the role and the kubectl loops: floor().
"""

import argparse
import json
import sys
import threading
import time

import yaml

FIELD_MANAGER = "gpufleet-bench-floor"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
APPLY_TRIES = 5


def _ended(trainjob):
    for condition in (trainjob.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return condition["type"]
    return None


def one_cluster(kubeconfig, context, manifests, timeout):
    """Apply, watch to the end, read the logs of one cluster: {outcome, seconds, log_bytes, pods, requests}."""
    from kubernetes import client, config, watch
    from kubernetes.dynamic import DynamicClient

    started = time.monotonic()
    api = config.new_client_from_config(config_file=kubeconfig, context=context)
    dynamic = DynamicClient(api)
    docs = [doc for doc in yaml.safe_load_all(open(manifests)) if doc]
    requests = 0
    trainjob = None
    for doc in docs:
        resource = dynamic.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        for attempt in range(APPLY_TRIES):
            requests += 1
            try:
                dynamic.server_side_apply(resource, body=doc, field_manager=FIELD_MANAGER, force_conflicts=True)
                break
            except Exception as exc:  # noqa: BLE001 the webhook's refusal of a runtime it has not cached: again
                if attempt == APPLY_TRIES - 1 or "TrainingRuntime" not in str(exc):
                    raise
                time.sleep(1)
        if doc["kind"] == "TrainJob":
            trainjob = (resource, doc["metadata"])
    resource, meta = trainjob
    outcome = None
    watcher = watch.Watch()
    requests += 1
    for event in dynamic.watch(resource, namespace=meta["namespace"], name=meta["name"], timeout=timeout, watcher=watcher):
        outcome = _ended(event["raw_object"])
        if outcome:
            watcher.stop()
            break
    core = client.CoreV1Api(api)
    requests += 1
    pods = core.list_namespaced_pod(meta["namespace"], label_selector="%s=%s" % (JOBSET_NAME, meta["name"])).items
    size = 0
    for pod in pods:
        for status in pod.status.container_statuses or []:
            requests += 1
            try:
                size += len(core.read_namespaced_pod_log(pod.metadata.name, meta["namespace"], container=status.name) or "")
            except client.exceptions.ApiException as exc:
                # JobSet removes a finished job's worker pods: one listed a moment ago may be gone; the floor moves on.
                if exc.status != 404:
                    raise
    api.close()
    return {"outcome": outcome or "Timeout", "seconds": time.monotonic() - started, "log_bytes": size, "pods": len(pods), "requests": requests}


def run_floor(jobs, timeout):
    """JOBS: [{name, kubeconfig, context, manifests}], all at once, a thread each. Returns (wall seconds, {name:
    one_cluster()'s record, or {outcome: Error, error}})."""
    results = {}

    def work(job):
        try:
            results[job["name"]] = one_cluster(job["kubeconfig"], job["context"], job["manifests"], timeout)
        except Exception as exc:  # noqa: BLE001 reported, not raised: the caller says which cluster failed
            results[job["name"]] = {"outcome": "Error", "error": str(exc)[:500]}

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(job,), name="floor-%s" % job["name"]) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started, results


def floor(jobs, timeout, work):
    """Run this file as a process over JOBS: (wall seconds, CPU seconds of the process, {name: record})."""
    import os
    import resource
    import subprocess

    path = os.path.join(str(work), "floor-jobs-%d.json" % int(time.time() * 1000))
    out = path.replace("floor-jobs-", "floor-out-")
    with open(path, "w") as handle:
        json.dump(jobs, handle)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--jobs", path, "--timeout", str(timeout), "--out", out], check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(out) as handle:
        results = json.load(handle)["clusters"]
    if proc.returncode != 0:
        failed = dict((name, r) for name, r in results.items() if r.get("outcome") != "Complete")
        sys.exit("[bench] the floor client did not complete every cluster: %s" % json.dumps(failed)[:3000])
    return wall, cpu, results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", required=True, help="a JSON file: [{name, kubeconfig, context, manifests}], one per cluster")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--out", help="write {seconds, clusters} as JSON here (default: stdout)")
    args = parser.parse_args()
    with open(args.jobs) as handle:
        jobs = json.load(handle)
    elapsed, results = run_floor(jobs, args.timeout)
    text = json.dumps({"seconds": elapsed, "clusters": results}, indent=2, sort_keys=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")
    else:
        print(text)
    return 0 if all(r.get("outcome") == "Complete" for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
