# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The inventory of clusters, from kubeconfig contexts and what each cluster's nodes say (the inventory plugin
gpufleet.burnin.clusters is a thin shell over this).

Pure Python: the plugin reads the kubeconfigs and the clusters; here are the choices of contexts, the host names, the
host variables and the groups made of a cluster's detection (detect.py, the same as the role's).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import UNKNOWN, check_cluster, describe_node

# Host variables the plugin sets that are no role variables (role_vars.py accepts them beside the role's own).
HOST_FACTS = (
    "burnin_cluster_nodes",
    "burnin_cluster_gpu_nodes",
    "burnin_cluster_gpus_per_node",
    "burnin_cluster_gpu_architectures",
    "burnin_cluster_instance_types",
    "burnin_cluster_kubernetes_version",
    "burnin_cluster_server",
    "burnin_cluster_reason",
    "burnin_cluster_warnings",
)
UNREACHABLE_GROUP = "unreachable"
UNDETECTED_GROUP = "undetected"
# A cluster whose GPU nodes are of several architectures: grouped as such, never by the most common one.
MIXED = "mixed"
MAX_NAME = 63
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_GROUP_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


def _patterns(field, value):
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ValueError("%s: must be a list of glob patterns (strings), got %r" % (field, value))
    return value


def selected_contexts(contexts, include=None, exclude=None):
    """The context names of CONTEXTS (in order, each once) that match a pattern of INCLUDE (all when empty) and none
    of EXCLUDE; fnmatch globs, case-sensitive as context names are."""
    include, exclude = _patterns("include_contexts", include), _patterns("exclude_contexts", exclude)
    chosen, seen = [], set()
    for name in contexts:
        if name in seen:
            continue
        seen.add(name)
        if include and not any(fnmatch.fnmatchcase(name, pattern) for pattern in include):
            continue
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in exclude):
            continue
        chosen.append(name)
    return chosen


# Fields of a kubeconfig that name files; kubectl reads a relative one from the kubeconfig's directory.
_FILE_FIELDS = {"cluster": ("certificate-authority",), "user": ("client-certificate", "client-key", "tokenFile")}


def context_kubeconfig(config, context, base_dir):
    """The kubeconfig of CONTEXT alone, from CONFIG (a whole kubeconfig, parsed): its context, cluster and user, with
    relative file names made absolute against BASE_DIR (the file's directory), or None when CONTEXT is not in it.
    The inventory parses each file once and gives every cluster its own small mapping: the kubernetes client parses
    the whole file at each client otherwise, which made reading N contexts of one file cost N times N."""
    entry = next((item for item in config.get("contexts") or [] if isinstance(item, dict) and item.get("name") == context), None)
    if not isinstance(entry, dict) or not isinstance(entry.get("context"), dict):
        return None
    result = {"apiVersion": config.get("apiVersion", "v1"), "kind": "Config", "current-context": context, "contexts": [entry]}
    for section, key in (("clusters", "cluster"), ("users", "user")):
        name = entry["context"].get(key)
        found = [dict(item) for item in config.get(section) or [] if isinstance(item, dict) and item.get("name") == name][:1]
        for item in found:
            if isinstance(item.get(key), dict):
                item[key] = dict(item[key])
                for field in _FILE_FIELDS[key]:
                    value = item[key].get(field)
                    if isinstance(value, str) and value and not os.path.isabs(os.path.expanduser(value)):
                        item[key][field] = os.path.join(base_dir, value)
        result[section] = found
    return result


# What exec_credentials takes: run a kubeconfig's credential command (EKS's aws, GKE's gke-gcloud-auth-plugin) as
# kubectl would, or refuse it for a kubeconfig whose commands are not known to be safe.
EXEC_CREDENTIALS = ("run", "refuse")
REFUSED = "Refused"


def credential_command(config):
    """The command the user of CONFIG (context_kubeconfig's mapping of one context) runs for its credentials - a
    ``user.exec.command``, or a legacy ``auth-provider`` ``cmd-path`` - or '' when it runs none."""
    for item in (config or {}).get("users") or []:
        user = item.get("user") if isinstance(item, dict) else None
        if not isinstance(user, dict):
            continue
        run = user.get("exec") if isinstance(user.get("exec"), dict) else {}
        provider = user.get("auth-provider") if isinstance(user.get("auth-provider"), dict) else {}
        provider_config = provider.get("config") if isinstance(provider.get("config"), dict) else {}
        command = run.get("command") or provider_config.get("cmd-path")
        if command:
            return "%s" % command
        if user.get("exec") is not None:
            return "exec"  # an exec section without a command: the client still tries it
    return ""


def refused_exec(command):
    """The read of a cluster whose credential COMMAND exec_credentials: refuse keeps from running (cluster_host's
    ``error``); the message names the command's file name only (its arguments may hold an account or a token)."""
    return {
        "error": {
            "category": REFUSED,
            "message": "not read: the kubeconfig's user runs a command for its credentials (%s) and exec_credentials is refuse"
            % os.path.basename(command.rstrip("/")),
        }
    }


