# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark, not a test: the role's whole burn-in (check, plan, apply, wait, logs, verdict, reports) of N clusters vs
the shell loops a user writes instead: `kubectl apply --server-side`, `kubectl wait` and `kubectl logs` per cluster,
the clusters one after the other (serial) and all at once (parallel: one such chain per cluster, as subprocesses).

    source scripts/env.sh && python tests/bench/bench_whole_run.py [--fleet-dir DIR] [--clusters 5] [--rounds 2]
                                                                   [--job-seconds 10] [--stages node fleet isolation]

1. starts a fleet of N matching clusters (this file's CLUSTERS), unless --fleet-dir names a running one;
2. renders the workload once per cluster and loop with playbooks/render.yml (each loop its own namespace), the
   TrainJob annotated to end --job-seconds after it was created (the test fleet's agent reads
   `gpufleet.test/delay-seconds`);
3. kubectl, serial: for each cluster in turn, apply the manifests server-side, wait for the TrainJob's Complete
   condition and read every pod's log (`kubectl logs -l jobset.sigs.k8s.io/jobset-name=<job> --all-containers`);
4. kubectl, parallel: the same chain for every cluster at once (`sh -c 'kubectl apply ... && kubectl wait ... &&
   kubectl logs ...'` per cluster, all started, then all waited for), what `for c in ...; do (...) & done; wait` does;
5. the floor (tests/bench/floor_client.py): a minimal Python client, a thread per cluster, that applies the same
   manifests server-side, watches each TrainJob to its end and reads the pods' logs: the least any tool can do;
6. the role: playbooks/burnin.yml (reports in JSON, JUnit and HTML; --stages sets burnin_stages, default the role's
   own, node fleet isolation) with the same annotation, all clusters at once (forks = N), its task evaluations per
   host counted by tests/bench/task_count.py.

Ratios are role / loop, medians over rounds; each contender's controller CPU (its processes' user + system seconds)
beside its wall time. Targets at 5 clusters: role <= 1.5x the parallel loop, <= 0.5x the serial one; task
evaluations per host <= 26 with the default stages; with --stages fleet (issue 42): wall <= 1.2x the parallel loop,
controller CPU <= 2x the loop's. The kubectl loops run one TrainJob per cluster (the
fleet stage's); the role runs every stage of burnin_stages (the default's node stage is a second TrainJob per cluster).
kubectl must be on PATH (Debian: apt-get install kubernetes-client).
"""

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

import floor_client
import task_count
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


def cpu_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def floor_jobs(state, rendered, clusters):
    return [
        {"name": name, "kubeconfig": state["kubeconfig"], "context": state["clusters"][name]["context"], "manifests": str(rendered / name / "manifests.yaml")}
        for name in clusters
    ]


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


def chain(state, rendered, name, timeout):
    """The three kubectl commands of one cluster: apply server-side, wait for Complete, every pod's log."""
    base = ["kubectl", "--kubeconfig", state["kubeconfig"], "--context", state["clusters"][name]["context"]]
    manifests = rendered / name / "manifests.yaml"
    job = trainjob_of(manifests)
    apply = base + ["apply", "--server-side", "--field-manager", FIELD_MANAGER, "-f", str(manifests)]
    # Trainer's webhook refuses a TrainJob whose runtime its cache has not seen yet: a user's loop applies again (the
    # role does too, plugins/plugin_utils/cluster.py), up to 5 times a second apart.
    retried = "for try in 1 2 3 4 5; do %s && exit 0; sleep 1; done; exit 1" % " ".join(shlex.quote(arg) for arg in apply)
    return [
        ["sh", "-c", retried],
        base + ["wait", "-n", job["namespace"], "--for=condition=Complete", "--timeout=%ds" % timeout, "trainjobs.trainer.kubeflow.org/%s" % job["name"]],
        base
        + ["logs", "-n", job["namespace"], "-l", "%s=%s" % (JOBSET_NAME, job["name"]), "--all-containers", "--prefix", "--tail=-1", "--max-log-requests=20"],
    ]


def kubectl_loop(state, rendered, clusters, timeout):
    started = time.monotonic()
    for name in clusters:
        for command in chain(state, rendered, name, timeout):
            run(command)
    return time.monotonic() - started


