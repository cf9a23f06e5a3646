#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_start
short_description: Check a cluster's burnin_* variables and start its result, before anything reaches the cluster
version_added: 0.3.0
description:
  - The first step of the role C(gpufleet.burnin.burnin). Checks every variable given in O(variables) (types, bounds,
    Kubernetes grammars, the allowed sets, override items, thresholds; survey text parsed) and fails with a message
    naming the variable, the field and the allowed values.
  - Then resolves where the run goes (the namespace, per run with C(burnin_namespace_per_run); the TrainJob
    C(<burnin_entry_name>-<run id>), whose every stage's name must be a DNS label) and starts the cluster's result.
  - Runs on the controller and never contacts a cluster.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - gpufleet.burnin.controller
  - gpufleet.burnin.controller.unchanged
attributes:
  check_mode:
    support: full
    description: The same in check mode; the result records C(check_mode).
options:
  variables:
    description:
      - The role's C(burnin_*) variables by name. Leave out C(burnin_kubeconfig) and C(burnin_context), which may hold
        secrets and are kubernetes.core's to check.
      - Left out, the host's own C(burnin_*) variables are read and templated by the action, those two excepted (what the
        role does).
    type: dict
  run_id:
    description: The run's id when C(burnin_run_id) is empty (the role generates one per playbook run).
    type: str
    default: ""
  host:
    description: The cluster's name (the inventory host).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Check the variables and start the cluster's result
  gpufleet.burnin.burnin_start:
    variables:
      burnin_workload: nccl-all-reduce
      burnin_nodes: 2
    run_id: "20261203-120000"
    host: "{{ inventory_hostname }}"
  register: start

- name: Check the host's own burnin_* variables, as the role does
  gpufleet.burnin.burnin_start:
    run_id: "20261203-120000"
    host: "{{ inventory_hostname }}"
  register: start
"""

RETURN = r"""
variables:
  description: The checked variables (survey text parsed, defaults applied where a check gives one).
  returned: success
  type: dict
run_id:
  description: The run's id.
  returned: success
  type: str
  sample: "20261203-120000"
namespace:
  description: The run's namespace.
  returned: success
  type: str
trainjob:
  description: The fleet stage's TrainJob name.
  returned: success
  type: str
result:
  description: The cluster's result at its start (outcome C(Pending)).
  returned: success
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_start_spec, refuse_on_host


def main():
    refuse_on_host(burnin_start_spec(), "gpufleet.burnin.burnin_start", what="renders on the controller")


if __name__ == "__main__":
    main()
