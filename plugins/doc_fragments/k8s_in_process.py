# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """What the plugins that talk to a cluster share (k8s_apply, trainjob_wait, trainjob_logs, cluster_detect):
    its client run in the worker (plugins/plugin_utils/k8s_in_process.py). Those that only read add
    gpufleet.burnin.controller.unchanged (no diff)."""

    DOCUMENTATION = r"""
attributes:
  action:
    support: full
    description: Runs on the controller, in the worker process.
requirements:
  - kubernetes.core collection
  - kubernetes >= 24.2.0 (Python, on the controller)
"""
