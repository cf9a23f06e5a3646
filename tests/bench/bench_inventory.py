# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark, not a test: the inventory plugin gpufleet.burnin.clusters reading N kubeconfig contexts spread over the
test fleet's API servers, with detection: wall time and API requests per cluster, against a baseline in the same run.

    source scripts/env.sh && python tests/bench/bench_inventory.py [--fleet-dir DIR] [--contexts 200] [--workers 20]
                                                                   [--timeout 60] [--json PATH] [--keep-work]

1. starts tests/fleet/clouds-fleet.yml (4 clusters) unless --fleet-dir names a running fleet (all its clusters);
2. gives each cluster the bench's own identity (bench_scale.py's bench_identity: a ServiceAccount token and a
   FlowSchema matching only it), so the API servers count the plugin's requests apart from every other client's;
3. writes one kubeconfig of --contexts contexts, context i on cluster i mod clusters (round robin), each a cluster
   of its own for the plugin (its own context, client and reads);
4. runs `ansible-inventory --list` on an inventory file of the plugin:
   - baseline: `detect: false`, the same contexts: Ansible's and the plugin's cost of N hosts without reading a cluster;
   - detect: `detect: true` at --workers, the clusters read in parallel; every host must land in its platform's group;
   - serial: `detect: true`, `workers: 1`, what the parallel reads save;
   - cached: `detect: true` with the jsonfile cache, read twice: the second read's wall time (no request).
   Per run: wall time, and the requests to the API servers from the bench's identity
   (`apiserver_flowcontrol_dispatched_requests_total{flow_schema="gpufleet-bench-ansible"}`) per context.
Ratios: detect/baseline, serial/detect, cached/baseline.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from bench_role_apply import FLEET, REPO, log, run
from bench_scale import FLOW_SCHEMA, admin, ansible_requests, bench_identity

CLOUDS_SPEC = REPO / "tests" / "fleet" / "clouds-fleet.yml"
# The clouds fleet's on-prem cluster: nothing on its nodes names the platform.
PLATFORMS = {"*onprem-*": "onprem"}


def many_contexts(kubeconfig, clusters, count, path):
    """KUBECONFIG's contexts cloned to COUNT contexts `ctx-NNN-<cluster>`, context i on cluster i mod len(CLUSTERS)."""
    config = yaml.safe_load(Path(kubeconfig).read_text())
    contexts = dict((c["name"], c) for c in config["contexts"])
    cloned = []
    for index in range(count):
        cluster = clusters[index % len(clusters)]
        cloned.append({"name": "ctx-%03d-%s" % (index, cluster), "context": dict(contexts[cluster]["context"])})
    config["contexts"] = cloned
    config["current-context"] = cloned[0]["name"]
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return [c["name"] for c in cloned]


def inventory_run(name, work, kubeconfig, state, clusters, **options):
    directory = work / name
    directory.mkdir()
    path = directory / "clusters.yml"
    path.write_text(yaml.safe_dump(dict({"plugin": "gpufleet.burnin.clusters", "kubeconfigs": [kubeconfig], "platforms": PLATFORMS}, **options)))
    before = dict((c, ansible_requests(admin(state, c))) for c in clusters)
    elapsed, proc = run(["ansible-inventory", "-i", str(path), "--list"])
    requests = sum(ansible_requests(admin(state, c)) - before[c] for c in clusters)
    listed = json.loads(proc.stdout)
    return {"name": name, "wall": elapsed, "requests": requests, "listed": listed, "path": str(path)}


