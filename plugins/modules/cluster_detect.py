#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cluster_detect
short_description: Read a cluster's version, DRA APIs and nodes, and check its declared platform and GPU against them
version_added: 0.2.0
description:
  - The first contact with a cluster. Reads the API server's C(/version) and C(/apis) (which C(resource.k8s.io) versions
    it serves, for the ComputeDomain channel claims) and, with O(check_nodes), lists the nodes; then detects the
    platform and GPU architecture from the nodes and checks O(platform) and O(gpu_architecture) against them, as the
    P(gpufleet.burnin.detect_platform#filter) filter does.
  - Never fails on the cluster's answer; it says in RV(outcome) how the cluster answered, so the caller records why
    and stops. C(Detected) - read and matching; C(Mismatch) - the nodes contradict the declared platform or GPU
    (RV(reason) names both); C(Unreachable) - no answer (connection refused, name resolution, timeout, TLS);
    C(Error) - an answer that refuses (Unauthorized, Forbidden on the version, a server error). The errors are
    classified as by the P(gpufleet.burnin.k8s_error#filter) filter, and no traceback is ever part of them.
  - A token that may not list nodes (a namespace-scoped one, Forbidden) is not an error - the declared values are used
    unchecked, and both must be set.
  - Runs kubernetes.core's own client inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.k8s_apply), and takes kubernetes.core's authentication options and their C(module_defaults).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
  - gpufleet.burnin.controller.unchanged
attributes:
  check_mode:
    support: full
    description: Only reads; runs in check mode too.
options:
  platform:
    description: The declared platform (for example C(aws)); empty to detect it.
    type: str
    default: ""
  gpu_architecture:
    description: The declared GPU architecture (for example C(h100)); empty to detect it.
    type: str
    default: ""
  namespace:
    description: A namespace whose existence to read (RV(namespace_exists)); empty reads none.
    type: str
    default: ""
  check_nodes:
    description: List the nodes and check the declared values against them; false uses the declared values unchecked.
    type: bool
    default: true
seealso:
  - module: kubernetes.core.k8s_cluster_info
  - plugin: gpufleet.burnin.detect_platform
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Check the cluster
  gpufleet.burnin.cluster_detect:
    platform: aws
    gpu_architecture: h100
    kubeconfig: "{{ burnin_kubeconfig }}"
  register: cluster

- name: Stop when it cannot be read or does not match
  ansible.builtin.fail:
    msg: "{{ cluster.reason }}"
  when: cluster.outcome != 'Detected'
"""

RETURN = r"""
outcome:
  description: C(Detected), C(Mismatch), C(Unreachable) or C(Error).
  returned: always
  type: str
reason:
  description: Why the outcome is not C(Detected); empty otherwise.
  returned: always
  type: str
kubernetes_version:
  description: The API server's C(gitVersion), for example C(v1.34.4).
  returned: when the cluster answered
  type: str
dra_api_versions:
  description: The C(resource.k8s.io) versions the API server serves, newest first (empty without DRA).
  returned: when the cluster answered
  type: list
  elements: str
nodes:
  description:
    - What detection and the plan read of each node - C(metadata.name), C(metadata.labels), C(spec.providerID),
      C(status.capacity) and C(status.allocatable) - not the whole Node object (the controller keeps every cluster's
      result in memory).
  returned: when the cluster answered
  type: list
  elements: dict
namespace_exists:
  description: Whether the namespace O(namespace) exists.
  returned: when O(namespace) is set and the cluster answered
  type: bool
nodes_listed:
  description: Whether the nodes could be listed.
  returned: when the cluster answered
  type: bool
nodes_error:
  description: The classified Forbidden error when the token may not list nodes.
  returned: when the nodes could not be listed
  type: dict
detection:
  description: The detection and check, as the P(gpufleet.burnin.detect_platform#filter) filter returns it.
  returned: when the cluster answered
  type: dict
recorded:
  description:
    - What the role keeps of all this in the cluster's result (stage, platform and GPU used, C(detected), warnings).
    - The outcome, reason and error class too when it stops.
  returned: always
  type: dict
error:
  description: The classified error (C(category), C(status), C(message), C(detail)).
  returned: when the outcome is C(Unreachable) or C(Error)
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import cluster_detect_spec, refuse_on_host


def main():
    refuse_on_host(cluster_detect_spec(), "gpufleet.burnin.cluster_detect")


if __name__ == "__main__":
    main()
