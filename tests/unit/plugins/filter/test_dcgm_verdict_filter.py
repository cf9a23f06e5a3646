# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin_verdict with results=dcgm-diag: the option reaches the core, and a wrong value is a clear filter error."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter.burnin_verdict import burnin_verdict_filter

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "fixtures", "dcgm")


def test_the_filter_passes_results_through_and_refuses_an_unknown_one():
    with open(os.path.join(FIXTURES, "v4-level3-gpu5-diagnostic-fail.log")) as handle:
        text = handle.read()
    verdict = burnin_verdict_filter({"p": text}, judging={"workload": "dcgm-diag", "results": "dcgm-diag"})
    assert verdict["verdict"] == "fail" and verdict["findings"][0]["evidence"]["failed_gpus"] == [5]
    with pytest.raises(
        AnsibleFilterError, match="^gpufleet.burnin.burnin_verdict: judging.results: must be one of nccl-tests, dcgm-diag, gpu-burn, got 'nvvs'"
    ):
        burnin_verdict_filter("x", judging={"results": "nvvs"})
