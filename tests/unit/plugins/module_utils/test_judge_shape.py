# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every judge of plugins/module_utils/judging/ (a public function named judge*, *_verdict or verdict_for) takes at
most four parameters: the output and the filter's three mappings (facts, job, judging), or fewer; one facts_of builds
the facts of every stage (issue 44)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import glob
import os

JUDGING = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "module_utils", "judging"))
MOST = 4


def judges():
    found = []
    for path in sorted(glob.glob(os.path.join(JUDGING, "*.py"))):
        with open(path) as handle:
            tree = ast.parse(handle.read(), path)
        for node in tree.body:
            named = (
                node.name.startswith("judge") or node.name.endswith("_verdict") or node.name == "verdict_for" if isinstance(node, ast.FunctionDef) else False
            )
            if named and not node.name.startswith("_"):
                args = node.args
                count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs) + bool(args.vararg) + bool(args.kwarg)
                found.append(("%s.%s" % (os.path.basename(path)[:-3], node.name), count))
    return found


def test_no_judge_takes_more_than_four_parameters():
    found = dict(judges())
    # The walk finds the judges of every results kind (so an empty glob cannot pass).
    assert {"verdict.verdict_for", "nccl_judge.judge", "dcgm.dcgm_verdict", "gpu.gpu_verdict", "node_stage.judge_node_stage"} <= set(found)
    assert dict((name, count) for name, count in found.items() if count > MOST) == {}


def test_one_facts_of_builds_every_stages_facts():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.verdict import facts_of

    record = {"platform": "aws", "gpu_architecture": "h100", "gpus_per_node": "8", "instance_type": "p5.48xlarge", "outcome": "Complete"}
    # A run of the fleet stage or of a pair: what it was asked for is in its facts, MNNVL off as well as on.
    assert facts_of(record, 2, False) == {
        "platform": "aws",
        "gpu_architecture": "h100",
        "gpus_per_node": 8,
        "instance_type": "p5.48xlarge",
        "nodes": 2,
        "mnnvl": False,
    }
    assert facts_of(record, "4", 1)["nodes"] == 4 and facts_of(record, "4", 1)["mnnvl"] is True
    # A node stage's pod: no node count and no MNNVL; an empty value is unknown (None), never "".
    assert facts_of({"platform": "", "gpu_architecture": "", "gpus_per_node": "", "instance_type": ""}) == {
        "platform": None,
        "gpu_architecture": None,
        "gpus_per_node": None,
        "instance_type": None,
    }
    assert facts_of({"gpus_per_node": 0})["gpus_per_node"] == 0
    # Each stage route builds its facts with it: no judge's facts are written out by hand in burnin/.
    burnin = os.path.join(os.path.dirname(JUDGING), "burnin")
    for path in sorted(glob.glob(os.path.join(burnin, "*.py"))):
        with open(path) as handle:
            assert '"gpu_architecture": result.get(' not in handle.read(), path
