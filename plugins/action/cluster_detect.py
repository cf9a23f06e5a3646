# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.cluster_detect (documentation in plugins/modules/cluster_detect.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import CLUSTER_DETECT_OWN, cluster_detect_spec
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster_detection import detect
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import K8sActionBase

NAME = "gpufleet.burnin.cluster_detect"


class ActionModule(K8sActionBase):
    """Read a cluster's version, DRA API versions and nodes with kubernetes.core's client in the worker, and check the
    declared platform and GPU against the nodes (plugin_utils/cluster_detection.py)."""

    _supports_check_mode = True
    OWN = CLUSTER_DETECT_OWN
    NAME = NAME
    SPEC = staticmethod(cluster_detect_spec)

    def run_with(self, result, args, auth):
        result.update(detect(auth, NAME, args["platform"], args["gpu_architecture"], check_nodes=args["check_nodes"], namespace=args["namespace"]))
        return result
