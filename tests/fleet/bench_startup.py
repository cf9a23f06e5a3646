"""Measure fleet startup time and memory (a benchmark, not a test).

    python tests/fleet/bench_startup.py [--clusters 4] [--runs 3] [--settle 30] [--json]

Starts a fleet of N clusters (the default fleet plus extra clusters up to N) with cached binaries, records
the time until everything is ready (API servers serving, CRDs Established, nodes in, webhooks of JobSet and Trainer
answering, the agent watching), the RSS of every process right after start and after `--settle` seconds, and the
cores the idle fleet uses over that settle time (CPU seconds / seconds), then stops it. Targets (issue of the
test bed): ready <= 45 s, total RSS <= 6 GB, idle <= 0.5 core for the default fleet. Needs tests/fleet/build.sh.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleet as fleetlib  # noqa: E402

EXTRA = [
    {"name": "oci-iad-gb300-a", "platform": "oci", "gpu_architecture": "gb300", "nodes": 2},
    {"name": "aws-usw2-b200-a", "platform": "aws", "gpu_architecture": "b200", "nodes": 2},
    {"name": "coreweave-h100-a", "platform": "coreweave", "gpu_architecture": "h100", "nodes": 2},
    {"name": "onprem-h200-a", "platform": "onprem", "gpu_architecture": "h200", "nodes": 2, "instance_type": "dgx-h200"},
]


def spec_with(n):
    base = yaml.safe_load((HERE / "default-fleet.yml").read_text())
    clusters = base["clusters"][:n]
    i = 0
    while len(clusters) < n:
        extra = dict(EXTRA[i % len(EXTRA)])
        if i >= len(EXTRA):
            extra["name"] += f"-{i}"
        clusters.append(extra)
        i += 1
    base["clusters"] = clusters
    return base


def rss_table(state):
    rows = {}
    for name, r in fleetlib.all_records(state):
        rows[name] = fleetlib.rss_bytes(r["pid"]) if fleetlib.is_ours(r) else 0
    return rows


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def fleet_cpu(state):
    return sum(cpu_seconds(r["pid"]) for _name, r in fleetlib.all_records(state) if fleetlib.is_ours(r))


def cpu_by_kind(state):
    kinds = {}
    for name, r in fleetlib.all_records(state):
        kind = name.rsplit("/", maxsplit=1)[-1]
        kinds[kind] = round(kinds.get(kind, 0) + cpu_seconds(r["pid"]), 1)
    return kinds


def pss_mib(state):
    total = 0
    for _name, r in fleetlib.all_records(state):
        try:
            with open(f"/proc/{r['pid']}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return round(total / 1024)


def summarise(rows):
    kinds = {}
    for name, v in rows.items():
        kind = name.split("/")[-1]
        kinds[kind] = kinds.get(kind, 0) + v
    return {k: round(v / 2**20) for k, v in kinds.items()} | {"total": round(sum(rows.values()) / 2**20)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--settle", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    fleetlib.find_binaries(fleetlib.KUBERNETES_VERSIONS)
    work = Path(tempfile.mkdtemp(prefix="gpufleet-bench-"))
    spec = work / "spec.yml"
    spec.write_text(yaml.safe_dump(spec_with(a.clusters)))
    results = []
    try:
        for run in range(a.runs):
            d = work / f"run{run}"
            load = os.getloadavg()[0]
            t0 = time.monotonic()
            own0 = os.times()
            state = fleetlib.start(spec, d)
            wall = time.monotonic() - t0
            own1 = os.times()
            try:
                own = (own1.user - own0.user) + (own1.system - own0.system)
                cpu_start = fleet_cpu(state) + own
                cpu_kinds = cpu_by_kind(state) | {"fleet.py": round(own, 1)}
                at_start = rss_table(state)
                cpu_before_idle = fleet_cpu(state)
                time.sleep(a.settle)
                idle_cores = (fleet_cpu(state) - cpu_before_idle) / a.settle
                settled = rss_table(state)
                pss = pss_mib(state)
                cpu_settled = fleet_cpu(state) + (own1.user - own0.user) + (own1.system - own0.system)
            finally:
                fleetlib.stop(d)
            r = {
                "run": run,
                "clusters": len(state["clusters"]),
                "idle_cores": round(idle_cores, 2),
                "startup_seconds": round(wall, 2),
                "load_average_before": round(load, 1),
                "cpu_seconds_at_ready": round(cpu_start, 1),
                "cpu_seconds_after_settle": round(cpu_settled, 1),
                "cpu_seconds_at_ready_by_kind": cpu_kinds,
                "pss_mib_settled": pss,
                "apiservers_ready_seconds_max": max(c["ready_seconds"] for c in state["clusters"].values()),
                "rss_mib_at_start": summarise(at_start),
                "rss_mib_settled": summarise(settled),
            }
            results.append(r)
            if not a.json:
                print(
                    f"run {run}: {r['clusters']} clusters ready in {r['startup_seconds']} s "
                    f"(API servers ready by {r['apiservers_ready_seconds_max']} s); RSS at start "
                    f"{r['rss_mib_at_start']['total']} MiB, after {a.settle:.0f} s {r['rss_mib_settled']['total']} MiB "
                    f"{r['rss_mib_settled']} (PSS {pss} MiB); CPU {r['cpu_seconds_at_ready']} s at ready, "
                    f"{r['cpu_seconds_after_settle']} s after settling {cpu_kinds}; idle {r['idle_cores']} cores; "
                    f"load average before {r['load_average_before']}",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = {
        "cpus": os.cpu_count(),
        "runs": results,
        "startup_seconds_median": statistics.median(r["startup_seconds"] for r in results),
        "startup_seconds_max": max(r["startup_seconds"] for r in results),
        "rss_mib_max": max(max(r["rss_mib_at_start"]["total"], r["rss_mib_settled"]["total"]) for r in results),
        "idle_cores_max": max(r["idle_cores"] for r in results),
    }
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"median startup {summary['startup_seconds_median']} s, max {summary['startup_seconds_max']} s; "
            f"max total RSS {summary['rss_mib_max']} MiB; idle at most {summary['idle_cores_max']} cores"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
