# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: burnin_failure
short_description: How a cluster's burn-in result ends after a failed task
version_added: 0.2.0
author: gpufleet.burnin maintainers
description:
  - The role's one rule for a failed task (its C(rescue)), the same for the burn-in and the cleanup.
  - An outcome a task set on purpose before failing (C(Mismatch), C(Unreachable), C(Error), with a reason) is kept.
    Otherwise the error is classified as P(gpufleet.burnin.k8s_error#filter) does (the collection's cluster plugins
    return it classified already in their C(error)); the outcome is C(Unreachable) when the cluster could not be
    talked to, else C(Error), and the reason names the failed task, the class and one readable sentence.
  - A loop's failure is explained by its first failed item.
options:
  _input:
    description: The cluster's result so far (the role's C(burnin_result)).
    type: dict
    required: true
  failed_task:
    description: The failed task (C(ansible_failed_task)).
    type: dict
  failed_result:
    description: Its result (C(ansible_failed_result)).
    type: dict
  context:
    description: The kubeconfig context used, named in the message.
    type: str
  kubeconfig:
    description:
      - Path of the kubeconfig used; the server of O(context) (or of the current context) is read from it to be
        named. Nothing else of the file is used or shown.
    type: raw
"""

EXAMPLES = r"""
- name: Record the failure
  ansible.builtin.set_fact:
    burnin_result: "{{ burnin_result | combine(failure.record) }}"
  vars:
    failure: "{{ burnin_result | gpufleet.burnin.burnin_failure(ansible_failed_task, ansible_failed_result) }}"
"""

RETURN = r"""
_value:
  description: What the failure means for the cluster.
  type: dict
  contains:
    record:
      description: The fields to merge into the result, C(outcome), C(error_class) and C(reason).
      type: dict
    detail:
      description: The server's own message or the raw error text, for higher verbosity (empty when none).
      type: str
"""

from ansible.errors import AnsibleFilterError


def burnin_failure_filter(result, failed_task=None, failed_result=None, context=None, kubeconfig=None):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import kubeconfig_server
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import failure_of

    for name, value in (("_input", result), ("failed_task", failed_task), ("failed_result", failed_result)):
        if value is not None and not isinstance(value, dict):
            raise AnsibleFilterError("gpufleet.burnin.burnin_failure: %s: must be a mapping, got %s" % (name, type(value).__name__))
    server = kubeconfig_server(kubeconfig, context or None) if kubeconfig else None
    return failure_of(result, failed_task, failed_result, context=context, server=server)


class FilterModule(object):
    def filters(self):
        return {"burnin_failure": burnin_failure_filter}