def kubectl_parallel(state, rendered, clusters, timeout, work):
    """Every cluster's chain at once, each in its own shell (`&&`: a failed step ends that cluster's chain)."""
    started = time.monotonic()
    procs = {}
    for name in clusters:
        script = " && ".join(" ".join(shlex.quote(arg) for arg in command) for command in chain(state, rendered, name, timeout))
        out = open(str(work / ("parallel-%s.log" % name)), "w")
        procs[name] = (subprocess.Popen(["sh", "-c", script], stdout=out, stderr=subprocess.STDOUT), out)
    failed = []
    for name, (proc, out) in procs.items():
        if proc.wait() != 0:
            failed.append(name)
        out.close()
    elapsed = time.monotonic() - started
    if failed:
        sys.exit(
            "[bench] the parallel kubectl loop failed on %s:\n%s"
            % (", ".join(failed), "\n".join((work / ("parallel-%s.log" % name)).read_text()[-2000:] for name in failed))
        )
    return elapsed


def render(inventory, namespace, run_id, rendered, env, extra):
    run(
        ["ansible-playbook"]
        + inventory
        + [
            str(REPO / "playbooks" / "render.yml"),
            "-e",
            "burnin_namespace=%s" % namespace,
            "-e",
            "burnin_run_id=%s" % run_id,
            "-e",
            "burnin_render_dir=%s" % rendered,
            "-e",
            json.dumps(extra),
        ],
        env=env,
    )


def role_run(inventory, namespace, run_id, forks, env, extra, reports, counts):
    """Wall seconds of the role's run and its task evaluations per host (task_count.summarize)."""
    env = task_count.enable(env, reports.parent / "callback_plugins", counts)
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
        sys.exit("[bench] the role did not complete every cluster (%d, %s):\n%s" % (proc.returncode, outcomes, proc.stdout[-4000:] + proc.stderr[-4000:]))
    return elapsed, task_count.summarize(task_count.read(counts))


