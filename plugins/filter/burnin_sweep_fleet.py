# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_sweep_fleet
short_description: The fleet's verification coverage, as data, Prometheus text or HTML
version_added: 0.3.0
author: gpufleet.burnin maintainers
description:
  - Adds the clusters' coverage (gpufleet.burnin.burnin_sweep_coverage) into the fleet's (docs/sweep.md,
    docs/verdict-schema.json C($defs/sweep_coverage)).
  - V(prometheus) gives C(gpufleet_burnin_nodes_verified_ratio) per cluster and fleet-wide (C(cluster="")),
    C(gpufleet_burnin_node_verified_timestamp_seconds) per verified node and C(gpufleet_burnin_sweep_nodes_skipped) by reason.
options:
  _input:
    description: The clusters' coverage, keyed by cluster (inventory host).
    type: dict
    required: true
  format:
    description: V(data) (a mapping), V(prometheus) or V(html) (text).
    type: str
    default: data
    choices: [data, prometheus, html]
"""

EXAMPLES = r"""
- name: Write the fleet's coverage for node_exporter's textfile collector
  ansible.builtin.copy:
    content: "{{ coverage_by_cluster | gpufleet.burnin.burnin_sweep_fleet(format='prometheus') }}"
    dest: /var/lib/node_exporter/gpufleet_burnin_sweep.prom
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The fleet's coverage (C(gpu_nodes), C(verified), C(verified_percent), C(oldest_verified_at),
    C(never_verified), C(skipped), C(clusters)), or its text.
  type: raw
"""

from ansible.errors import AnsibleFilterError

FORMATS = ("data", "prometheus", "html")


def burnin_sweep_fleet_filter(clusters, format="data"):  # pylint: disable=redefined-builtin
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import sweep

    if not isinstance(clusters, dict):
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_fleet: the input must map clusters to their coverage")
    if format not in FORMATS:
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_fleet: format must be one of %s, got %r" % (", ".join(FORMATS), format))
    bad = sorted(name for name, one in clusters.items() if not isinstance(one, dict) or "gpu_nodes" not in one)
    if bad:
        raise AnsibleFilterError("gpufleet.burnin.burnin_sweep_fleet: not a coverage (burnin_sweep_coverage's value): %s" % ", ".join(map(str, bad)))
    fleet = sweep.fleet_coverage(clusters)
    if format == "prometheus":
        return sweep.prometheus(fleet)
    if format == "html":
        return sweep.html(fleet)
    return fleet


class FilterModule(object):
    def filters(self):
        return {"burnin_sweep_fleet": burnin_sweep_fleet_filter}
