# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stages of a burn-in and their attempts (roles/burnin/tasks/main.yml runs them in the order of burnin_stages).

Stages: ``node`` (a single-node all_reduce over all local GPUs on every GPU node at once, each node judged on its own
output: plugins/module_utils/judging/node_stage.py), ``fleet`` (the catalogue workload burnin_workload over
burnin_nodes nodes, judged as before: verdict.py), ``isolation`` (finding the culprit nodes of a failed or warned
fleet stage: module_utils/burnin/isolation_stage.py), ``dcgm`` (a DCGM diagnostic on every GPU node, a node stage like
``node``) and ``gpu`` (a per-GPU matmul and memory test on every GPU node, judged per GPU: judging/gpu.py). A stage
that runs a TrainJob runs it under its own name; a failed or warned attempt is run again up to burnin_repeats times
and every attempt is kept (Azure/azurehpc PR 690: repeat up to N times, pass on the first run above the threshold). The stage's verdict is its last attempt's.

A cluster's result keeps ``stages``: [{stage, verdict, reason, attempts: [{attempt, trainjob, outcome, verdict,
reason}]}], in the order they ran.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import stage_index
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import VERDICTS

# The stages, one row each (module_utils/stage_table.py): the names every check below reads.
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import (
    AFTER,
    DEFAULT_STAGES,
    JOB_STAGES,
    NODE_STAGE_WORKLOADS,
    STAGES,
    scope_of,
)

REPEATED_VERDICTS = ("warn", "fail")
REPEATS_MAX = 10
_SEVERITY = dict((name, rank) for rank, name in enumerate(VERDICTS))


def check_stages(name, value, available_workloads=None):
    """burnin_stages: a non-empty list of distinct stage names of STAGES, ``isolation`` after ``fleet``; a node
    stage's workload must be in the catalogue (AVAILABLE_WORKLOADS: its names). Returns the list."""
    if isinstance(value, str):
        value = [item.strip() for item in value.replace("\n", ",").split(",") if item.strip()]
    if not isinstance(value, list) or not value:
        raise ConfigError(name, "must be a non-empty list of stages, in the order to run them, from: %s; got %r" % (", ".join(STAGES), value))
    seen = []
    for index, stage in enumerate(value):
        if stage not in STAGES:
            raise ConfigError("%s[%d]" % (name, index), "unknown stage %r; allowed: %s" % (stage, ", ".join(STAGES)))
        if stage in seen:
            raise ConfigError("%s[%d]" % (name, index), "stage %s is listed twice (burnin_repeats runs a stage again)" % stage)
        seen.append(stage)
    for stage in seen:
        before, why = AFTER.get(stage, (None, ""))
        if before is not None and (before not in seen or seen.index(stage) < seen.index(before)):
            raise ConfigError(name, "%s, so %s must come before it, got %s" % (why, before, ", ".join(seen)))
    if available_workloads is not None:
        for stage in seen:
            workload = NODE_STAGE_WORKLOADS.get(stage)
            if workload and workload not in available_workloads:
                raise ConfigError(
                    name,
                    "stage %s runs the catalogue workload %s, but %s is missing; available: %s"
                    % (stage, workload, os.path.join("templates", "workloads", workload + ".yaml"), ", ".join(available_workloads) or "none"),
                )
    return list(seen)


