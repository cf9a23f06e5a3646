#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_export
short_description: Write a burn-in run's Prometheus metrics, push them to a Pushgateway, post the JSON report to a webhook
version_added: 0.3.0
description:
  - Reads the run's JSON report (O(report), written by M(gpufleet.burnin.burnin_report)) on the controller and, each
    when asked, does three things. Details and an example of each - C(docs/metrics-export.md).
  - Metrics file - O(metrics_dir) gets C(gpufleet-burnin-<run id>.prom), the run's figures in the Prometheus text
    format written with the C(prometheus-client) library, for node_exporter's textfile collector
    (C(--collector.textfile.directory)) - per cluster its verdict (C(gpufleet_burnin_cluster_info), the state gauge
    C(gpufleet_burnin_cluster_verdict)), duration, each stage's verdict, the busbw of every stage in bytes per second
    against its pass and warn thresholds, per node its verdict and busbw, per DCGM test its status and per GPU its
    failed tests. Every series has a C(run_id) label, so the files of several runs do not collide. Written through a
    temporary file and a rename, so the collector never reads half a file.
  - Push - O(pushgateway_url) receives the same metrics, one group per cluster (grouping key C(job)=O(pushgateway_job)
    and C(cluster)), replaced by the cluster's next run (HTTP PUT).
  - Export - O(export_url) receives the JSON report as it is on disk (HTTP POST, C(Content-Type application/json)), with
    the headers C(Idempotency-Key) and C(X-Burnin-Run-Id) set to O(run_id) and O(export_headers) (credentials, never
    shown - the result masks their values).
  - A push or post is retried O(attempts) times in all, waiting O(backoff) seconds doubled each time (at most 60), on no
    answer, HTTP 408, 425, 429 and 5xx; any other answer ends it. Every attempt sends the same body. A push or post that
    still fails does not fail the task - the result's C(notes) says what failed and why, the fleet summary shows it.
  - Every request ends - O(timeout) bounds the whole request (connection, body and the whole answer), not each read, and
    an answer that is not HTTP (a wrong port, an SSH banner), a reset or a TLS failure is a failed attempt, never an error.
  - The push's budget is fleet-wide - once one cluster group got no answer (or only busy answers) on all its attempts,
    the later groups are skipped with one note, so a Pushgateway that does not answer costs one group's attempts, not
    one per cluster.
  - Credentials (O(export_headers), or a user and password in a URL) over plain C(http://) to a host other than loopback
    are refused before anything is sent, unless O(allow_insecure).
  - Bounded cardinality - label values are names cut to 128 characters, verdicts and statuses come from closed lists, no
    reason or message is a label, and at most O(max_series) samples are written (run and cluster figures first), the
    rest counted in C(gpufleet_burnin_metrics_dropped_series).
  - Needs the Python package C(prometheus-client) on the controller for the metrics (the collection's C(requirements.txt)).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - gpufleet.burnin.controller
attributes:
  check_mode:
    support: full
    description: Writes, pushes and posts nothing; C(changed) says whether the metrics file would change.
  diff_mode:
    support: none
    description: No diff is shown.
options:
  report:
    description: The run's JSON report, C(<burnin_report_dir>/<run id>/burnin-report.json).
    type: path
    required: true
  run_id:
    description: The run's identifier - the metrics file's name, the C(Idempotency-Key) of the export.
    type: str
    required: true
  metrics_dir:
    description: Directory to write C(gpufleet-burnin-<run id>.prom) into, created when missing; empty for no file.
    type: path
    default: ''
  max_series:
    description: The most samples the metrics hold (1 to 1000000).
    type: int
    default: 20000
  pushgateway_url:
    description: The Pushgateway's URL (C(http://host:9091)) to push the metrics to; empty for no push.
    type: str
    default: ''
  pushgateway_job:
    description: The C(job) of the pushed groups.
    type: str
    default: gpufleet_burnin
  export_url:
    description: The webhook's URL to POST the JSON report to; empty for no export. Shown without user, password or query.
    type: str
    default: ''
  export_headers:
    description:
      - Extra headers of the export (C(Authorization) and the like), a mapping of header names to values. Never shown or
        returned; messages name the header only.
      - C(Content-Type), C(Idempotency-Key), C(X-Burnin-Run-Id), C(Content-Length) and C(Host) are the export's own.
    type: dict
    default: {}
  attempts:
    description: Attempts of each push and of the export in all (1 to 10).
    type: int
    default: 4
  backoff:
    description: Seconds to wait after the first failed attempt, doubled after each next one, at most 60 (0 to 60).
    type: float
    default: 1.0
  timeout:
    description: Seconds each HTTP request may take in all, from connecting to the end of the answer (1 to 300).
    type: int
    default: 30
  allow_insecure:
    description:
      - Send credentials (O(export_headers), a user and password in O(export_url) or O(pushgateway_url)) over plain
        C(http://) to a host other than loopback. Without it such a URL is refused, naming the option.
    type: bool
    default: false
  validate_certs:
    description: Verify the HTTPS certificates of the Pushgateway and the webhook.
    type: bool
    default: true
seealso:
  - module: gpufleet.burnin.burnin_report
"""

EXAMPLES = r"""
- name: Metrics for node_exporter, a push, and the report to a webhook
  gpufleet.burnin.burnin_export:
    report: "{{ burnin_report_dir }}/{{ burnin_run_id }}/burnin-report.json"
    run_id: "{{ burnin_run_id }}"
    metrics_dir: /var/lib/node_exporter/textfile
    pushgateway_url: http://pushgateway.monitoring:9091
    export_url: https://hooks.example.com/burnin
    export_headers:
      Authorization: "Bearer {{ burnin_webhook_token }}"
  run_once: true
  delegate_to: localhost
"""

RETURN = r"""
files:
  description: The metrics file written (none without O(metrics_dir), or in check mode).
  returned: success
  type: list
  elements: str
  sample: [/var/lib/node_exporter/textfile/gpufleet-burnin-20261203-070000.prom]
series:
  description: Samples in the metrics (of the whole run), when metrics were built.
  returned: when O(metrics_dir) or O(pushgateway_url) is set
  type: int
pushed:
  description: Per cluster group pushed - C(cluster), C(ok), C(attempts), C(status) (the last HTTP status), C(error), C(statuses).
  returned: success
  type: list
  elements: dict
export:
  description:
    - The export - C(ok), C(attempts), C(status), C(statuses), C(error), C(url) (shown without secrets) and C(headers)
      (the export's own in clear, O(export_headers) masked). Empty without O(export_url).
  returned: success
  type: dict
notes:
  description: One line per push and export, saying where to and how it went (why, when it failed); the fleet summary shows them.
  returned: success
  type: list
  elements: str
  sample: ["report export to https://hooks.example.com/burnin FAILED after 4 attempt(s): HTTP 503 Service Unavailable (the burn-in's verdicts are not changed)"]
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import refuse_on_host
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.export import export_argument_spec


def main():
    refuse_on_host(export_argument_spec(), "gpufleet.burnin.burnin_export", "writes and sends from the controller")


if __name__ == "__main__":
    main()
