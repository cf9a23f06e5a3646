# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark, not a test: the role's whole burn-in (check, plan, apply, wait, logs, verdict, reports) of N clusters vs
a serial shell loop of `kubectl apply --server-side`, `kubectl wait` and `kubectl logs` over the same clusters.

    source scripts/env.sh && python tests/bench/bench_whole_run.py [--fleet-dir DIR] [--clusters 5] [--rounds 2]
                                                                   [--job-seconds 10]

1. starts a fleet of N matching clusters (tests/bench/bench_role_apply.py's), unless --fleet-dir names a running one;
2. renders the workload once per cluster with playbooks/render.yml, the TrainJob annotated to end --job-seconds after
   it was created (the test fleet's agent reads `gpufleet.test/delay-seconds`);
3. kubectl: for each cluster in turn, apply the manifests server-side, wait for the TrainJob's Complete condition and
   read every pod's log (`kubectl logs -l jobset.sigs.k8s.io/jobset-name=<job> --all-containers`);
4. the role: playbooks/burnin.yml (everything, reports in JSON, JUnit and HTML) with the same annotation, all clusters
   at once (forks = N).

The ratio is role / kubectl, median over rounds; the target is <= 0.5x at 5 clusters. Both run the same jobs on the
same clusters: the role's advantage is doing the clusters at once, its cost Ansible's per-task overhead.
kubectl must be on PATH (Debian: apt-get install kubernetes-client).
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench_role_apply import FIELD_MANAGER, FLEET, REPO, log, run

# Clusters whose every requested resource the test fleet's nodes offer. Not GKE's A4X (gcp/gb200): the fleet's nodes
# lack its networking.gke.io.networks/rdma-* resources, so its pods would never be scheduled.
CLUSTERS = [
    {"name": "whole-aws-h100-a", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "whole-gcp-h100-a", "platform": "gcp", "gpu_architecture": "h100"},
    {"name": "whole-azure-gb200-a", "platform": "azure", "gpu_architecture": "gb200"},
    {"name": "whole-aws-gb200-a", "platform": "aws", "gpu_architecture": "gb200"},
    {"name": "whole-gcp-h100-b", "platform": "gcp", "gpu_architecture": "h100"},
    {"name": "whole-azure-h100-a", "platform": "azure", "gpu_architecture": "h100"},
    {"name": "whole-aws-h100-b", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "whole-gcp-h200-a", "platform": "gcp", "gpu_architecture": "h200"},
]

DELAY = "gpufleet.test/delay-seconds"
# playbooks/render.yml reads no nodes, so for Azure it requests the catalogue's default rdma/ib, which the test fleet's
# Azure nodes (the Network Operator's shared device) do not offer; the role reads the nodes. Both sides get the node's
# resource from the inventory, so kubectl and the role apply the same objects.
AZURE_VARS = {"burnin_rdma_resource": "rdma/rdma_shared_device_a", "burnin_rdma_per_node": 1}
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"


def start_fleet(count, work):
    spec = {"clusters": [dict(c, nodes=2, trainjob_outcome="Complete") for c in CLUSTERS[:count]]}
    path = work / "whole-fleet.yml"
    path.write_text(yaml.safe_dump(spec))
    fleet_dir = work / "fleet"
    log("starting a fleet of %d clusters in %s" % (count, fleet_dir))
    run([sys.executable, str(FLEET), "start", "--spec", str(path), "--dir", str(fleet_dir)])
    return fleet_dir


def trainjob_of(manifests):
    docs = [d for d in yaml.safe_load_all(manifests.read_text()) if d]
    return [d for d in docs if d["kind"] == "TrainJob"][0]["metadata"]


def kubectl_loop(state, rendered, clusters, timeout):
    started = time.monotonic()
    for name in clusters:
        base = ["kubectl", "--kubeconfig", state["kubeconfig"], "--context", state["clusters"][name]["context"]]
        manifests = rendered / name / "manifests.yaml"
        job = trainjob_of(manifests)
        run(base + ["apply", "--server-side", "--field-manager", FIELD_MANAGER, "-f", str(manifests)])
        run(base + ["wait", "-n", job["namespace"], "--for=condition=Complete", "--timeout=%ds" % timeout, "trainjobs.trainer.kubeflow.org/%s" % job["name"]])
        run(
            base
            + ["logs", "-n", job["namespace"], "-l", "%s=%s" % (JOBSET_NAME, job["name"]), "--all-containers", "--prefix", "--tail=-1", "--max-log-requests=20"]
        )
    return time.monotonic() - started


def role_run(inventory, namespace, run_id, forks, env, extra, reports):
    command = (
        ["ansible-playbook"]
        + inventory
        + [
            str(REPO / "playbooks" / "burnin.yml"),
            "--forks",
            str(forks),
            "-e",
            "burnin_namespace=%s" % namespace,
            "-e",
            "burnin_run_id=%s" % run_id,
            "-e",
            "burnin_report_dir=%s" % reports,
            "-e",
            json.dumps(dict(extra, burnin_report_formats=["json", "junit", "html"])),
        ]
    )
    elapsed, proc = run(command, env=env, check=False)
    summary = json.loads((reports / run_id / "summary.json").read_text()) if (reports / run_id / "summary.json").exists() else {}
    outcomes = dict((name, result.get("outcome")) for name, result in summary.items())
    if proc.returncode != 0 or set(outcomes.values()) != {"Complete"}:
        sys.exit("[bench] the role did not complete every cluster (%d, %s):\n%s" % (proc.returncode, outcomes, proc.stdout[-4000:]))
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleet-dir", help="a running fleet (tests/fleet/fleet.py start); default: start one")
    parser.add_argument("--clusters", type=int, default=5, help="clusters to burn in (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each in fresh namespaces (default 2)")
    parser.add_argument("--job-seconds", type=int, default=10, help="how long each TrainJob runs (default 10)")
    args = parser.parse_args()
    if not shutil.which("kubectl"):
        sys.exit("[bench] kubectl is not on PATH (Debian: apt-get install kubernetes-client)")
    if not shutil.which("ansible-playbook"):
        sys.exit("[bench] ansible-playbook is not on PATH: source scripts/env.sh first")

    work = Path(tempfile.mkdtemp(prefix="gpufleet-bench-"))
    own_fleet = not args.fleet_dir
    fleet_dir = Path(args.fleet_dir) if args.fleet_dir else start_fleet(args.clusters, work)
    try:
        state = json.loads((fleet_dir / "state.json").read_text())
        clusters = sorted(state["clusters"])[: args.clusters]
        env = dict(os.environ, ANSIBLE_LIMIT=",".join(clusters), ANSIBLE_FORCE_COLOR="0")
        azure = dict((name, AZURE_VARS) for name in clusters if state["clusters"][name].get("platform") == "azure")
        extra_inventory = work / "bench-hosts.yml"
        extra_inventory.write_text(yaml.safe_dump({"all": {"hosts": azure}}))
        inventory = ["-i", state["inventory"], "-i", str(extra_inventory)]
        extra = {"burnin_trainjob_annotations": {DELAY: str(args.job_seconds)}}
        results = {"kubectl": [], "role": []}
        for index in range(args.rounds):
            run_id = "whole%d-%d" % (index, int(time.time()) % 100000)
            rendered = work / ("rendered-%d" % index)
            run(
                ["ansible-playbook"]
                + inventory
                + [
                    str(REPO / "playbooks" / "render.yml"),
                    "-e",
                    "burnin_namespace=wk-%s" % run_id,
                    "-e",
                    "burnin_run_id=%s" % run_id,
                    "-e",
                    "burnin_render_dir=%s" % rendered,
                    "-e",
                    json.dumps(extra),
                ],
                env=env,
            )
            results["kubectl"].append(kubectl_loop(state, rendered, clusters, timeout=args.job_seconds + 300))
            results["role"].append(role_run(inventory, "wr-%s" % run_id, run_id, len(clusters), env, extra, work / "reports"))
            log("round %d: kubectl loop %.1f s, role %.1f s" % (index + 1, results["kubectl"][-1], results["role"][-1]))
        med = dict((key, statistics.median(values)) for key, values in results.items())
        ratio = med["role"] / med["kubectl"]
        print("\nwhole burn-in, %d clusters, TrainJobs of %d s, median of %d rounds" % (len(clusters), args.job_seconds, args.rounds))
        print("  kubectl apply + wait + logs, serial:  %7.1f s" % med["kubectl"])
        print("  role (playbooks/burnin.yml):          %7.1f s" % med["role"])
        print("ratio (role / kubectl loop): %.2fx (target <= 0.5x at 5 clusters) %s" % (ratio, "ok" if ratio <= 0.5 else "MISSED"))
    finally:
        if own_fleet:
            run([sys.executable, str(FLEET), "stop", "--dir", str(fleet_dir)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
