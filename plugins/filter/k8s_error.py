# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: k8s_error
short_description: Classify and explain the error of a failed kubernetes.core task
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - kubernetes.core reports API errors as the Python client's exception text (status line, headers, JSON body,
    traceback) or the Status JSON alone, and connection errors as urllib3's retry message. This filter classifies
    the error and says in one or two short sentences what a person needs, naming the server and the context.
  - The class is C(Unreachable) (refused, name resolution, timeout), C(TLS) (certificate not trusted, name
    mismatch), C(Unauthorized) (401, the credential was refused), C(Forbidden) (403, naming the user, verb, resource and
    namespace, pointing at the collection's RBAC manifest), C(NotFound) (404; a missing API names the CRD and the
    component to install), C(Conflict) (409), C(Invalid) (400, 422, or an admission webhook's denial, with its field
    paths), C(ServerError) (5xx) or C(Error).
  - The same classifier (plugins/module_utils/cluster/k8s_errors.py) serves the role and the action plugins.
options:
  _input:
    description: The C(msg) of the failed task result.
    type: str
    required: true
  context:
    description: The kubeconfig context used, named in the message.
    type: str
  server:
    description: The API server's URL, named when the error text does not say it.
    type: str
  kubeconfig:
    description:
      - Path of the kubeconfig used; when O(server) is not given, the server of O(context) (or of the current
        context) is read from it to be named. Nothing else of the file is used or shown.
    type: str
"""

EXAMPLES = r"""
- name: List the nodes
  kubernetes.core.k8s_info:
    kind: Node
  register: nodes
  failed_when: false

- name: Say why it failed
  ansible.builtin.debug:
    msg: "{{ (nodes.msg | gpufleet.burnin.k8s_error(context='aws-use1-h100-a')).message }}"
  when: nodes.resources is not defined
"""

RETURN = r"""
_value:
  description: The classified error.
  type: dict
  contains:
    category:
      description: One of C(Unreachable), C(TLS), C(Unauthorized), C(Forbidden), C(NotFound), C(Conflict), C(Invalid),
        C(ServerError), C(Error).
      type: str
    status:
      description: The HTTP status code, or 0 when there was no HTTP answer.
      type: int
    message:
      description: One or two short sentences, at most 400 characters.
      type: str
    detail:
      description: The server's own message or the raw error text (for higher verbosity), at most 2000 characters.
      type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import classify, kubeconfig_server


def k8s_error(msg, context=None, server=None, kubeconfig=None):
    if msg is None:
        msg = ""
    if not isinstance(msg, str):
        raise AnsibleFilterError("gpufleet.burnin.k8s_error: msg: must be the string 'msg' of a failed task, got %s" % type(msg).__name__)
    if not server and kubeconfig and isinstance(kubeconfig, str):
        server = kubeconfig_server(kubeconfig, context)
    return classify(msg, context=context or None, server=server or None)


class FilterModule(object):
    def filters(self):
        return {"k8s_error": k8s_error}
