# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""MNNVL readiness: whether every GPU node of a GB200/GB300 cluster has its NVLink fabric registered, before a job
that enables multi-node NVLink.

NVIDIA's GPU feature discovery labels a node ``nvidia.com/gpu.clique=<cluster UUID>.<clique id>`` once its GPUs'
fabric registration completed (NVIDIA/k8s-device-plugin, gpu-feature-discovery's imex labeler: the fabric's cluster
UUID and clique id of the node's GPUs, which must agree). A node without the label, or with a zero cluster UUID or
clique id, has no usable NVLink fabric: an MNNVL job on it falls back to the network or hangs in NCCL's MNNVL init
(NCCL_MNNVL_ENABLE=1 "will fail if MNNVL is not supported or cannot be enabled", _lib/nccl/isolation.yaml). Such nodes
are reported with the reason and the job is not run. Nodes in different cliques are in different NVLink domains: an
MNNVL job spans one, so the check names the domains too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import describe_node
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding

CLIQUE_LABEL = "nvidia.com/gpu.clique"
MNNVL_GPUS = ("gb200", "gb300")
_CLIQUE = re.compile(r"^(?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.(?P<clique>[0-9]{1,10})\Z")
MAX_NODES = 4096


def node_fabric(labels):
    """(the node's NVLink domain ``<cluster UUID>.<clique id>``, "") when its fabric is registered, else (None, why)."""
    value = (labels or {}).get(CLIQUE_LABEL)
    if value is None:
        return None, "no %s label: GPU feature discovery has not seen the node's NVLink fabric registered" % CLIQUE_LABEL
    text = str(value)[:100]
    found = _CLIQUE.match(text)
    if not found:
        return None, "%s=%r is not <cluster UUID>.<clique id>" % (CLIQUE_LABEL, text)
    if not found.group("uuid").replace("-", "").strip("0"):
        return None, "%s=%s: the fabric's cluster UUID is zero (not registered)" % (CLIQUE_LABEL, text)
    if int(found.group("clique")) == 0:
        return None, "%s=%s: clique id 0 (not registered)" % (CLIQUE_LABEL, text)
    return text.lower(), ""


def readiness(nodes):
    """{ready: [node names], not_ready: [{node, reason}], domains: {domain: [node names]}} of the GPU nodes among NODES
    (Node objects, as kubernetes.core.k8s_info returns them), in their order; at most MAX_NODES read."""
    out = {"ready": [], "not_ready": [], "domains": {}}
    for index, node in enumerate((nodes or [])[:MAX_NODES]):
        described = describe_node(node, index)
        if not described["is_gpu"]:
            continue
        name = ((node or {}).get("metadata") or {}).get("name") or described.get("name") or "node-%d" % index
        domain, why = node_fabric(((node or {}).get("metadata") or {}).get("labels") or {})
        if domain is None:
            out["not_ready"].append({"node": name, "reason": why})
            continue
        out["ready"].append(name)
        out["domains"].setdefault(domain, []).append(name)
    return out


def readiness_verdict(ready, stage="fleet", workload=None):
    """A verdict (the fields judging/verdict.py's have) for a stage whose MNNVL job was not run because nodes of READY
    (readiness()) are not: fail, one finding per such node with its reason."""
    bad = ready["not_ready"]
    reason = "MNNVL not ready, the job was not run (it would fall back to the network or hang): %s" % "; ".join(
        "node %s: %s" % (item["node"], item["reason"]) for item in bad[:16]
    )
    if len(bad) > 16:
        reason += "; and %d more" % (len(bad) - 16)
    evidence = {"check": "mnnvl-readiness", "label": CLIQUE_LABEL, "domains": dict((key, list(value)) for key, value in ready["domains"].items())}
    findings = [finding(item["node"], stage, "fail", "node %s: %s" % (item["node"], item["reason"]), evidence) for item in bad]
    checks = [{"name": "mnnvl", "verdict": "fail", "node": item["node"], "reason": "node %s: %s" % (item["node"], item["reason"])} for item in bad]
    return {
        "workload": workload,
        "collective": None,
        "results": None,
        "verdict": "fail",
        "reason": reason,
        "checks": checks,
        "notes": [],
        "transport": None,
        "thresholds": [],
        "metrics": {"nodes_ready": len(ready["ready"]), "nodes_not_ready": len(bad), "nvlink_domains": len(ready["domains"])},
        "series": [],
        "facts": {},
        "errors": [],
        "warnings": 0,
        "problems": [],
        "output_pod": None,
        "nodes": [],
        "failed_nodes": [item["node"] for item in bad],
        "succeeded_nodes": [],
        "findings": findings,
    }


__all__ = ["CLIQUE_LABEL", "MNNVL_GPUS", "node_fabric", "readiness", "readiness_verdict"]
