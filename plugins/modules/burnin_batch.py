#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_batch
short_description: Read every cluster of the play's batch and run its burn-in stages, all at once, from one task
version_added: 0.3.0
description:
  - For every host of O(hosts) that M(gpufleet.burnin.burnin_start) started in this play, reads its cluster first as
    M(gpufleet.burnin.cluster_detect) does (the API server's version, its DRA APIs, the nodes and the run's namespace;
    the platform and GPU of the host's checked variables checked against the nodes), then runs that host's
    C(burnin_stages) in order, each as M(gpufleet.burnin.burnin_stage) runs it with what was read, all clusters at once
    (a thread per cluster in this one worker process), each with its own kubernetes.core client, waits and deadline, so
    a slow or unreachable cluster holds only itself. A cluster that cannot be read, or whose nodes contradict its group
    (C(Mismatch)), runs no stage; a cluster's stages stop at its first stage that could not reach the cluster, as the
    role's block does.
  - The role's task; run it with C(run_once) over C(ansible_play_batch) (a C(serial) batch, an AWX slice and C(--limit)
    each drive only their hosts). Each host's inputs are what M(gpufleet.burnin.burnin_start) registered for it as
    C(burnin__start) (its checked variables, run id, namespace and result) and its authentication is the play's
    C(module_defaults) of C(group/kubernetes.core.k8s) templated with that host's variables.
  - Prints one line per cluster once it was read, as each attempt is applied and as it ends, with its verdict, and as
    it fails (the role fails such a host only at the end, after the summary); at C(-v), a failed cluster's API server's
    own words, unless the task's output is hidden (C(no_log)).
  - On SIGINT or SIGTERM (Ctrl-C, an AWX cancel) every cluster's wait ends and no further apply starts; what each
    cluster's run created is printed to stderr, and written to C(<burnin_report_dir>/<run id>/cancelled.json) when
    C(burnin_report_dir) is set, with the C(gpufleet.burnin.cleanup) command that removes it.
  - Runs kubernetes.core's own client inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.burnin_stage).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
attributes:
  check_mode:
    support: full
    description: Each stage plans and dry-runs its apply, as M(gpufleet.burnin.burnin_stage) does.
  diff_mode:
    support: full
    description: The apply's diffs, each headed by its host, kind and name.
options:
  hosts:
    description:
      - The inventory hosts whose stages to run (the role gives C(ansible_play_batch)).
      - A host that M(gpufleet.burnin.burnin_start) did not start in this play is left out and listed in C(left_out).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Read every cluster of the batch and run its stages at once
  gpufleet.burnin.burnin_batch:
    hosts: "{{ ansible_play_batch }}"
  run_once: true
  register: batch
"""

RETURN = r"""
clusters:
  description:
    - Per host, the result of its last stage as M(gpufleet.burnin.burnin_stage) returns it, with C(lines) (every
      stage's), C(stage) (the last one run, C(detect) when the cluster could not be read or contradicts its group) and
      C(seconds). A cluster not read, or a stage that could not reach the cluster, sets C(failed),
      C(msg) and C(record) with the failure merged as the role records it (C(outcome), C(error_class), C(reason)).
  returned: always
  type: dict
left_out:
  description: The hosts of O(hosts) left out (M(gpufleet.burnin.burnin_start) did not start them in this play).
  returned: always
  type: list
  elements: str
msg:
  description: How many clusters ran every stage, failed or were left out.
  returned: always
  type: str
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_batch_spec, refuse_on_host


def main():
    refuse_on_host(burnin_batch_spec(), "gpufleet.burnin.burnin_batch")


if __name__ == "__main__":
    main()
