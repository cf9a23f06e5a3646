# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Action plugin of gpufleet.burnin.cluster_detect (documentation in plugins/modules/cluster_detect.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import CLUSTER_DETECT_OWN, cluster_detect_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import check_cluster, node_evidence
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.dra import served_rct_versions
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import (
    K8sActionBase,
    configured_server,
    error_text,
    get_json,
    k8s_reader,
    server_of,
)

NAME = "gpufleet.burnin.cluster_detect"


class ActionModule(K8sActionBase):
    """Read a cluster's version, DRA API versions and nodes with kubernetes.core's client in the worker, and check the
    declared platform and GPU against the nodes."""

    _supports_check_mode = True
    OWN = CLUSTER_DETECT_OWN
    NAME = NAME
    SPEC = staticmethod(cluster_detect_spec)

    def run_with(self, result, args, auth):
        result.update(changed=False)
        server = configured_server(auth)
        try:
            # The first contact: a cluster that does not answer stops here (kubernetes.core's discovery, then /version).
            reader = k8s_reader(dict(auth, kind="Node", api_version="v1"), NAME)
            server = server_of(reader, auth)
            dynamic = reader.client.client
            version, groups = get_json(dynamic, "/version"), get_json(dynamic, "/apis")
        # Classified: the outcome says whether the cluster is unreachable or refused us.
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            return self.stopped(result, classify(error_text(exc), context=auth.get("context"), server=server))
        result.update(kubernetes_version=version.get("gitVersion", ""), dra_api_versions=served_rct_versions(groups), nodes=[], nodes_listed=False)
        if args["check_nodes"]:
            try:
                found = reader.find("Node", "v1")
                if not found.get("api_found", True):
                    raise LookupError(found.get("msg"))
                result.update(nodes=[node_evidence(node) for node in found.get("resources") or []], nodes_listed=True)
            # A namespace-scoped token (Forbidden) goes on with the declared values; anything else stops.
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                error = classify(error_text(exc), context=auth.get("context"), server=server)
                if error["category"] != "Forbidden":
                    return self.stopped(result, error)
                result["nodes_error"] = error
        if args["namespace"]:
            # Whether the run's namespace exists (the apply creates it when missing), read in the same worker.
            try:
                found = reader.find("Namespace", "v1", name=args["namespace"])
            except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
                return self.stopped(result, classify(error_text(exc), context=auth.get("context"), server=server))
            result["namespace_exists"] = bool(found.get("resources"))
        try:
            detection = check_cluster(
                result["nodes"], platform=args["platform"], gpu_architecture=args["gpu_architecture"], nodes_listed=result["nodes_listed"]
            )
        except BurninError as exc:
            return dict(result, failed=True, msg="%s: %s" % (NAME, exc))
        recorded = recorded_detection(detection, args["check_nodes"])
        result.update(detection=detection, recorded=recorded, outcome=recorded.get("outcome", "Detected"), reason=recorded.get("reason", ""))
        return result

    @staticmethod
    def stopped(result, error):
        """The answer for a cluster that cannot be read: not a task failure, so the role records why and stops."""
        outcome = "Unreachable" if error["category"] in UNREACHABLE_CLASSES else "Error"
        reason = "%s: %s" % (error["category"], error["message"])
        return dict(
            result,
            outcome=outcome,
            reason=reason,
            error=error,
            recorded={"stage": "detect", "outcome": outcome, "error_class": error["category"], "reason": reason},
        )
