# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The stages of a burn-in, one row each: the only list of stages. Every list of stages is read from here:
burnin/stages.py (what burnin_stages accepts, the default, the node stages' workloads) and the plugins' argument specs
(validation/argspec.py); the doc stubs' ``choices``, the role's argument specs and defaults and docs/stages.md are
checked against the rows by tests/unit/plugins/module_utils/test_stage_table.py. Adding a stage: docs/layout.md.
Code that treats the stages of one scope as no other (the ``fleet`` scope's TrainJob keeps the run's name and its
verdict is the cluster's; the ``pairs`` scope runs its pairs in its own action) asks for the scope (:func:`scope_of`),
never for a stage's name.

A row: ``stage``; ``workload``, the catalogue workload it runs (templates/workloads/<name>.yaml), or None for the
fleet stage (burnin_workload) and isolation (pair jobs of the fleet stage's workload); ``results``, the results kind
its output is judged as (judging/), None when it is its workload's; ``scope``: ``node`` (one pod on every GPU node at
once, each node judged on its own output), ``fleet`` (one job over burnin_nodes nodes) or ``pairs`` (2-node jobs run
inside the stage's action); ``job``, whether it runs a TrainJob of its own; ``default``, whether burnin_stages runs
it by default; ``after``, the stage that must run before it and why."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

STAGE_TABLE = (
    {"stage": "node", "workload": "nccl-all-reduce-node", "results": "nccl-tests", "scope": "node", "job": True, "default": True},
    {"stage": "fleet", "workload": None, "results": None, "scope": "fleet", "job": True, "default": True},
    {
        "stage": "isolation",
        "workload": None,
        "results": "nccl-tests",
        "scope": "pairs",
        "job": False,
        "default": True,
        "after": ("fleet", "isolation finds the bad nodes of the fleet stage"),
    },
    {"stage": "dcgm", "workload": "dcgm-diag", "results": "dcgm-diag", "scope": "node", "job": True, "default": False},
    {"stage": "gpu", "workload": "gpu-burn", "results": "gpu-burn", "scope": "node", "job": True, "default": False},
)

STAGES = tuple(row["stage"] for row in STAGE_TABLE)
DEFAULT_STAGES = tuple(row["stage"] for row in STAGE_TABLE if row["default"])
# Stages that run a TrainJob of their own (isolation runs its pair jobs inside its action).
JOB_STAGES = tuple(row["stage"] for row in STAGE_TABLE if row["job"])
# Node stages: a catalogue workload on every GPU node at once, one pod per node.
NODE_STAGE_WORKLOADS = dict((row["stage"], row["workload"]) for row in STAGE_TABLE if row["scope"] == "node")
SCOPES = dict((row["stage"], row["scope"]) for row in STAGE_TABLE)
RESULTS = dict((row["stage"], row["results"]) for row in STAGE_TABLE)
# stage -> (the stage that must come before it, why).
AFTER = dict((row["stage"], row["after"]) for row in STAGE_TABLE if row.get("after"))


def scope_of(stage):
    """The scope of STAGE (``node``, ``fleet`` or ``pairs``), or None for a name that is no stage (a finding of the
    report's own checks, such as ``drift``)."""
    return SCOPES.get(stage)


def runs_on_every_node(stage):
    """Whether STAGE is a node stage (scope ``node``): its catalogue workload on every GPU node, judged per node."""
    return scope_of(stage) == "node"


__all__ = ["AFTER", "DEFAULT_STAGES", "JOB_STAGES", "NODE_STAGE_WORKLOADS", "RESULTS", "SCOPES", "STAGES", "STAGE_TABLE", "runs_on_every_node", "scope_of"]
