# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""DRA (resource.k8s.io) policy for the platform layer, as pure functions of plain data: the API version of
ResourceClaimTemplates from the cluster's server version (``resource_api_version``) and the ComputeDomain ``numNodes``
policy by NVIDIA DRA driver version (``compute_domain_num_nodes``)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

RESOURCE_API_GROUP = "resource.k8s.io"
RCT_API_VERSIONS = ("v1", "v1beta2", "v1beta1")
RCT_API_DEFAULT = "v1"
# Rendered in place of the apiVersion when the server is too old for DRA; an error once DRA is actually needed.
DRA_UNAVAILABLE = "resource.k8s.io/UNAVAILABLE"
_SERVER_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?\Z")
_DRIVER_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?\Z")
# IMEXDaemonsWithDNSNames is on by default from NVIDIA DRA driver chart v25.8.0: numNodes 0 is then recommended.
DNS_NAMES_DRIVER = (25, 8, 0)


def served_rct_versions(api_groups):
    """The resource.k8s.io versions in API_GROUPS (the API server's /apis answer, an APIGroupList), in the order of
    RCT_API_VERSIONS (newest first): the first is the one the overrides use; none on a server without DRA."""
    served = set(
        version.get("version")
        for group in (api_groups or {}).get("groups") or []
        if group.get("name") == RESOURCE_API_GROUP
        for version in group.get("versions") or []
    )
    return [version for version in RCT_API_VERSIONS if version in served]


def parse_server_version(value, field="server_version"):
    """``(major, minor)`` of a Kubernetes server version such as ``v1.33.2``, ``1.34`` or ``v1.34.3-gke.1318000``."""
    match = _SERVER_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise ConfigError(field, "must be a Kubernetes version such as v1.33.2 or 1.34, got %r" % (value,))
    return int(match.group(1)), int(match.group(2))


def resource_api_version(explicit=None, server_version=None):
    """The ``resource.k8s.io`` apiVersion for ResourceClaimTemplates.

    ``explicit`` (``v1``, ``v1beta2``, ``v1beta1``, with or without the group) wins. Otherwise from the server
    version: 1.34 and later -> v1 (GA), 1.33 -> v1beta2, 1.32 -> v1beta1; older servers have no DRA API and give
    ``DRA_UNAVAILABLE`` (an error once an object needs DRA). Neither given -> v1, as the seed.
    """
    if explicit not in (None, ""):
        version = explicit[len(RESOURCE_API_GROUP) + 1 :] if isinstance(explicit, str) and explicit.startswith(RESOURCE_API_GROUP + "/") else explicit
        if version not in RCT_API_VERSIONS:
            raise ConfigError(
                "rct_api_version", "must be one of %s (optionally prefixed with %s/), got %r" % (", ".join(RCT_API_VERSIONS), RESOURCE_API_GROUP, explicit)
            )
        return "%s/%s" % (RESOURCE_API_GROUP, version)
    if server_version in (None, ""):
        return "%s/%s" % (RESOURCE_API_GROUP, RCT_API_DEFAULT)
    major, minor = parse_server_version(server_version)
    if (major, minor) >= (1, 34):
        return RESOURCE_API_GROUP + "/v1"
    if (major, minor) == (1, 33):
        return RESOURCE_API_GROUP + "/v1beta2"
    if (major, minor) == (1, 32):
        return RESOURCE_API_GROUP + "/v1beta1"
    return DRA_UNAVAILABLE


def dra_unavailable_error(server_version, what):
    return ConfigError(
        "server_version",
        "Kubernetes %s has no resource.k8s.io DRA API, which %s needs; allowed: a server "
        ">= v1.32 (v1beta1 on 1.32, v1beta2 on 1.33, v1 on 1.34 and later), or set "
        "rct_api_version explicitly" % (server_version, what),
    )


def parse_driver_version(value, field="dra_driver_version"):
    """``(major, minor, patch)`` of an NVIDIA DRA driver version such as ``v25.8.0``, ``25.3.2`` or ``0.4.0``."""
    match = _DRIVER_VERSION.match(value) if isinstance(value, str) else None
    if not match:
        raise ConfigError(field, "must be a version such as v25.8.0 or 0.4.0, got %r" % (value,))
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def compute_domain_num_nodes(dra_driver_version, nodes):
    """ComputeDomain ``spec.numNodes`` for the NVIDIA DRA driver version (NVIDIA/k8s-dra-driver-gpu ``computedomain.go``).

    - unknown (None): 0, as the seed;
    - 25.8.0 and later (``IMEXDaemonsWithDNSNames`` on by default): 0, the recommended value;
    - 25.x before 25.8.0 (gate off): must equal the node count, or pods wait in ContainerCreating;
    - major below 25: the kubernetes-sigs ``dra-driver-nvidia-gpu`` numbering (v0.4.0 on), newer than 25.12: 0.
    """
    if dra_driver_version in (None, ""):
        return 0
    version = parse_driver_version(dra_driver_version)
    if version[0] >= 25 and version < DNS_NAMES_DRIVER:
        return nodes
    return 0
