# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""One cluster's nodes labelled, tainted, cordoned or marked by their verdicts, through the one cluster protocol
(plugin_utils/cluster.py): gpufleet.burnin.burnin_remediate's task and the batch's step after a cluster's last stage
(plugin_utils/cluster_stages.py) both run this."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.remediation_run import checked, run_remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ModuleExit


def remediate_nodes(auth, name, given, check_mode=False):
    """burnin_remediate's options GIVEN checked before anything connects, then its nodes remediated with kubernetes.core's
    authentication options AUTH, for the action NAME (module_utils/burnin/remediation_run.py). Returns run_remediation's
    result, or {failed, msg} and, when a call to the cluster failed, {changes (made before it), changed, error}."""
    try:
        settings = checked(given)
        cluster = Cluster(auth, name, poll_interval=2, unreachable_grace=given["unreachable_grace"]).connect("Node", "v1")
        return run_remediation(cluster, given, settings, check_mode=check_mode)
    except BurninError as exc:
        return {"failed": True, "msg": "%s: %s" % (name, exc)}
    except ModuleExit as exc:
        return {"failed": True, "msg": exc.result.get("msg")}
    except ClusterCallFailed as exc:
        changes = getattr(exc, "partial", {}).get("changes", [])
        return {
            "failed": True,
            "changes": changes,
            "changed": bool(changes) and not check_mode,
            "error": exc.error,
            "msg": "%s: %s" % (exc.what, exc.error["message"]),
        }


__all__ = ["remediate_nodes"]
