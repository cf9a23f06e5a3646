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

Per node and stage (stage_runtime(), from the stage's pods as the API server returned them and their logs; kept in
the cluster's result as ``node_runtime``: {stage: {node: {key: value}}}):
- ``nccl``, ``net_plugin``: the NCCL version and the net plugin with its version the node's own pod printed (its
  INFO lines, judging/transport.py versions()); node stages only, where each pod's log is its node's;
- ``images``: per container the image the node actually pulled, ``status.containerStatuses[].imageID`` (a digest);
- ``nccl_env``: the ``NCCL_*`` variables with a literal value of the pod's containers, ``NAME=value`` sorted and
  joined by spaces: of the pod as the API server returned it when it holds its containers, else (the waits keep no
  containers of a pod: cluster/pod_logs.py POD_HIDDEN) of the rendered pod spec of its replicated job (the stage's
  TrainingRuntime, rendered_env()).
These are compared per stage (and per container for ``images``): a stage's pods all run the same spec, a node that
ran only some stages is compared where it ran.

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
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import siblings, transport
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import _log_items, _pod_role
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding

NODE_KEYS = ("driver", "cuda", "kubelet", "kernel", "os_image", "container_runtime")
RUNTIME_KEYS = ("nccl", "net_plugin", "images", "nccl_env")
KEYS = NODE_KEYS + RUNTIME_KEYS
LABELS = {
    "driver": "driver",
    "cuda": "CUDA",
    "kubelet": "kubelet",
    "kernel": "kernel",
    "os_image": "OS image",
    "container_runtime": "container runtime",
    "nccl": "NCCL",
    "net_plugin": "net plugin",
    "images": "image",
    "nccl_env": "NCCL env",
}
STAGE = "drift"
MAX_TEXT = 200
# Bounds of what one pod gives (its spec and status are the cluster's, untrusted): containers and NCCL variables
# read, the length of the joined env.
MAX_CONTAINERS = 16
MAX_ENV = 64
MAX_ENV_TEXT = 2000
# JobSet's label of a pod's replicated job (cluster/pod_logs.py REPLICATED_JOB, a layer above).
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
_NODE_INFO = (("kubelet", "kubeletVersion"), ("kernel", "kernelVersion"), ("os_image", "osImage"), ("container_runtime", "containerRuntimeVersion"))


def _text(value):
    return str(value).strip()[:MAX_TEXT] if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip() else ""


def _joined(labels, names):
    parts = [_text(labels.get(name)) for name in names]
    parts = [part for part in parts if part]
    return ".".join(parts) if parts and _text(labels.get(names[0])) else ""


def grouped_configs(configs):
    """CONFIGS ({node: config}) as a result keeps them: each config once with its nodes, [{config, nodes (sorted)}]
    in the order of their first node. A cluster's nodes mostly run one config: a few entries, not one per node."""
    groups = {}
    for node in sorted(configs or {}, key=str):
        config = configs[node] if isinstance(configs[node], dict) else {}
        key = tuple(sorted((str(name), _text(value)) for name, value in config.items()))
        groups.setdefault(key, {"config": dict(key), "nodes": []})["nodes"].append(str(node))
    return list(groups.values())


def configs_of(detected):
    """{node: config} of a result's ``detected``: its ``node_configs`` (grouped_configs), or the per-node
    ``node_config`` of results written before them (earlier runs' reports, baselines)."""
    detected = detected if isinstance(detected, dict) else {}
    grouped = detected.get("node_configs")
    if isinstance(grouped, list):
        configs = {}
        for group in grouped:
            if isinstance(group, dict) and isinstance(group.get("config"), dict) and isinstance(group.get("nodes"), list):
                for node in group["nodes"]:
                    configs[str(node)] = group["config"]
        return configs
    old = detected.get("node_config")
    return old if isinstance(old, dict) else {}


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


