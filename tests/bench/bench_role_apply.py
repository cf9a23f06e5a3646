# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark, not a test: the role's apply of one workload to 5 local clusters vs a serial `kubectl apply --server-side`
loop over the same rendered manifests.

    source scripts/env.sh && python tests/bench/bench_role_apply.py [--fleet-dir DIR] [--clusters 5] [--rounds 3]

1. starts a fleet of N matching clusters (aws/gcp/azure, H100 and GB200) on loopback, unless --fleet-dir names a running
   one (it needs the clusters of tests/bench's spec below, or any fleet whose nodes match their groups);
2. renders the workload once per cluster with playbooks/render.yml (the manifests kubectl applies);
3. kubectl: for each cluster in turn, `kubectl apply --server-side --field-manager gpufleet.burnin -f manifests.yaml`
   into a fresh namespace (first apply), then the same again (no-op re-run);
4. the role: playbooks/burnin.yml with burnin_wait=false and burnin_collect_logs=false into another fresh namespace
   (first apply), then again with the same run id (no-op re-run: every object, the TrainJob included, is unchanged).

Each round uses fresh namespaces; the median over rounds is reported. Two role numbers are printed:
- apply phase: the wall time of the role's fleet stage task (its plan and its one server-side apply), all clusters in parallel (what the kubectl loop
  does: apply rendered objects) - the ratios and their targets (<= 1.0x first apply, <= 0.6x no-op re-run) use it;
- whole playbook: ansible-playbook from start to end, with its start-up, argument validation, node check and planning.
Ratios are role / kubectl. kubectl must be on PATH (Debian: apt-get install kubernetes-client).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent.parent
FLEET = REPO / "tests" / "fleet" / "fleet.py"
# The fleet stage's one task (roles/burnin/tasks/stage.yml): with burnin_wait=false it plans and applies only.
APPLY_TASK = "Run the stage fleet"
FIELD_MANAGER = "gpufleet.burnin"
CLUSTERS = [
    {"name": "bench-aws-h100-a", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "bench-gcp-h100-a", "platform": "gcp", "gpu_architecture": "h100"},
    {"name": "bench-azure-gb200-a", "platform": "azure", "gpu_architecture": "gb200"},
    {"name": "bench-aws-h100-b", "platform": "aws", "gpu_architecture": "h100"},
    {"name": "bench-gcp-gb200-a", "platform": "gcp", "gpu_architecture": "gb200"},
    {"name": "bench-azure-h100-a", "platform": "azure", "gpu_architecture": "h100"},
    {"name": "bench-aws-gb200-a", "platform": "aws", "gpu_architecture": "gb200"},
    {"name": "bench-gcp-h100-b", "platform": "gcp", "gpu_architecture": "h100"},
]

# Times the role's apply task: from its start to the last cluster's result.
CALLBACK = """
import json, os, time
from ansible.plugins.callback import CallbackBase

class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_apply_timer"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.start = self.end = None

    def v2_playbook_on_task_start(self, task, is_conditional):
        if task.get_name().endswith(%r) and self.start is None:
            self.start = time.monotonic()

    def _result(self, result, *args, **kwargs):
        if self.start is not None and result._task.get_name().endswith(%r):
            self.end = time.monotonic()

    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = _result

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["BENCH_APPLY_TIMER"], "w") as handle:
            json.dump({"apply_seconds": (self.end - self.start) if self.start and self.end else None}, handle)
""" % (APPLY_TASK, APPLY_TASK)


def log(msg):
    print("[bench] %s" % msg, file=sys.stderr, flush=True)


def run(command, env=None, check=True):
    started = time.monotonic()
    # stdout apart from stderr: callers parse stdout (ansible-inventory's JSON), where a dependency's warning is no part.
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    elapsed = time.monotonic() - started
    if check and proc.returncode != 0:
        sys.exit("[bench] failed (%d): %s\n%s\n%s" % (proc.returncode, " ".join(command), proc.stdout[-4000:], proc.stderr[-4000:]))
    return elapsed, proc


def start_fleet(count, work):
    spec = {"clusters": [dict(c, nodes=2, trainjob_outcome="Complete") for c in CLUSTERS[:count]]}
    path = work / "bench-fleet.yml"
    path.write_text(yaml.safe_dump(spec))
    fleet_dir = work / "fleet"
    log("starting a fleet of %d clusters in %s" % (count, fleet_dir))
    run([sys.executable, str(FLEET), "start", "--spec", str(path), "--dir", str(fleet_dir)])
    return fleet_dir


