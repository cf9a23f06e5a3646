# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A node-local stage's plan requests GPUs only: no NIC, no secondary network, no ComputeDomain.

The node, dcgm and gpu stages test each node's GPUs (NVLink within the node at most), never its network. A pod that
asks for every NIC of its node (``vpc.amazonaws.com/efa: 32``, ``rdma/ib``, GKE's RDMA networks, a NIC or IMEX
ResourceClaim) cannot be scheduled on a node with one dead NIC, so the GPU test would go missing exactly where the
node is degraded. :func:`gpus_only` takes those requests out of a plan's objects after every override; the NIC
resource names are the platform catalogue's (``_lib/platforms/*/platform.yaml`` ``nic_resources``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

# GKE multi-networking: the pod's extra interfaces (annotations) and the network resources GKE's webhook derives
# from them (networking.gke.io.networks/<network>), as templates/overrides/platforms/gcp.yaml sets them.
NETWORK_ANNOTATIONS = ("networking.gke.io/interfaces", "networking.gke.io/default-interface")
NETWORK_RESOURCE_PREFIXES = ("networking.gke.io.networks/",)
# Set on the GPU containers of a node-local stage: one node's GPUs need no multi-node NVLink (IMEX) channel.
NODE_LOCAL_ENV = {"NCCL_MNNVL_ENABLE": "0"}


def is_nic_resource(name, nic_resources):
    return name in nic_resources or name.startswith(NETWORK_RESOURCE_PREFIXES)


def _device_classes(template):
    requests = ((((template.get("spec") or {}).get("spec") or {}).get("devices") or {}).get("requests")) or []
    return [(request.get("exactly") or request).get("deviceClassName") or "" for request in requests]


def _claim_templates(objects):
    """Names of the ResourceClaimTemplates a node-local stage does not need: the plan's own but GPU ones (NICs:
    roce.networking.k8s.aws, mrdma.google.com) and the channel templates of its ComputeDomains (IMEX)."""
    names = set()
    for obj in objects:
        if obj.get("kind") == "ResourceClaimTemplate" and not any("gpu" in name for name in _device_classes(obj)):
            names.add(obj["metadata"]["name"])
        elif obj.get("kind") == "ComputeDomain":
            template = (((obj.get("spec") or {}).get("channel") or {}).get("resourceClaimTemplate") or {}).get("name")
            if template:
                names.add(template)
    return names


def _strip_container(container, nic_resources, dropped_claims):
    resources = container.get("resources") or {}
    for key in ("requests", "limits"):
        if isinstance(resources.get(key), dict):
            resources[key] = dict((name, value) for name, value in resources[key].items() if not is_nic_resource(name, nic_resources))
    if "claims" in resources:
        resources["claims"] = [claim for claim in resources["claims"] if claim.get("name") not in dropped_claims]
        if not resources["claims"]:
            del resources["claims"]
    env = container.get("env")
    if isinstance(env, list):
        for item in env:
            if item.get("name") in NODE_LOCAL_ENV:
                item["value"] = NODE_LOCAL_ENV[item["name"]]


def gpus_only(objects, nic_resources):
    """OBJECTS of a node-local stage's plan without NIC resources (NIC_RESOURCES: names), GKE network interfaces, NIC
    or ComputeDomain claims, and the claim templates and ComputeDomains nothing then uses."""
    out = copy.deepcopy(objects)
    templates = _claim_templates(out)
    for obj in out:
        if obj.get("kind") != "TrainingRuntime":
            continue
        for job in obj["spec"]["template"]["spec"].get("replicatedJobs") or []:
            template = job["template"]["spec"]["template"]
            annotations = (template.get("metadata") or {}).get("annotations")
            if isinstance(annotations, dict):
                for name in NETWORK_ANNOTATIONS:
                    annotations.pop(name, None)
            pod_spec = template.get("spec") or {}
            claims = pod_spec.get("resourceClaims") or []
            dropped = set(claim.get("name") for claim in claims if claim.get("resourceClaimTemplateName") in templates)
            if "resourceClaims" in pod_spec:
                pod_spec["resourceClaims"] = [claim for claim in claims if claim.get("name") not in dropped]
                if not pod_spec["resourceClaims"]:
                    del pod_spec["resourceClaims"]
            for container in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
                _strip_container(container, nic_resources, dropped)
    return [
        obj for obj in out if obj.get("kind") != "ComputeDomain" and not (obj.get("kind") == "ResourceClaimTemplate" and obj["metadata"]["name"] in templates)
    ]
