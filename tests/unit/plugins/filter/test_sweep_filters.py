# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The sweep's filters chained as roles/burnin/tasks/sweep.yml chains them (a controller test: the filters import
ansible.errors, which ansible-test's module_utils tests cannot)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

# The sweep's fake fleet of tests/unit/plugins/module_utils/test_sweep.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from test_sweep import NOW, fleet, recorded  # noqa: E402 pylint: disable=wrong-import-position


def test_the_filters_chain_as_the_role_uses_them():
    """roles/burnin/tasks/sweep.yml: the select filter's value is the coverage filter's selection, the coverage the
    fleet filter's input."""
    from ansible_collections.gpufleet.burnin.plugins.filter.burnin_sweep_coverage import burnin_sweep_coverage_filter
    from ansible_collections.gpufleet.burnin.plugins.filter.burnin_sweep_fleet import burnin_sweep_fleet_filter
    from ansible_collections.gpufleet.burnin.plugins.filter.burnin_sweep_select import burnin_sweep_select_filter

    nodes, pods = fleet()
    records = [recorded(nodes)]  # kubernetes.core.k8s_info's resources
    chosen = burnin_sweep_select_filter(nodes, pods, 12, 2, 100, hold="taint", run_id="r1", now=NOW, records=records)
    assert chosen["picked"] == ["never", "expired-old"] and chosen["hold_taint"]["value"] == "r1"
    events = [{"reason": "Preempted", "message": "Preempted by pod u on node never"}]
    cover = burnin_sweep_coverage_filter(nodes, chosen, events=events, now=NOW, records=records)
    assert cover["picked"] == ["never", "expired-old"] and cover["preempted"] == ["never"]
    assert burnin_sweep_coverage_filter([], chosen, events=events, now=NOW)["preempted"] == ["never"]
    assert "gpufleet_burnin_nodes_verified_ratio" in burnin_sweep_fleet_filter({"c1": cover}, format="prometheus")