def check_repeats(name, value):
    """burnin_repeats: an integer from 0 to REPEATS_MAX (survey text parsed)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= REPEATS_MAX:
        raise ConfigError(name, "must be an integer from 0 to %d (how many times a failed or warned stage runs again), got %r" % (REPEATS_MAX, value))
    return value


def stage_trainjob(trainjob, stage, attempt=1):
    """The TrainJob name of a STAGE's ATTEMPT: the fleet stage keeps the run's name (``<entry>-<run id>``, as before
    stages), the others add the stage (``<entry>-<run id>-node``); attempts after the first add their number."""
    name = trainjob if scope_of(stage) == "fleet" else "%s-%s" % (trainjob, stage)
    return name if int(attempt) <= 1 else "%s-%d" % (name, int(attempt))


def longest_trainjob(trainjob, stages, repeats=0):
    """The longest TrainJob name the run will use (for the DNS-label check before anything is applied)."""
    names = [stage_trainjob(trainjob, stage, int(repeats) + 1) for stage in stages or ["fleet"] if stage in JOB_STAGES]
    return max(names or [trainjob], key=len)


def gpu_node_count(cluster):
    """How many GPU nodes detection found (cluster_detect's result), or 0 when the nodes were not listed."""
    cluster = cluster or {}
    detection = cluster.get("detection") or {}
    if detection.get("gpu_nodes"):
        return int(detection["gpu_nodes"])
    if cluster.get("nodes"):
        from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import detect_cluster

        return detect_cluster(cluster["nodes"])["gpu_nodes"]
    return 0


def stage_variables(variables, stage, cluster=None):
    """The role's checked VARIABLES for STAGE's plan: the fleet stage's as they are; a node stage's run its catalogue
    workload (NODE_STAGE_WORKLOADS) on every GPU node detection found (burnin_nodes when the nodes were not listed),
    with its own runtime (entry ``<burnin_entry_name>-<stage>``) and the user's image, env, volumes and overrides, but
    not the fleet workload's parameters, framework or trainer: its workload's parameters are
    ``burnin_stage_params[<stage>]`` (checked by role_vars as burnin_workload_params is). Returns (variables, note)."""
    if stage not in NODE_STAGE_WORKLOADS:
        return dict(variables), ""
    # The sweep's node stages run on exactly the nodes it picked (burnin_sweep_nodes, burnin/sweep.py pinned()).
    nodes = len(variables.get("burnin_sweep_nodes") or []) or gpu_node_count(cluster)
    note = ""
    if not nodes:
        nodes = int(variables.get("burnin_nodes") or 1)
        note = "the GPU nodes could not be counted (nodes not listed): the %s stage runs on burnin_nodes (%d) nodes" % (stage, nodes)
    out = dict(variables)
    out.update(
        burnin_workload=NODE_STAGE_WORKLOADS[stage],
        burnin_workload_params=dict((variables.get("burnin_stage_params") or {}).get(stage) or {}),
        burnin_framework="",
        burnin_trainer={},
        burnin_nodes=nodes,
        burnin_entry_name="%s-%s" % (variables.get("burnin_entry_name") or "nccl-burnin", stage),
    )
    return out, note


def attempts_of(result, stage):
    """The attempts a STAGE made so far in a cluster's RESULT."""
    stages = (result or {}).get("stages") or []
    index = stage_index(stages, stage)
    return list(stages[index].get("attempts") or []) if index is not None else []


def next_attempt(result, stage, repeats):
    """The number of STAGE's next attempt, or 0 when it is done: its first attempt, or another when the last one
    warned or failed and fewer than REPEATS reruns were made."""
    attempts = attempts_of(result, stage)
    if not attempts:
        return 1
    if attempts[-1].get("verdict") in REPEATED_VERDICTS and len(attempts) <= int(repeats):
        return len(attempts) + 1
    return 0


def stages_verdict(result):
    """The worst verdict of the stages of a cluster's RESULT (their last attempts), or None without stages."""
    names = [record.get("verdict") for record in (result or {}).get("stages") or [] if record.get("verdict") in VERDICTS]
    if not names:
        return None
    return max(names, key=lambda name: _SEVERITY[name])


def stop_after(verdict):
    """Whether later stages are skipped after a stage ended with VERDICT: an ``error`` is no result at all (the job
    never finished or could not be read), and a next job on the same nodes would wait for the same GPUs."""
    return verdict == "error"


__all__ = [
    "DEFAULT_STAGES",
    "JOB_STAGES",
    "NODE_STAGE_WORKLOADS",
    "STAGES",
    "attempts_of",
    "check_repeats",
    "check_stages",
    "gpu_node_count",
    "longest_trainjob",
    "next_attempt",
    "stage_trainjob",
    "stage_variables",
    "stages_verdict",
]