def check_groups(listed, state, contexts):
    """Every context's host in its cluster's <platform>_<gpu> group, none unreachable."""
    for context in contexts:
        cluster = state["clusters"][context.split("-", 2)[2]]
        group = "%s_%s" % (cluster["platform"], cluster["gpu_architecture"])
        if context not in listed.get(group, {}).get("hosts", []):
            sys.exit("[bench] %s is not in group %s: %s" % (context, group, json.dumps(listed["_meta"]["hostvars"].get(context))[:2000]))
    if listed.get("unreachable", {}).get("hosts"):
        sys.exit("[bench] unreachable: %s" % listed["unreachable"]["hosts"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fleet-dir", help="a running fleet (tests/fleet/fleet.py start); default: start the clouds fleet")
    parser.add_argument("--contexts", type=int, default=200, help="kubeconfig contexts (default 200)")
    parser.add_argument("--workers", type=int, default=20, help="the plugin's workers (default 20, its default)")
    parser.add_argument("--timeout", type=int, default=60, help="the plugin's per-cluster timeout (default 60)")
    parser.add_argument("--json", help="write the results to this file as JSON")
    parser.add_argument("--keep-work", action="store_true", help="keep the work dir")
    args = parser.parse_args()
    if not shutil.which("ansible-inventory"):
        sys.exit("[bench] ansible-inventory is not on PATH: source scripts/env.sh first")
    work = Path(tempfile.mkdtemp(prefix="gpufleet-inventory-"))
    fleet_dir = Path(args.fleet_dir) if args.fleet_dir else None
    try:
        if fleet_dir is None:
            fleet_dir = work / "fleet"
            log("starting the clouds fleet in %s" % fleet_dir)
            run([sys.executable, str(FLEET), "start", "--spec", str(CLOUDS_SPEC), "--dir", str(fleet_dir)])
        state = json.loads((fleet_dir / "state.json").read_text())
        clusters = sorted(state["clusters"])
        kubeconfig = bench_identity(state, clusters, work)
        contexts = many_contexts(kubeconfig, clusters, args.contexts, work / "many.kubeconfig")
        many = str(work / "many.kubeconfig")
        log("%d contexts over %d API servers" % (len(contexts), len(clusters)))
        results = [inventory_run("baseline", work, many, state, clusters, detect=False)]
        detect = inventory_run("detect", work, many, state, clusters, workers=args.workers, timeout=args.timeout)
        check_groups(detect["listed"], state, contexts)
        serial = inventory_run("serial", work, many, state, clusters, workers=1, timeout=args.timeout)
        check_groups(serial["listed"], state, contexts)
        cache = {"cache": True, "cache_plugin": "ansible.builtin.jsonfile", "cache_connection": str(work / "cache"), "cache_timeout": 3600}
        first = inventory_run("cache-fill", work, many, state, clusters, workers=args.workers, timeout=args.timeout, **cache)
        # The same inventory file again: the second read, from the cache.
        before = dict((c, ansible_requests(admin(state, c))) for c in clusters)
        elapsed, proc = run(["ansible-inventory", "-i", first["path"], "--list"])
        cached = {"name": "cached", "wall": elapsed, "requests": sum(ansible_requests(admin(state, c)) - before[c] for c in clusters)}
        check_groups(json.loads(proc.stdout), state, contexts)
        results += [detect, serial, first, cached]
    finally:
        if fleet_dir is not None and not args.fleet_dir:
            subprocess.run([sys.executable, str(FLEET), "stop", "--dir", str(fleet_dir)], check=False)
        if not args.keep_work:
            shutil.rmtree(str(work), ignore_errors=True)
        else:
            log("work dir kept: %s" % work)

    rows = [dict((k, v) for k, v in r.items() if k in ("name", "wall", "requests")) for r in results]
    base = rows[0]["wall"]
    print(
        "\n%d contexts over %d API servers, workers %d (FlowSchema %s counts the plugin's requests)" % (len(contexts), len(clusters), args.workers, FLOW_SCHEMA)
    )
    print("%-11s %9s %11s %12s %13s" % ("run", "wall s", "x baseline", "requests", "per context"))
    for row in rows:
        print("%-11s %9.2f %11.2f %12d %13.2f" % (row["name"], row["wall"], row["wall"] / base, row["requests"], row["requests"] / float(len(contexts))))
    walls = dict((row["name"], row["wall"]) for row in rows)
    print("serial/detect: %.2fx; cached/baseline: %.2fx" % (walls["serial"] / walls["detect"], walls["cached"] / base))
    if args.json:
        Path(args.json).write_text(json.dumps({"contexts": len(contexts), "clusters": len(clusters), "workers": args.workers, "runs": rows}, indent=2))


if __name__ == "__main__":
    main()
