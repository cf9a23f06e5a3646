# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""burnin_passed and burnin_summary: thin over module_utils/judging/outcomes.py, with clear errors on bad input."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.filter import burnin_passed, burnin_summary


def test_each_file_exports_exactly_its_filter():
    assert list(burnin_passed.FilterModule().filters()) == ["burnin_passed"]
    assert list(burnin_summary.FilterModule().filters()) == ["burnin_summary"]


def test_passed_and_its_error():
    passed = burnin_passed.burnin_passed_filter
    assert passed({"outcome": "Complete", "verdict": {"verdict": "warn"}}) is True
    assert passed({"outcome": "Complete", "verdict": {"verdict": "error"}}) is False
    with pytest.raises(AnsibleFilterError, match="burnin_passed: the input must be a cluster's result"):
        passed("Complete")


def test_summary_and_its_error():
    summary = burnin_summary.burnin_summary_filter({"a": {"cluster": "a", "outcome": "Cleaned"}}, "cleanup", "r1")
    assert summary["header"] == "cleanup r1: 1 of 1 clusters passed, 0 failed"
    with pytest.raises(AnsibleFilterError, match="must map each cluster to its result"):
        burnin_summary.burnin_summary_filter({"a": "Complete"})
