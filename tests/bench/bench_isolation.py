# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Simulation (not a test): jobs and minutes the isolation takes per conclusion at 8, 32 and 128 nodes.

The isolation's own loop (plugins/module_utils/burnin/isolation_run.py run_isolation, with the finer rounds of
judging/isolation_parts.py) runs against the fake cluster of tests/unit/plugins/module_utils/test_isolation_parts.py
(FaultyCluster: the stand-in's faults), one fault per run, at the position that costs most (the last node):

- slow node: slow in every run (a dead NIC, say); on InfiniBand every one-NIC run is slow too;
- NVLink: a degraded NVLink, slow unless the run turns NVLink off;
- rail: one slow NIC of 8 (mlx5_0..mlx5_7, an H100 node's rails), InfiniBand;
- link: a bad link between two network-node-layer-3 domains (4 nodes each) of one layer-2 domain (16 nodes each),
  the labels an EKS cluster gives (topology.k8s.aws/network-node-layer-*).

A round's minutes are an assumption, not a measurement: ROUND_MINUTES (default 5: a 2-node nccl-tests all_reduce
sweep to 8 GiB, its pods' start and their deletion). A round runs its jobs together, so minutes are rounds x that.
The budget is unbounded here (the role's default, 8 jobs, bounds it).

Run with scripts/env.sh sourced:  python tests/bench/bench_isolation.py [ROUND_MINUTES]
"""

from __future__ import absolute_import, division, print_function

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "unit", "plugins", "module_utils"))

import test_isolation_parts as parts  # noqa: E402  (the fake cluster of the unit tests)

SIZES = (8, 32, 128)
NICS = ["mlx5_%d" % i for i in range(8)]
NIC_LINE = "h0:1:1 [0] NCCL INFO NET/IB : Using " + " ".join("[%d]%s:1/IB" % (i, nic) for i, nic in enumerate(NICS))
LEVELS = {"slow node": "nic", "NVLink": "path", "rail": "nic", "link": "link"}


def labels_of(count):
    return dict(
        (
            "n%d" % i,
            {
                "topology.kubernetes.io/zone": "use1-az1",
                "topology.k8s.aws/network-node-layer-2": "l2-%d" % (i // 16),
                "topology.k8s.aws/network-node-layer-3": "nn-%d" % (i // 4),
            },
        )
        for i in range(count)
    )


def scenario(name, count, round_minutes):
    nodes = parts.nodes(count)
    last = nodes[-1]
    faults = {
        "slow node": {"slow": [last]},
        "NVLink": {"nvlink": [last]},
        "rail": {"rails": {last: ["mlx5_5"]}},
        # Two layer-3 domains of the last layer-2 domain (of 8 nodes: its only two).
        "link": {"links": [["nn-%d" % ((count - 1) // 4 - 1), "nn-%d" % ((count - 1) // 4)]]},
    }[name]
    parts.NICS[:] = NICS
    cluster = parts.FaultyCluster(nodes, labels=labels_of(count), round_minutes=round_minutes, nic_line=NIC_LINE, **faults)
    outcome = parts.isolate(cluster, max_jobs=1000, max_minutes=100000)
    node_rounds = len([entry for entry in outcome["rounds"] if not entry.get("probes")])
    (part,) = [p for p in outcome["parts"] if p["level"] == LEVELS[name]][:1] or [None]
    return {
        "node": (outcome["conclusion"]["outcome"], len(outcome["results"]), node_rounds, outcome["conclusion"]["minutes"]),
        "part": (part["conclusion"] if part else "none", len(outcome["results"]) + len(outcome["part_results"]), len(outcome["rounds"]), outcome["minutes"]),
        "named": parts.isolation_parts.summary(outcome["parts"]) or ", ".join(c["node"] for c in outcome["conclusion"]["culprits"]),
    }


def main(argv):
    round_minutes = float(argv[1]) if len(argv) > 1 else 5.0
    print("round minutes (assumed): %g" % round_minutes)
    print("| fault | nodes | node level: outcome, jobs, rounds, minutes | finer: conclusion, jobs in all, rounds, minutes | named |")
    print("|---|---|---|---|---|")
    for name in LEVELS:
        for count in SIZES:
            got = scenario(name, count, round_minutes)
            print("| %s | %d | %s, %d, %d, %g | %s, %d, %d, %g | %s |" % ((name, count) + got["node"] + got["part"] + (got["named"],)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