def _env_text(containers):
    pairs = set()
    for container in containers[:MAX_CONTAINERS]:
        env = container.get("env") if isinstance(container, dict) else None
        for item in (env if isinstance(env, list) else [])[:MAX_ENV]:
            # Only literal values: a valueFrom (a Secret, a field) is not read, nor shown.
            if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].startswith("NCCL_") and isinstance(item.get("value"), str):
                pairs.add("%s=%s" % (item["name"][:100], item["value"][:MAX_TEXT]))
    return " ".join(sorted(pairs))[:MAX_ENV_TEXT]


def pod_runtime(pod, text=None):
    """{key: value} of what POD (a Pod object) ran on its node: ``images`` ({container: imageID}), ``nccl_env``, and,
    with its log TEXT, ``nccl`` and ``net_plugin`` (transport.versions). Bounded; a key without a value is left out."""
    if not isinstance(pod, dict):
        return {}
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    config = {}
    images = {}
    statuses = status.get("containerStatuses")
    for item in (statuses if isinstance(statuses, list) else [])[:MAX_CONTAINERS]:
        if isinstance(item, dict) and _text(item.get("name")) and _text(item.get("imageID")):
            images[_text(item["name"])] = _text(item["imageID"])
    if images:
        config["images"] = images
    containers = spec.get("containers")
    env = _env_text(containers if isinstance(containers, list) else [])
    if env:
        config["nccl_env"] = env
    if text:
        config.update((key, _text(value)) for key, value in transport.versions(text).items() if _text(value))
    return config


def rendered_env(objects):
    """{replicated job name: nccl_env text} of the TrainingRuntimes among OBJECTS (a stage's rendered objects)."""
    found = {}
    for obj in objects or []:
        if not isinstance(obj, dict) or obj.get("kind") != "TrainingRuntime":
            continue
        jobs = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
        for job in jobs if isinstance(jobs, list) else []:
            try:
                containers = job["template"]["spec"]["template"]["spec"]["containers"]
            except (KeyError, TypeError):
                continue
            env = _env_text(containers if isinstance(containers, list) else [])
            if env and _text(job.get("name")):
                found[_text(job["name"])] = env
    return found


def stage_runtime(pods, pod_logs=None, read_logs=True, rendered=None):
    """{node: pod_runtime()} of a stage's PODS (those with spec.nodeName; an MPI launcher is left out: it runs
    wherever there is room and its log holds every rank's lines). POD_LOGS: trainjob_logs' ``results`` (or {pod:
    text}); READ_LOGS: whether a pod's log is its node's alone (node stages); RENDERED: rendered_env() of the stage,
    the env of a pod that holds no containers (by its replicated job label). A node that ran two pods keeps the
    first's values (by pod name)."""
    logs = _log_items(pod_logs or [])
    rendered = rendered or {}
    found = {}
    for pod in sorted((pod for pod in pods or [] if isinstance(pod, dict)), key=lambda item: str((item.get("metadata") or {}).get("name"))):
        node = _text((pod.get("spec") or {}).get("nodeName")) if isinstance(pod.get("spec"), dict) else ""
        name = (pod.get("metadata") or {}).get("name") if isinstance(pod.get("metadata"), dict) else None
        if not node or _pod_role(pod) == "launcher":
            continue
        text = (logs.get(str(name)) or (None, None))[0] if read_logs else None
        config = pod_runtime(pod, text)
        job = ((pod.get("metadata") or {}).get("labels") or {}).get(REPLICATED_JOB) if isinstance(pod.get("metadata"), dict) else None
        if "nccl_env" not in config and isinstance(job, str) and job in rendered:
            config["nccl_env"] = rendered[job]
        if config:
            merged = found.setdefault(node, {})
            for key, value in config.items():
                merged.setdefault(key, value)
    return found


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


def _runtime_values(runtime, gpu_nodes):
    """(node, name, scope, value) of a cluster's ``node_runtime`` ({stage: {node: {key: value}}}): scope is the stage,
    and the container for ``images``. Only GPU_NODES (when known) count: the drift is of the nodes under test."""
    for stage in sorted(runtime, key=str):
        nodes = runtime[stage] if isinstance(runtime[stage], dict) else {}
        for node in sorted(nodes, key=str):
            config = nodes[node] if isinstance(nodes[node], dict) else {}
            if gpu_nodes is not None and node not in gpu_nodes:
                continue
            for name in RUNTIME_KEYS:
                value = config.get(name)
                if name == "images" and isinstance(value, dict):
                    for container in sorted(value, key=str)[:MAX_CONTAINERS]:
                        if _text(value[container]):
                            yield node, name, "%s/%s" % (_text(stage), _text(container)), _text(value[container])
                elif _text(value):
                    yield node, name, _text(stage), _text(value)


