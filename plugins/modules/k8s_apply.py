#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: k8s_apply
short_description: Server-side apply a list of objects with kubernetes.core, in the controller's process
version_added: 0.1.0
description:
  - Applies O(objects) in order with Kubernetes server-side apply, one field manager, exactly as
    M(kubernetes.core.k8s) with O(kubernetes.core.k8s#module:apply=true) and
    O(kubernetes.core.k8s#module:server_side_apply) does - it runs kubernetes.core's own client, service and runner.
  - Unlike M(kubernetes.core.k8s), it runs inside Ansible's worker process on the controller. Ansible imports this
    plugin, and with it the Kubernetes Python client, once in its main process before forking a worker per host, so
    each cluster's apply starts with the client loaded instead of spending about a second of CPU importing it. For a
    fleet of clusters (one inventory host each, C(ansible_connection=local)) this is the difference between the
    requests' time and the start-up's.
  - Takes kubernetes.core's authentication options. C(module_defaults) that apply to M(kubernetes.core.k8s) in the
    task (C(group/kubernetes.core.k8s) or C(kubernetes.core.k8s)) give it their authentication options too, and the
    action group C(group/gpufleet.burnin.k8s) holds kubernetes.core's k8s group plus this plugin. C(K8S_AUTH_*)
    variables in the task's C(environment) apply as they would to a kubernetes.core module.
  - Returns what M(kubernetes.core.k8s) returns; secrets given as options (O(api_key), O(password), a kubeconfig
    mapping's credentials) are removed from the result.
author:
  - gpufleet.burnin maintainers (!UNKNOWN)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
  - gpufleet.burnin.k8s_in_process
attributes:
  check_mode:
    support: full
    description: A server-side dry run (C(dryRun=All)), as kubernetes.core does; nothing is stored.
  diff_mode:
    support: full
    description:
      - Returns the difference per object, as kubernetes.core does; for several objects also one list of them,
        each headed by its kind/name, so the task shows every object's diff.
options:
  objects:
    description:
      - The objects to apply, in order (dependencies first). Each needs C(apiVersion), C(kind) and
        C(metadata.name); namespaced objects need C(metadata.namespace).
      - All are checked, with the field manager, before anything connects; an error names C(objects[N]) and the field.
    type: list
    elements: dict
    required: true
  field_manager:
    description: The server-side apply field manager, a non-empty printable name of at most 128 characters.
    type: str
    default: gpufleet.burnin
  force_conflicts:
    description: Take over fields another manager owns instead of failing with a conflict.
    type: bool
    default: false
notes:
  - C(metadata.managedFields) is hidden from the result and from diffs.
seealso:
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Apply the rendered objects to the cluster of this inventory host
  gpufleet.burnin.k8s_apply:
    objects: "{{ plan.objects }}"
    field_manager: gpufleet.burnin
    kubeconfig: "{{ burnin_kubeconfig }}"
    context: "{{ burnin_context }}"
  register: applied
"""

RETURN = r"""
changed:
  description: Whether any object changed.
  returned: always
  type: bool
result:
  description:
    - As M(kubernetes.core.k8s) returns it, with each applied object reduced to its reference - C(apiVersion),
      C(kind) and C(metadata) with C(name), C(namespace), C(uid), C(resourceVersion), C(generation). Read an
      object back with M(kubernetes.core.k8s_info) when you need more.
    - For one object, that reference. For several, C(results), one per object in order, each with C(changed),
      C(method), C(result) (the reference) and, in diff or check mode, C(diff).
  returned: success
  type: dict
diff:
  description:
    - For one object in diff mode (or check mode), its C(before) and C(after) (without C(metadata.managedFields)).
    - For several objects in diff mode, a list of those, each with C(before_header) and C(after_header) naming
      the object's kind/name.
  returned: diff or check mode
  type: raw
msg:
  description:
    - On failure, one or two sentences of the classified error (as P(gpufleet.burnin.k8s_error#filter) says it), for
      example which webhook rejected which field, or which right the token lacks; not the raw Status body.
  returned: failure
  type: str
error:
  description:
    - The classified error, C(category), C(status) and C(message); with C(detail), the server's own message or the
      raw error text, when ansible-playbook runs with C(-v) or more.
  returned: failure after the objects were checked
  type: dict
"""

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import k8s_apply_spec, refuse_on_host


def main():
    refuse_on_host(k8s_apply_spec(), "gpufleet.burnin.k8s_apply")


if __name__ == "__main__":
    main()