def safe_host_name(context, taken=()):
    """A host name for CONTEXT that Ansible patterns and report files take: letters, digits, ``_.-`` (others become
    ``-``, as in an EKS ARN's ``:`` and ``/``), at most 63 characters, ``-2``, ``-3``... when TAKEN holds it."""
    name = _UNSAFE.sub("-", context).strip("-.") or "cluster"
    name = name[:MAX_NAME].rstrip("-.")
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        suffix = "-%d" % number
        candidate = name[: MAX_NAME - len(suffix)] + suffix
    return candidate


def group_name(text):
    """TEXT as a group name (Ansible's rule: letters, digits, underscore; not starting with a digit)."""
    name = _GROUP_UNSAFE.sub("_", str(text)).strip("_").lower()
    return "_" + name if name[:1].isdigit() else name


def declared_platform(context, platforms):
    """The platform PLATFORMS (a mapping of context glob to platform, for clusters whose nodes cannot tell: on-prem,
    togetherai, ...) gives CONTEXT: the first matching pattern, in the mapping's order; else empty."""
    for pattern, platform in (platforms or {}).items():
        if fnmatch.fnmatchcase(context, pattern):
            return platform
    return ""


def _most_common(values):
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0] if counts else 0


def cluster_host(read, platform=""):
    """Host variables and groups of one cluster from READ: ``{'error': {category, message}}`` for a cluster that did
    not answer, else ``{'nodes': [...], 'kubernetes_version': ...}``. PLATFORM is the declared one (declared_platform),
    checked against the nodes as the role checks it. Returns (host variables, groups)."""
    error = read.get("error")
    if error:
        reason = "%s: %s" % (error.get("category", "Error"), error.get("message", ""))
        # A refused credential command: nothing was asked of the cluster, so nothing says it does not answer.
        return {"burnin_cluster_reason": reason}, [UNDETECTED_GROUP if error.get("category") == REFUSED else UNREACHABLE_GROUP]
    nodes = read.get("nodes") or []
    detection = check_cluster(nodes, platform=platform)
    gpu_nodes = [node for node in (describe_node(node, index) for index, node in enumerate(nodes)) if node["is_gpu"]]
    architectures = dict((key, value) for key, value in detection["gpu_architectures"].items() if key != UNKNOWN)
    host = {
        "burnin_cluster_kubernetes_version": read.get("kubernetes_version", ""),
        "burnin_cluster_nodes": detection["nodes"],
        "burnin_cluster_gpu_nodes": detection["gpu_nodes"],
        "burnin_cluster_gpus_per_node": _most_common(node["gpus"] for node in gpu_nodes if node["gpus"]),
        "burnin_cluster_gpu_architectures": architectures,
        "burnin_cluster_instance_types": sorted(detection["instance_types"]),
        "burnin_cluster_warnings": detection["warnings"],
    }
    platform = detection["platform"]
    gpu = MIXED if len(architectures) > 1 else detection["gpu_architecture"]
    if platform != UNKNOWN:
        host["burnin_platform"] = platform
    if gpu not in (UNKNOWN, MIXED):
        host["burnin_gpu_architecture"] = gpu
    if not detection["ok"] or gpu == MIXED:
        # The role would stop on these (or pick one GPU of several): the host says why, in a group of its own.
        reasons = list(detection["errors"])
        if gpu == MIXED:
            reasons.append(
                "the GPU nodes have several architectures (%s): set burnin_gpu_architecture for this host"
                % ", ".join("%s (%d)" % item for item in sorted(architectures.items()))
            )
        host["burnin_cluster_reason"] = "; ".join(reasons)
    groups = []
    if platform != UNKNOWN and gpu != UNKNOWN:
        groups.append(group_name("%s_%s" % (platform, gpu)))
    if platform != UNKNOWN:
        groups.append(group_name("csp_%s" % platform))
    if gpu != UNKNOWN:
        groups.append(group_name("gpu_%s" % gpu))
    if not detection["ok"]:
        groups.append(UNDETECTED_GROUP)
    return host, groups


def read_all(items, read, workers, timeout, clock=None):
    """READ(argument) for every (key, argument) of ITEMS, WORKERS at a time, each in a daemon thread given TIMEOUT
    seconds from its start: a cluster that does not answer in time is ``{'error': Unreachable}`` and no longer
    holds up the others (its thread is left behind; being a daemon it does not keep the process alive). Returns
    {key: result}; an exception of READ is that cluster's ``Error``."""
    import threading
    import time

    clock = clock or time.monotonic
    results, running, pending = {}, {}, list(items)
    done = threading.Condition()

    def run(key, argument):
        try:
            value = read(argument)
        except Exception as exc:  # noqa: BLE001 pylint: disable=broad-except
            value = {"error": {"category": "Error", "message": "%s: %s" % (type(exc).__name__, exc)}}
        with done:
            if key in running:
                results[key] = value
                del running[key]
            done.notify_all()

    with done:
        while pending or running:
            now = clock()
            for key, started in list(running.items()):
                if now - started >= timeout:
                    del running[key]
                    results[key] = {"error": {"category": "Unreachable", "message": "no answer within %s s (the inventory's timeout)" % timeout}}
            while pending and len(running) < workers:
                key, argument = pending.pop(0)
                running[key] = clock()
                thread = threading.Thread(target=run, args=(key, argument), name="gpufleet-inventory-%s" % key)
                thread.daemon = True
                thread.start()
            if running:
                done.wait(max(0.01, min(running.values()) + timeout - clock()))
    return results