def kubectl_loop(state, manifests, clusters):
    started = time.monotonic()
    for name in clusters:
        run(
            [
                "kubectl",
                "--kubeconfig",
                state["kubeconfig"],
                "--context",
                state["clusters"][name]["context"],
                "apply",
                "--server-side",
                "--field-manager",
                FIELD_MANAGER,
                "-f",
                str(manifests / name / "manifests.yaml"),
            ]
        )
    return time.monotonic() - started


def role_run(inventory, namespace, run_id, forks, env, work):
    timer = work / "apply-timer.json"
    env = dict(env, BENCH_APPLY_TIMER=str(timer))
    elapsed, proc = run(
        [
            "ansible-playbook",
            "-i",
            inventory,
            str(REPO / "playbooks" / "burnin.yml"),
            "--forks",
            str(forks),
            "-e",
            "burnin_namespace=%s" % namespace,
            "-e",
            "burnin_run_id=%s" % run_id,
            "-e",
            "burnin_wait=false",
            "-e",
            "burnin_collect_logs=false",
            "-e",
            '{"burnin_stages": ["fleet"]}',
        ],
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit("[bench] the role failed (%d):\n%s" % (proc.returncode, proc.stdout[-4000:] + proc.stderr[-4000:]))
    apply_seconds = json.loads(timer.read_text())["apply_seconds"]
    return elapsed, apply_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleet-dir", help="a running fleet (tests/fleet/fleet.py start); default: start one")
    parser.add_argument("--clusters", type=int, default=5, help="clusters to apply to (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each in fresh namespaces (default 3)")
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
        limit = ",".join(clusters)
        callbacks = work / "callback_plugins"
        callbacks.mkdir()
        (callbacks / "bench_apply_timer.py").write_text(CALLBACK)
        env = dict(
            os.environ, ANSIBLE_CALLBACK_PLUGINS=str(callbacks), ANSIBLE_CALLBACKS_ENABLED="bench_apply_timer", ANSIBLE_LIMIT=limit, ANSIBLE_FORCE_COLOR="0"
        )
        inventory = state["inventory"]
        results = {"kubectl_first": [], "kubectl_noop": [], "role_first": [], "role_noop": [], "role_first_total": [], "role_noop_total": []}
        for index in range(args.rounds):
            run_id = "bench%d-%d" % (index, int(time.time()) % 100000)
            manifests = work / ("rendered-%d" % index)
            run(
                [
                    "ansible-playbook",
                    "-i",
                    inventory,
                    str(REPO / "playbooks" / "render.yml"),
                    "-e",
                    "burnin_namespace=bk-%s" % run_id,
                    "-e",
                    "burnin_run_id=%s" % run_id,
                    "-e",
                    "burnin_render_dir=%s" % manifests,
                ],
                env=env,
            )
            results["kubectl_first"].append(kubectl_loop(state, manifests, clusters))
            results["kubectl_noop"].append(kubectl_loop(state, manifests, clusters))
            total, applied = role_run(inventory, "br-%s" % run_id, run_id, len(clusters), env, work)
            results["role_first"].append(applied)
            results["role_first_total"].append(total)
            total, applied = role_run(inventory, "br-%s" % run_id, run_id, len(clusters), env, work)
            results["role_noop"].append(applied)
            results["role_noop_total"].append(total)
            log("round %d: %s" % (index + 1, ", ".join("%s %.2f s" % (k, v[-1]) for k, v in results.items())))
        med = dict((key, statistics.median(values)) for key, values in results.items())
        print("\nrole apply vs serial kubectl apply --server-side, %d clusters, median of %d rounds" % (len(clusters), args.rounds))
        print("  %-34s %8s %8s" % ("", "first", "no-op"))
        print("  %-34s %7.2fs %7.2fs" % ("kubectl loop (serial)", med["kubectl_first"], med["kubectl_noop"]))
        print("  %-34s %7.2fs %7.2fs" % ("role: apply phase (parallel)", med["role_first"], med["role_noop"]))
        print("  %-34s %7.2fs %7.2fs" % ("role: whole playbook", med["role_first_total"], med["role_noop_total"]))
        first_ratio = med["role_first"] / med["kubectl_first"]
        noop_ratio = med["role_noop"] / med["kubectl_noop"]
        print("ratio (role apply / kubectl loop):          %.2fx (target <= 1.0x) %s" % (first_ratio, "ok" if first_ratio <= 1.0 else "MISSED"))
        print("no-op re-run ratio (role / kubectl):        %.2fx (target <= 0.6x) %s" % (noop_ratio, "ok" if noop_ratio <= 0.6 else "MISSED"))
        print(
            "whole-playbook ratios (role / kubectl):     %.2fx first, %.2fx no-op"
            % (med["role_first_total"] / med["kubectl_first"], med["role_noop_total"] / med["kubectl_noop"])
        )
    finally:
        if own_fleet:
            run([sys.executable, str(FLEET), "stop", "--dir", str(fleet_dir)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
