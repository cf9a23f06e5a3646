# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Configuration drift: what each node runs, against its SKU's majority and an optional golden file.

Per node (node_config(), from the Node object detection reads, cluster/detect.py node_evidence):
- ``kubelet``, ``kernel``, ``os_image``, ``container_runtime``: the node's ``status.nodeInfo`` (kubeletVersion,
  kernelVersion, osImage, containerRuntimeVersion);
- ``driver``, ``cuda``: NVIDIA GPU feature discovery's labels, ``nvidia.com/cuda.driver-version.full`` (or
  ``nvidia.com/cuda.driver.major``.``minor``.``rev``) and ``nvidia.com/cuda.runtime-version.full`` (or
  ``nvidia.com/cuda.runtime.major``.``minor``).

A node whose value differs from the value most nodes of its SKU (judging/siblings.py sku_of, every cluster of the
run) hold, when more than half hold it, drifts; so does a value the golden file does not allow for its SKU. The golden
file follows GCP cluster-health-scanner's configcheck (GoogleCloudPlatform/cluster-health-scanner, ``configcheck``:
driver, CUDA, NCCL, plugin and image versions against ``qualified_versions.json``): ``{<SKU or its prefix, or "*">:
{<key>: [allowed values, shell-style patterns]}}``. A drift warns; a key in ``fail_keys`` fails. Pure.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import read_yaml_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import siblings
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding

KEYS = ("driver", "cuda", "kubelet", "kernel", "os_image", "container_runtime")
LABELS = {
    "driver": "driver",
    "cuda": "CUDA",
    "kubelet": "kubelet",
    "kernel": "kernel",
    "os_image": "OS image",
    "container_runtime": "container runtime",
}
STAGE = "drift"
MAX_TEXT = 200
_NODE_INFO = (("kubelet", "kubeletVersion"), ("kernel", "kernelVersion"), ("os_image", "osImage"), ("container_runtime", "containerRuntimeVersion"))


def _text(value):
    return str(value).strip()[:MAX_TEXT] if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip() else ""


def _joined(labels, names):
    parts = [_text(labels.get(name)) for name in names]
    parts = [part for part in parts if part]
    return ".".join(parts) if parts and _text(labels.get(names[0])) else ""


