#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_report
short_description: Write a fleet burn-in's verdicts as JUnit XML, JSON and a self-contained HTML page
version_added: 0.1.0
description:
  - Writes the verdicts of every cluster of a burn-in run into O(directory) on the controller.
  - C(junit) - C(<basename>.junit.xml), one C(testsuite) per cluster and one C(testcase) per cluster and workload; C(fail) is
    a C(failure), C(error) an C(error), C(warn) passes with the reason in C(system-out). CI servers and AWX show it.
  - C(json) - C(<basename>.json), the machine-readable report (schema C(gpufleet.burnin/report/v1)) - summary, and per cluster
    its testcases with verdict, reason, checks, thresholds and their sources, metrics, busbw series and nodes.
  - C(html) - C(<basename>.html), one page without scripts or external assets - a fleet overview (an inline SVG chart of every
    cluster's margin over its pass threshold, worst first, coloured by verdict; the counts by verdict, platform and GPU, which
    filter the clusters, CSS only), then one folded row per cluster (unfolded in fleets of up to 12 clusters) with, per
    workload, the reason, an inline SVG plot of busbw against message size with the pass threshold, the warning band and the
    published measurement drawn, the checks and the succeeded and failed nodes.
  - A cluster without a verdict (failed before its burn-in ran) gets one testcase judged by its outcome.
  - History - this run is compared with an earlier run's JSON report (O(baseline), or the latest earlier run under
    O(history_dir)) - clusters by name, testcases by workload and collective, their peak and average busbw. A drop of more
    than O(regression_percent) makes the testcase at least C(warn), with a reason naming the baseline run, both values and
    the change; it never fails a run on its own. Each cluster of the JSON report gains a C(baseline) block, the HTML page a
    C(vs baseline) column and line, the JUnit suite C(baseline) properties.
  - History per node - each node finding (the results' C(node_findings)) whose evidence has C(busbw) and C(size) is
    compared with the baseline's same node, stage and size; a drop beyond O(regression_percent) warns the cluster and
    names the node (the cluster's C(baseline.nodes) and C(baseline.regressed_nodes), an HTML table of the nodes against
    the baseline, the JUnit property C(baseline_regressed_nodes)).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - gpufleet.burnin.controller
attributes:
  check_mode:
    support: full
    description: Writes nothing; C(changed) and C(changed_files) say what would change.
  diff_mode:
    support: none
    description: No diff is shown.
options:
  results:
    description:
      - The fleet's results keyed by cluster (the role's C(burnin_fleet_results)), or a list of cluster results with C(cluster).
      - Each has C(verdicts) (a list of P(gpufleet.burnin.burnin_verdict#filter) results) or C(verdict) (one), and C(outcome),
        C(reason), C(platform), C(gpu_architecture), C(started), C(finished), C(namespace), C(trainjob), C(run_id) when known.
    type: raw
    required: true
  directory:
    description: Directory to write into, created when missing.
    type: path
    required: true
  formats:
    description: The reports to write.
    type: list
    elements: str
    choices: [json, junit, html]
    default: [json, junit, html]
  run_id:
    description: The run's identifier, in titles and the JUnit suite name; defaults to the clusters' C(run_id).
    type: str
  title:
    description: Title of the reports.
    type: str
    default: GPU burn-in
  generated:
    description: Timestamp written into the reports; defaults to now (UTC). Set it to make re-runs idempotent.
    type: str
  basename:
    description: File name prefix.
    type: str
    default: burnin-report
  baseline:
    description:
      - An earlier run's JSON report (C(<basename>.json)) or the run directory holding it, to compare this run with.
      - Empty for the latest earlier run under O(history_dir) (none when that is empty too).
      - A path that does not exist is no comparison, with a note in the reports. A file that is not a JSON report of this
        collection fails the task, naming the file and the field, after the reports are written without a comparison.
    type: str
    default: ''
  history_dir:
    description:
      - Directory whose subdirectories are runs (C(<history_dir>/<run id>/<basename>.json)), searched when O(baseline) is
        empty; the run whose JSON report was written last wins, never the run in O(directory) or named O(run_id).
    type: str
    default: ''
  regression_percent:
    description:
      - A drop of the peak or average busbw by more than this percentage against the baseline warns (0 to 100; 100 never warns).
    type: float
    default: 10
  sibling_key:
    description:
      - The fields of a cluster's result that make a SKU; nodes are judged against the nodes of their SKU in every cluster.
    type: list
    elements: str
    default: [platform, gpu_architecture, instance_type]
  sibling_rule:
    description:
      - Percent below its SKU's baseline a node's figure may be; empty takes each metric's noise (three robust standard
        deviations, at least 5 percent). See docs/verdicts.md.
    type: raw
  sibling_min:
    description:
      - Fewest samples of a SKU and metric (this run's and the merged earlier runs') for the sibling rule; fewer leave the rule out.
    type: int
    default: 4
  sibling_verdict:
    description:
      - The verdict of a node below its SKU's baseline by more than the rule.
    type: str
    choices: [warn, fail]
    default: warn
  baseline_dir:
    description:
      - Directory of earlier runs (each holding C(burnin-baselines.json)) whose sibling samples are merged into this run's
        baselines; empty merges none. This run's baselines are written as C(burnin-baselines.json) beside the reports.
    type: str
    default: ''
  golden:
    description:
      - The golden versions per SKU (a mapping or the path of a YAML or JSON file) - each SKU, a prefix of it or C(*) mapped
        to each key's allowed versions; see the role's C(burnin_golden).
    type: raw
  drift_fail:
    description:
      - The drift check's keys (driver, cuda, kubelet, kernel, os_image, container_runtime, nccl, net_plugin, images,
        nccl_env) whose drift fails instead of warns.
    type: list
    elements: str
    default: []
  offender_failures:
    description:
      - A node that failed, or fell below its siblings, in this many of its last O(offender_runs) runs (this one and the
        earlier reports under O(history_dir)) is a repeat offender, action C(replace).
    type: int
    default: 3
  offender_runs:
    description:
      - The window of runs of O(offender_failures) (at most 50).
    type: int
    default: 4
seealso:
  - module: gpufleet.burnin.workload_plan
"""

EXAMPLES = r"""
- name: Write the fleet's reports
  gpufleet.burnin.burnin_report:
    results: "{{ burnin_fleet_results }}"
    directory: "{{ burnin_report_dir }}/{{ burnin_run_id }}"
    run_id: "{{ burnin_run_id }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
files:
  description: The path of each report, by format.
  returned: success
  type: dict
  sample:
    json: /srv/burnin/20261130t0700/burnin-report.json
    junit: /srv/burnin/20261130t0700/burnin-report.junit.xml
    html: /srv/burnin/20261130t0700/burnin-report.html
changed_files:
  description: The reports whose content changed (or would, in check mode).
  returned: success
  type: list
  elements: str
summary:
  description: Counts per verdict (pass, warn, fail, error), clusters, testcases, the worst verdict and the clusters that failed.
  returned: success
  type: dict
baseline:
  description:
    - The comparison with the baseline - its C(run_id), C(file), C(generated), the C(regression_percent), the
      C(regressed_clusters), the C(regressed_nodes) (C(<cluster>/<node>)) and a C(note) (why nothing was compared, when it
      was not).
  returned: success
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import refuse_on_host
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import report_argument_spec


def main():
    refuse_on_host(report_argument_spec(), "gpufleet.burnin.burnin_report", "writes on the controller")


if __name__ == "__main__":
    main()