DEFAULT_STAGES = ["node", "fleet", "isolation"]  # roles/burnin/defaults/main.yml's burnin_stages
TASKS_TARGET = 26  # task evaluations per host with the default stages (issue 26)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleet-dir", help="a running fleet (tests/fleet/fleet.py start); default: start one")
    parser.add_argument("--clusters", type=int, default=5, help="clusters to burn in (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, each in fresh namespaces (default 2)")
    parser.add_argument("--job-seconds", type=int, default=10, help="how long each TrainJob runs (default 10)")
    parser.add_argument("--stages", nargs="+", help="the role's burnin_stages (default: the role's, %s)" % " ".join(DEFAULT_STAGES))
    parser.add_argument("--json", help="write the results to this file as JSON")
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
        role_extra = dict(extra, burnin_stages=args.stages) if args.stages else extra
        stages = args.stages or DEFAULT_STAGES
        timeout = args.job_seconds + 300
        results = {"serial": [], "parallel": [], "floor": [], "role": []}
        cpus = {"serial": [], "parallel": [], "floor": [], "role": []}
        tasks = []
        for index in range(args.rounds):
            run_id = "whole%d-%d" % (index, int(time.time()) % 100000)
            rendered = dict((key, work / ("rendered-%s-%d" % (key, index))) for key in ("serial", "parallel", "floor"))
            render(inventory, "wk-%s" % run_id, run_id, rendered["serial"], env, extra)
            render(inventory, "wp-%s" % run_id, run_id, rendered["parallel"], env, extra)
            render(inventory, "wf-%s" % run_id, run_id, rendered["floor"], env, extra)
            cpu = cpu_children()
            results["serial"].append(kubectl_loop(state, rendered["serial"], clusters, timeout))
            cpus["serial"].append(cpu_children() - cpu)
            cpu = cpu_children()
            results["parallel"].append(kubectl_parallel(state, rendered["parallel"], clusters, timeout, work))
            cpus["parallel"].append(cpu_children() - cpu)
            elapsed, cpu_floor, dummy = floor_client.floor(floor_jobs(state, rendered["floor"], clusters), timeout, work)
            results["floor"].append(elapsed)
            cpus["floor"].append(cpu_floor)
            cpu = cpu_children()
            elapsed, counted = role_run(inventory, "wr-%s" % run_id, run_id, len(clusters), env, role_extra, work / "reports", work / ("tasks-%d.json" % index))
            results["role"].append(elapsed)
            cpus["role"].append(cpu_children() - cpu)
            tasks.append(counted)
            log(
                "round %d: kubectl serial %.1f s (CPU %.1f s), parallel %.1f s (CPU %.1f s), floor %.1f s (CPU %.1f s), role %.1f s (CPU %.1f s); %s"
                % (
                    index + 1,
                    results["serial"][-1],
                    cpus["serial"][-1],
                    results["parallel"][-1],
                    cpus["parallel"][-1],
                    results["floor"][-1],
                    cpus["floor"][-1],
                    results["role"][-1],
                    cpus["role"][-1],
                    task_count.describe(counted),
                )
            )
        med = dict((key, statistics.median(values)) for key, values in results.items())
        med_cpu = dict((key, statistics.median(values)) for key, values in cpus.items())
        ratio = dict((key, med["role"] / med[key]) for key in ("serial", "parallel", "floor"))
        cpu_ratio = dict((key, med_cpu["role"] / med_cpu[key]) for key in ("serial", "parallel", "floor") if med_cpu[key])
        default = stages == DEFAULT_STAGES
        print(
            "\nwhole burn-in, %d clusters, TrainJobs of %d s, median of %d rounds; the role's burnin_stages %s, the loops one TrainJob per cluster"
            % (len(clusters), args.job_seconds, args.rounds, " ".join(stages))
        )
        rows = (
            ("serial", "kubectl apply + wait + logs, serial:  "),
            ("parallel", "kubectl apply + wait + logs, parallel:"),
            ("floor", "floor client (a thread per cluster):  "),
            ("role", "role (playbooks/burnin.yml):          "),
        )
        for key, label in rows:
            print(
                "  %s %7.1f s, CPU %6.1f s  (rounds %s; CPU %s)"
                % (label, med[key], med_cpu[key], ", ".join("%.1f" % v for v in results[key]), ", ".join("%.1f" % v for v in cpus[key]))
            )
        target = " (target <= %sx at 5 clusters) %s"
        print("ratio role / parallel kubectl loop: %.2fx%s" % (ratio["parallel"], target % ("1.5", "ok" if ratio["parallel"] <= 1.5 else "MISSED")))
        print("ratio role / serial kubectl loop:   %.2fx%s" % (ratio["serial"], target % ("0.5", "ok" if ratio["serial"] <= 0.5 else "MISSED")))
        print("ratio role / floor client:          %.2fx (no target at 5 clusters)" % ratio["floor"])
        if stages == ["fleet"]:
            print(
                "issue 42, fleet stage: wall role / parallel loop %.2fx (target <= 1.2x) %s"
                % (ratio["parallel"], "ok" if ratio["parallel"] <= 1.2 else "MISSED")
            )
            if "parallel" in cpu_ratio:
                print(
                    "issue 42, fleet stage: controller CPU role / parallel loop %.2fx (target <= 2x) %s"
                    % (cpu_ratio["parallel"], "ok" if cpu_ratio["parallel"] <= 2 else "MISSED")
                )
        print("CPU ratios role / contender: %s" % ", ".join("%s %.2fx" % (key, value) for key, value in sorted(cpu_ratio.items())))
        for index, counted in enumerate(tasks):
            print("round %d: %s" % (index + 1, task_count.describe(counted, target=TASKS_TARGET if default else None)))
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {
                        "clusters": clusters,
                        "job_seconds": args.job_seconds,
                        "stages": stages,
                        "seconds": results,
                        "median_seconds": med,
                        "ratios": ratio,
                        "cpu_seconds": cpus,
                        "median_cpu_seconds": med_cpu,
                        "cpu_ratios": cpu_ratio,
                        "task_evaluations": tasks,
                        "machine": os.uname().nodename,
                        "cpus": os.cpu_count(),
                    },
                    indent=2,
                    sort_keys=True,
                )
                + "\n"
            )
            log("results written to %s" % args.json)
    finally:
        if own_fleet:
            run([sys.executable, str(FLEET), "stop", "--dir", str(fleet_dir)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
