# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every judge of plugins/module_utils/judging/ (a public function named judge*, *_verdict or verdict_for) takes at
most four parameters: the output and the filter's three mappings (facts, job, judging), or fewer (issue 44)."""

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