def node_config(node):
    """{key: value} of a Node object (or its evidence): the KEYS it shows, each a bounded string."""
    if not isinstance(node, dict):
        return {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    info = (node.get("status") or {}).get("nodeInfo") or {}
    labels = labels if isinstance(labels, dict) else {}
    info = info if isinstance(info, dict) else {}
    config = {}
    driver = _text(labels.get("nvidia.com/cuda.driver-version.full")) or _joined(
        labels, ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev")
    )
    cuda = _text(labels.get("nvidia.com/cuda.runtime-version.full")) or _joined(labels, ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor"))
    if driver:
        config["driver"] = driver
    if cuda:
        config["cuda"] = cuda
    for key, field in _NODE_INFO:
        if _text(info.get(field)):
            config[key] = _text(info[field])
    return config


def load_golden(value, field="burnin_golden"):
    """VALUE (a mapping, or the path of a YAML or JSON file holding one) checked by check_golden()."""
    if isinstance(value, str) and value.strip():
        try:
            value = read_yaml_file(value.strip(), "the golden versions file")
        except BurninError as exc:
            raise ConfigError(field, str(exc))
    return check_golden(value, field)


def check_golden(value, field="burnin_golden"):
    """VALUE as {sku pattern: {key: [allowed]}} (empty: none), else ConfigError naming the field."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, dict):
        raise ConfigError(field, "must map a SKU (e.g. aws/h100/p5.48xlarge, a prefix such as aws/h100, or '*') to {key: [allowed versions]}")
    out = {}
    for sku, keys in value.items():
        where = "%s.%s" % (field, sku)
        if not isinstance(sku, str) or not sku.strip():
            raise ConfigError(field, "a SKU must be a non-empty string, got %r" % (sku,))
        if not isinstance(keys, dict):
            raise ConfigError(where, "must map keys (%s) to lists of allowed versions" % ", ".join(KEYS))
        out[sku.strip()] = {}
        for key, allowed in keys.items():
            if key not in KEYS:
                raise ConfigError("%s.%s" % (where, key), "is not a key the drift check reads; allowed: %s" % ", ".join(KEYS))
            if isinstance(allowed, (str, int, float)) and not isinstance(allowed, bool):
                allowed = [allowed]
            if not isinstance(allowed, list) or not allowed or not all(_text(item) for item in allowed):
                raise ConfigError("%s.%s" % (where, key), "must be a non-empty list of allowed versions (patterns such as 570.*), got %r" % (allowed,))
            out[sku.strip()][key] = [_text(item) for item in allowed]
    return out


def check_fail_keys(value, field="burnin_drift_fail"):
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)) or any(item not in KEYS for item in value):
        raise ConfigError(field, "must be a list of %s, got %r" % (", ".join(KEYS), value))
    return tuple(value)


def _golden_for(golden, sku):
    """The allowed versions of SKU: every golden entry that is '*', the SKU or a prefix of it ('/'-separated), the
    most specific last (it wins)."""
    chosen = {}
    parts = sku.split("/")
    for pattern in sorted(golden, key=lambda item: (item != "*", len(item.split("/")))):
        words = pattern.split("/")
        if pattern == "*" or parts[: len(words)] == words:
            chosen.update(golden[pattern])
    return chosen


def _allowed(value, patterns):
    return any(fnmatch.fnmatchcase(value, pattern) for pattern in patterns)


def judge(results, key=siblings.DEFAULT_KEY, golden=None, fail_keys=()):
    """Drift of every node of RESULTS (the fleet's results keyed by cluster, each with ``detected.node_config``).

    Returns {findings: {cluster: [finding]}, skus: [{sku, key, label, majority, counts, nodes, golden}], nodes:
    [{cluster, node, sku, key, value, majority, golden, why, verdict}], golden (bool), fail_keys}."""
    key, golden, fail_keys = siblings.check_key(key), check_golden(golden), check_fail_keys(fail_keys)
    groups = {}
    for cluster in sorted(results or {}, key=str):
        entry = results[cluster]
        detected = entry.get("detected") if isinstance(entry, dict) and isinstance(entry.get("detected"), dict) else {}
        configs = detected.get("node_config")
        if not isinstance(configs, dict):
            continue
        sku = siblings.sku_of(entry, key)
        for node in sorted(configs):
            config = configs[node] if isinstance(configs[node], dict) else {}
            for name in KEYS:
                value = _text(config.get(name))
                if value:
                    groups.setdefault((sku, name), []).append((str(cluster), str(node), value))
    findings, skus, nodes = {}, [], []
    for sku, name in sorted(groups):
        rows = groups[(sku, name)]
        counts = {}
        for _cluster, _node, value in rows:
            counts[value] = counts.get(value, 0) + 1
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0]
        majority = top[0] if top[1] * 2 > len(rows) else None
        allowed = _golden_for(golden, sku).get(name)
        skus.append({"sku": sku, "key": name, "label": LABELS[name], "majority": majority, "counts": counts, "nodes": len(rows), "golden": allowed})
        verdict = "fail" if name in fail_keys else "warn"
        for cluster, node, value in rows:
            why = []
            if majority is not None and value != majority:
                why.append("differs from the majority %s of SKU %s (%d of %d nodes)" % (majority, sku, counts[majority], len(rows)))
            if allowed and not _allowed(value, allowed):
                why.append("is not in the golden versions %s for SKU %s" % (", ".join(allowed), sku))
            if not why:
                continue
            reason = "%s %s %s" % (LABELS[name], value, " and ".join(why))
            nodes.append(
                {
                    "cluster": cluster,
                    "node": node,
                    "sku": sku,
                    "key": name,
                    "value": value,
                    "majority": majority,
                    "golden": allowed,
                    "why": reason,
                    "verdict": verdict,
                }
            )
            evidence = {"sku": sku, "key": name, "value": value, "majority": majority, "golden": allowed or []}
            findings.setdefault(cluster, []).append(finding(node, STAGE, verdict, reason, evidence))
    return {"findings": findings, "skus": skus, "nodes": nodes, "golden": bool(golden), "fail_keys": list(fail_keys)}


__all__ = ["KEYS", "check_fail_keys", "check_golden", "judge", "load_golden", "node_config"]
