#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: burnin_cleanup
short_description: Delete what a burn-in run created on a cluster, and nothing else
version_added: 0.2.0
description:
  - Deletes the TrainJobs of the run O(run_id) (label C(gpufleet.burnin/run-id)) of the entry O(entry) in
    O(namespace), or in every namespace made per run (C(<namespace>-<run id>)) with O(namespace_per_run); every
    TrainJob of the entry with O(all_runs).
  - With O(shared), the entry's shared objects (its TrainingRuntime, ComputeDomain, ResourceClaimTemplate and
    ConfigMaps, and O(extra_kinds); label C(gpufleet.burnin/entry)) go too once no TrainJob of the entry is left;
    otherwise they are kept and named in RV(kept).
  - With O(drop_namespace), a namespace the burn-in created (label C(app.kubernetes.io/managed-by=gpufleet.burnin))
    in which no burn-in TrainJob but the deleted ones is left is deleted instead, with everything in it.
  - With O(wait), each deletion is followed until the object is gone, for at most O(wait_timeout) seconds.
  - Every read and delete is retried while the cluster does not answer, for O(unreachable_grace) seconds; then the
    cleanup fails with the classified error (RV(error)) and what was deleted so far.
  - Runs kubernetes.core's own client and service inside Ansible's worker process on the controller, like
    M(gpufleet.burnin.k8s_apply), and takes kubernetes.core's authentication options and their C(module_defaults).
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
attributes:
  check_mode:
    support: full
    description: Reads what it would delete and names it in RV(deleted), deleting nothing.
  diff_mode:
    support: none
    description: No diff.
options:
  entry:
    description: The burn-in entry (the role's C(burnin_entry_name)) whose objects go.
    type: str
    required: true
  namespace:
    description: The namespace, or with O(namespace_per_run) the prefix of the namespaces made per run.
    type: str
    required: true
  run_id:
    description: The run whose TrainJobs go. Required unless O(all_runs).
    type: str
    default: ""
  all_runs:
    description: Every run of the entry goes.
    type: bool
    default: false
  namespace_per_run:
    description: The runs have namespaces of their own, C(<namespace>-<run id>), labelled with the run id.
    type: bool
    default: false
  shared:
    description: Delete the entry's shared objects once no TrainJob of the entry is left.
    type: bool
    default: true
  drop_namespace:
    description: Delete a namespace the burn-in created once only the deleted TrainJobs were in it.
    type: bool
    default: true
  wait:
    description: Follow the deletions until the objects are gone.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for a namespace's deleted objects to go (they are followed all at once).
    type: int
    default: 180
  extra_kinds:
    description: More kinds of shared objects, as C({api_version, kind}) mappings.
    type: list
    elements: dict
    default: []
  unreachable_grace:
    description: Seconds to retry a read or delete while the cluster does not answer.
    type: int
    default: 30
seealso:
  - module: kubernetes.core.k8s
  - module: gpufleet.burnin.k8s_apply
"""

EXAMPLES = r"""
- name: Remove the run 20261201t101500 of the nccl entry
  gpufleet.burnin.burnin_cleanup:
    entry: nccl
    namespace: burnin
    run_id: 20261201t101500
  register: cleaned

- name: Say what went
  ansible.builtin.debug:
    msg: "{{ cleaned.msg }}"
"""

RETURN = r"""
deleted:
  description: The objects deleted (in check mode, those that would be), as C(<namespace>) C(Kind/name), or C(Namespace/<name>).
  returned: always
  type: list
  elements: str
kept:
  description: Shared objects kept because TrainJobs of other runs still use them, one sentence per namespace.
  returned: always
  type: list
  elements: str
msg:
  description: One sentence, for example C(deleted 2 object(s)).
  returned: always
  type: str
error:
  description: The classified error (C(category), C(status), C(message), C(detail)) when a read or delete failed.
  returned: on failure
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import burnin_cleanup_spec, refuse_on_host


def main():
    refuse_on_host(burnin_cleanup_spec(), "gpufleet.burnin.burnin_cleanup")


if __name__ == "__main__":
    main()
