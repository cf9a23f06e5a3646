# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A cluster's first contact, behind gpufleet.burnin.cluster_detect: its version, DRA API versions and nodes read with
kubernetes.core's client in the worker, and the declared platform and GPU checked against the nodes
(module_utils/cluster/detect.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.cluster_result import recorded_detection
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import check_cluster, node_evidence
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import UNREACHABLE_CLASSES, classify
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.dra import served_rct_versions
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import (
    NODES_PATH,
    configured_server,
    error_text,
    get_json,
    k8s_reader,
    list_json,
    server_of,
)


def detect(auth, name, platform, gpu_architecture, check_nodes=True, namespace=""):
    """The cluster_detect result of the cluster AUTH reaches: {changed, kubernetes_version, dra_api_versions, nodes,
    nodes_listed, nodes_error, namespace_exists, detection, recorded, outcome, reason}; a cluster that cannot be read
    is an outcome (Unreachable or Error) with its classified error, never a failure; a wrong declared value is
    {failed, msg}."""
    result = {"changed": False}
    server = configured_server(auth)
    try:
        # The first contact: a cluster that does not answer stops here (kubernetes.core's discovery, then /version).
        reader = k8s_reader(dict(auth, kind="Node", api_version="v1"), name)
        server = server_of(reader, auth)
        dynamic = reader.client.client
        version, groups = get_json(dynamic, "/version"), get_json(dynamic, "/apis")
    # Classified: the outcome says whether the cluster is unreachable or refused us.
    except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
        return _stopped(result, classify(error_text(exc), context=auth.get("context"), server=server))
    result.update(kubernetes_version=version.get("gitVersion", ""), dra_api_versions=served_rct_versions(groups), nodes=[], nodes_listed=False)
    if check_nodes:
        try:
            result.update(nodes=list_json(dynamic, NODES_PATH, keep=node_evidence), nodes_listed=True)
        # A namespace-scoped token (Forbidden) goes on with the declared values; anything else stops.
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            error = classify(error_text(exc), context=auth.get("context"), server=server)
            if error["category"] != "Forbidden":
                return _stopped(result, error)
            result["nodes_error"] = error
    if namespace:
        # Whether the run's namespace exists (the apply creates it when missing), read in the same worker.
        try:
            found = reader.find("Namespace", "v1", name=namespace)
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            return _stopped(result, classify(error_text(exc), context=auth.get("context"), server=server))
        result["namespace_exists"] = bool(found.get("resources"))
    try:
        detection = check_cluster(result["nodes"], platform=platform, gpu_architecture=gpu_architecture, nodes_listed=result["nodes_listed"])
    except BurninError as exc:
        return dict(result, failed=True, msg="%s: %s" % (name, exc))
    recorded = recorded_detection(detection, check_nodes)
    result.update(detection=detection, recorded=recorded, outcome=recorded.get("outcome", "Detected"), reason=recorded.get("reason", ""))
    return result


def _stopped(result, error):
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


__all__ = ["detect"]