def judge(results, key=siblings.DEFAULT_KEY, golden=None, fail_keys=()):
    """Drift of every node of RESULTS (the fleet's results keyed by cluster, each with ``detected.node_configs`` (or an
    earlier run's ``node_config``: configs_of) and ``node_runtime``).

    Returns {findings: {cluster: [finding]}, skus: [{sku, key, scope, label, majority, counts, nodes, golden}], nodes:
    [{cluster, node, sku, key, scope, value, majority, golden, why, verdict}], golden (bool), fail_keys}; ``scope`` is
    the stage (and container) of a runtime key, empty for a node key."""
    key, golden, fail_keys = siblings.check_key(key), check_golden(golden), check_fail_keys(fail_keys)
    groups = {}
    for cluster in sorted(results or {}, key=str):
        entry = results[cluster]
        if not isinstance(entry, dict):
            continue
        configs = configs_of(entry.get("detected"))
        runtime = entry.get("node_runtime") if isinstance(entry.get("node_runtime"), dict) else {}
        if not configs and not runtime:
            continue
        sku = siblings.sku_of(entry, key)
        for node in sorted(configs):
            config = configs[node] if isinstance(configs[node], dict) else {}
            for name in NODE_KEYS:
                value = _text(config.get(name))
                if value:
                    groups.setdefault((sku, name, ""), []).append((str(cluster), str(node), value))
        for node, name, scope, value in _runtime_values(runtime, set(configs) if configs else None):
            groups.setdefault((sku, name, scope), []).append((str(cluster), str(node), value))
    findings, skus, nodes = {}, [], []
    for sku, name, scope in sorted(groups):
        rows = groups[(sku, name, scope)]
        label = "%s (%s)" % (LABELS[name], scope) if scope else LABELS[name]
        counts = {}
        for _cluster, _node, value in rows:
            counts[value] = counts.get(value, 0) + 1
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0]
        majority = top[0] if top[1] * 2 > len(rows) else None
        allowed = _golden_for(golden, sku).get(name)
        skus.append({"sku": sku, "key": name, "scope": scope, "label": label, "majority": majority, "counts": counts, "nodes": len(rows), "golden": allowed})
        verdict = "fail" if name in fail_keys else "warn"
        for cluster, node, value in rows:
            why = []
            if majority is not None and value != majority:
                why.append("differs from the majority %s of SKU %s (%d of %d nodes)" % (majority, sku, counts[majority], len(rows)))
            if allowed and not _allowed(value, allowed):
                why.append("is not in the golden versions %s for SKU %s" % (", ".join(allowed), sku))
            if not why:
                continue
            reason = "%s %s %s" % (label, value, " and ".join(why))
            nodes.append(
                {
                    "cluster": cluster,
                    "node": node,
                    "sku": sku,
                    "key": name,
                    "scope": scope,
                    "value": value,
                    "majority": majority,
                    "golden": allowed,
                    "why": reason,
                    "verdict": verdict,
                }
            )
            evidence = {"sku": sku, "key": name, "scope": scope, "value": value, "majority": majority, "golden": allowed or []}
            findings.setdefault(cluster, []).append(finding(node, STAGE, verdict, reason, evidence))
    return {"findings": findings, "skus": skus, "nodes": nodes, "golden": bool(golden), "fail_keys": list(fail_keys)}


__all__ = [
    "KEYS",
    "NODE_KEYS",
    "RUNTIME_KEYS",
    "check_fail_keys",
    "check_golden",
    "configs_of",
    "grouped_configs",
    "judge",
    "load_golden",
    "node_config",
    "pod_runtime",
    "rendered_env",
    "stage_runtime",
]
