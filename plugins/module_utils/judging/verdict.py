# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Burn-in verdicts: the one call that judges a run (what the ``burnin_verdict`` filter returns), dispatched by the
workload's results kind to its judge: judging/nccl_judge.py (nccl-tests, and torch or exec runs by their job
outcome), judging/dcgm.py (dcgm-diag), judging/gpu.py (gpu-burn).

A verdict is ``pass``, ``warn``, ``fail`` or ``error`` (no result), always with a reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm, gpu, nccl_judge, nccl_results

# Each results kind (a workload's ``results`` in the catalogue): its parser, the judge of a run (the fleet stage, the
# filter), the judge of one pod of a node stage (judging/node_stage.py: its node's finding), the keys of ``judging``
# the run's judge reads (None: all) and the stage its findings are of (None: the judge's own).
KINDS = {
    "nccl-tests": {"parse": nccl_results.parse_nccl_output, "judge": nccl_judge.nccl_verdict, "node": nccl_judge.judge_nccl_pod, "reads": None, "stage": None},
    "dcgm-diag": {"parse": dcgm.parse_diag_output, "judge": dcgm.dcgm_verdict, "node": dcgm.judge_dcgm_pod, "reads": ("workload",), "stage": None},
    "gpu-burn": {
        "parse": gpu.parse_gpu_output,
        "judge": gpu.gpu_verdict,
        "node": gpu.judge_gpu_pod,
        "reads": ("workload", "sibling_percent"),
        "stage": "fleet",
    },
}


def facts_of(record, nodes=None, mnnvl=None):
    """The ``facts`` mapping of a run (the filter's, plugins/filter/burnin_verdict.py) from a stage's RECORD (its
    ``platform``, ``gpu_architecture``, ``gpus_per_node`` and ``instance_type``; an empty value is unknown, None) and
    what the run was asked for: NODES and MNNVL, left out when None (a node stage's pod is judged alone)."""
    gpus = record.get("gpus_per_node")
    facts = {
        "platform": record.get("platform") or None,
        "gpu_architecture": record.get("gpu_architecture") or None,
        "gpus_per_node": int(gpus) if gpus not in (None, "") else None,
        "instance_type": record.get("instance_type") or None,
    }
    if nodes is not None:
        facts["nodes"] = int(nodes)
    if mnnvl is not None:
        facts["mnnvl"] = bool(mnnvl)
    return facts


def verdict_for(output, facts=None, job=None, judging=None):
    """Parse (when needed), judge and attribute in one call; what the ``burnin_verdict`` filter returns.

    ``facts``, ``job`` and ``judging`` are the filter's mappings (plugins/filter/burnin_verdict.py documents each key).
    ``judging.results``: how the workload's output is read (its catalogue entry's ``results``): ``nccl-tests`` (or
    None, the default) by judging/nccl_judge.py nccl_verdict; ``dcgm-diag`` judges every pod's DCGM diagnostic JSON
    (judging/dcgm.py dcgm_verdict); ``gpu-burn`` every pod's per-GPU lines (judging/gpu.py gpu_verdict), with
    ``sibling_percent`` (the workload's rendered ``judging``) when set.
    """
    facts, judging = dict(facts or {}), judging or {}
    results = judging.get("results")
    if results not in (None, "") and results not in KINDS:
        raise ConfigError("results", "must be nccl-tests, dcgm-diag or gpu-burn (the workload's results), got %r" % (results,))
    kind = KINDS[results or "nccl-tests"]
    if kind["reads"] is not None:
        # A per-node kind reads only these of the run's judging (gpu-burn's thresholds are another document).
        judging = dict((key, judging.get(key)) for key in kind["reads"])
        if kind["stage"]:
            judging["stage"] = kind["stage"]
    return kind["judge"](output, facts, job, judging)


__all__ = ["KINDS", "facts_of", "verdict_for"]
