# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Everything one cluster needs for one burn-in, as the original WorkloadRun controller built it.

``plan_workload`` renders the runtime and the platform overrides, keeps the overrides whose ``when`` matches the
cluster, merges their runtime patches and dependencies, builds the trainer command line (mpiArgs prepended,
preCommand wrapped into ``/bin/bash -c``) and the TrainJob. No cluster is contacted.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import shlex

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import dra

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import merge

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import nccl_env

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import overrides

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import platform_catalog

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import runtime

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import templating

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import trainer_rules
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

TRAINJOB_API = runtime.API_VERSION
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGER = "gpufleet.burnin"
# Trainer v2.3's webhook wants a domain-prefixed name for a runtime patch's manager (Kueue's: "kueue.x-k8s.io/manager").
RUNTIME_PATCH_MANAGER = "gpufleet.burnin/burnin"
ENTRY_LABEL = "gpufleet.burnin/entry"
RUN_LABEL = "gpufleet.burnin/run-id"
TOPOLOGY_ANNOTATION = "gpufleet.burnin/topology-key"
MPI_TIMEOUT_DEFAULT = 3600

TRAINER_KEYS = {
    "torch": ("script", "module", "args"),
    "mpi": ("binary", "args", "mpi_args", "mpirun_path", "timeout"),
    "exec": ("command", "args"),
}


def _str_list(field, value):
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in value):
        raise ConfigError(field, "must be a list of strings, got %r" % (value,))
    return ["%s" % item for item in value]


def trainer_command(framework, trainer, gpus_per_node, enable_mnnvl):
    """``(command, args)`` of the trainer container for each framework, as the original WorkloadRun controller builds them."""
    trainer = trainer or {}
    if not isinstance(trainer, dict):
        raise ConfigError("trainer", "must be a mapping, got %r" % (trainer,))
    allowed = TRAINER_KEYS[framework]
    unknown = sorted(set(trainer) - set(allowed))
    if unknown:
        raise ConfigError("trainer", "unknown key(s) %s for framework %s; allowed: %s" % (", ".join(unknown), framework, ", ".join(allowed)))
    args = _str_list("trainer.args", trainer.get("args"))
    if framework == "torch":
        if bool(trainer.get("script")) == bool(trainer.get("module")):
            raise ConfigError("trainer", "torch needs exactly one of 'script' or 'module'")
        head = [trainer["script"]] if trainer.get("script") else ["-m", trainer["module"]]
        return ["torchrun"], head + args
    if framework == "exec":
        command = _str_list("trainer.command", trainer.get("command"))
        if not command:
            raise ConfigError("trainer.command", "exec needs a non-empty command list")
        return command, args
    if not trainer.get("binary"):
        raise ConfigError("trainer.binary", "mpi needs the binary mpirun starts, e.g. /usr/local/bin/all_reduce_perf")
    timeout = trainer.get("timeout", MPI_TIMEOUT_DEFAULT)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise ConfigError("trainer.timeout", "must be a positive number of seconds, got %r" % (timeout,))
    mpi_args = [
        "-N",
        str(gpus_per_node),
        "--allow-run-as-root",
        "--mca",
        "plm_rsh_args",
        "-o StrictHostKeyChecking=no -o ConnectionAttempts=10",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "NCCL_MNNVL_ENABLE=%s" % ("1" if enable_mnnvl else "0"),
    ] + _str_list("trainer.mpi_args", trainer.get("mpi_args"))
    return ["timeout", str(timeout), trainer.get("mpirun_path") or "mpirun"], mpi_args + [trainer["binary"]] + args


def wrap_pre_command(command, args, lines):
    """Original post-template step: ``/bin/bash -c "<lines>\\nexec <command args>"``.

    DEVIATION: each word is quoted for the shell with shlex.quote (single quotes), so ``$`` and backticks in
    arguments stay literal; the original used Go's %q (double quotes), which bash expands.
    """
    if not lines:
        return command, args
    return ["/bin/bash", "-c"], ["\n".join(list(lines) + ["exec " + " ".join(shlex.quote(word) for word in command + args)])]


def _check_job_template(job_template, where):
    """What the TrainJob is built from must survive each override: a patch may not remove or retype it."""
    node = job_template
    for key in ("spec", "workload", "trainJob"):
        node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            raise ConfigError(
                where,
                "leaves the job template without the mapping spec.workload.trainJob (the TrainJob's "
                "spec); a jobTemplate or jobTemplatePatch may change it, not remove it",
            )
    for key in ("trainer", "runtimeRef"):
        if node.get(key) is not None and not isinstance(node[key], dict):
            raise ConfigError(where, "makes spec.workload.trainJob.%s %r; it must stay a mapping" % (key, node[key]))
    if not isinstance(node.get("runtimeRef"), dict):
        raise ConfigError(where, "removes spec.workload.trainJob.runtimeRef, which names the TrainingRuntime")


def _labels(obj, labels):
    metadata = obj.setdefault("metadata", {})
    metadata["labels"] = dict(metadata.get("labels") or {}, **labels)
    return obj


_PLATFORM_DATA_KEYS = (
    "server_version",
    "rct_api_version",
    "dra_driver_version",
    "efa_per_node",
    "rdma_resource",
    "rdma_per_node",
    "platform_vars",
    "extended_platforms",
)


def resolve_cluster(config, facts, catalog):
    """Instance type and NIC counts of the cluster, each from the first source that has it: given in ``config``,
    discovered from ``config["cluster_nodes"]`` (Node objects), or the platform catalogue's default.

    Returns ``{"instance_type", "instance_type_source", "efa_per_node", "rdma_resource", "rdma_per_node",
    "nic_source"}``; sources are ``given``, ``nodes``, ``default`` or None (unknown / the templates' table).
    """
    nodes = config.get("cluster_nodes")
    discovered = {}
    if nodes not in (None, []):
        discovered = platform_catalog.discover_node_resources(nodes, facts.get("platform"), catalog)
    instance_type, source = config.get("instance_type"), "given"
    if instance_type is not None and (not isinstance(instance_type, str) or not instance_type.strip()):
        raise ConfigError("instance_type", "must be a non-empty instance / machine type such as p5.48xlarge, got %r" % (instance_type,))
    if not instance_type:
        instance_type, source = discovered.get("instance_type"), "nodes"
    if not instance_type:
        instance_type, source = platform_catalog.default_instance_type(facts.get("platform"), facts.get("gpuArchitecture"), catalog), "default"
    result = {
        "instance_type": instance_type,
        "instance_type_source": source if instance_type else None,
        "efa_per_node": config.get("efa_per_node"),
        "rdma_resource": config.get("rdma_resource") or None,
        "rdma_per_node": config.get("rdma_per_node"),
        "nic_source": None,
    }
    if result["efa_per_node"] is not None or result["rdma_resource"] is not None or result["rdma_per_node"] is not None:
        result["nic_source"] = "given"
    if result["efa_per_node"] is None and discovered.get("efa_per_node") is not None:
        result["efa_per_node"], result["nic_source"] = discovered["efa_per_node"], result["nic_source"] or "nodes"
    if result["rdma_resource"] is None and result["rdma_per_node"] is None and discovered.get("rdma_resource"):
        result["rdma_resource"], result["rdma_per_node"] = discovered["rdma_resource"], discovered["rdma_per_node"]
        result["nic_source"] = result["nic_source"] or "nodes"
    return result


def _check_target(config):
    """The run id and namespace every object of the plan is named and placed by."""
    run_id = config.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        raise ConfigError("run_id", "must be a non-empty string")
    namespace = config.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        raise ConfigError("namespace", "must be a non-empty namespace name")
    return run_id, namespace


def _override_sources(config, facts, cfg, cluster, catalog, library):
    """The platform layer's data and the overrides in the order they apply: ``(data, platform, user)``.

    ``platform`` are the rendered platform overrides of ``facts["platform"]``, ``user`` the parsed ``config["overrides"]``;
    both lists of ``(item, source)``.
    """
    framework = config.get("framework", "torch")
    override_config = dict((key, config[key]) for key in _PLATFORM_DATA_KEYS if key in config)
    override_config.update(
        {
            "entry_name": cfg["entry_name"],
            "nodes": cfg["nodes"],
            "gpus_per_node": cfg["gpus_per_node"],
            "mlnx_per_node": config.get("mlnx_per_node") or 0,
            "enable_mnnvl": config.get("enable_mnnvl", False),
            "framework": framework,
            "efa_per_node": cluster["efa_per_node"],
            "rdma_resource": cluster["rdma_resource"],
            "rdma_per_node": cluster["rdma_per_node"],
        }
    )
    data = overrides.normalize_override_config(override_config, catalog)
    platform_overrides = overrides.render_overrides(data, library, platforms=[facts.get("platform")])
    user_overrides = config.get("overrides") or []
    if not isinstance(user_overrides, list):
        raise ConfigError("overrides", "must be a list of override mappings")
    user_overrides = [(overrides.parse_override(item, index), "overrides") for index, item in enumerate(user_overrides)]
    return data, platform_overrides, user_overrides


def _base_job_template(cfg, base_runtime):
    """The job template before any override: the TrainJob's spec referencing the runtime, with image and sizes."""
    trainer = {"image": cfg["image"], "numNodes": cfg["nodes"]}
    if cfg["gpus_per_node"] > 0:
        trainer["numProcPerNode"] = cfg["gpus_per_node"]
    return {
        "spec": {
            "workload": {
                "trainJob": {
                    "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": base_runtime["metadata"]["name"]},
                    "trainer": trainer,
                }
            }
        }
    }


def _apply_overrides(job_template, platform_overrides, user_overrides, match_facts, framework):
    """Keep the overrides whose ``when`` matches ``match_facts``, platform ones first, and merge them in order.

    Returns ``(job_template, matched, dependencies, pre_command, mpi_args, orchestration)``.
    """
    matched, dependencies, pre_command, mpi_args, orchestration = [], [], [], [], {}
    positions = {}
    for origin, items in (("platform", platform_overrides), ("user", user_overrides)):
        for item, source in items:
            positions[source] = positions.get(source, 0) + 1
            if not merge.matches_when(item["when"], match_facts):
                continue
            matched.append({"origin": origin, "position": positions[source], "source": source, "when": item["when"]})
            where = "overrides[%d]" % (positions[source] - 1) if origin == "user" else "%s override #%d" % (source, positions[source])
            if "jobTemplate" in item:
                job_template = merge.merge_named(job_template, item["jobTemplate"])
            if "jobTemplatePatch" in item:
                job_template = merge.apply_json_patch(job_template, item["jobTemplatePatch"], field="%s.jobTemplatePatch" % where)
            _check_job_template(job_template, where)
            dependencies.extend(copy.deepcopy(item.get("dependencies", [])))
            orchestration.update(copy.deepcopy(item.get("orchestration", {})))
            pre_command.extend(item.get("preCommand", []))
            if framework == "mpi" and item.get("mpiArgs"):
                # Each matching override prepends: later overrides end up in front (the original's applyWRPreTemplateOverrides).
                mpi_args = list(item["mpiArgs"]) + mpi_args
    return job_template, matched, dependencies, pre_command, mpi_args, orchestration


# What the image's own ENV lines set and the ranks need (nccl-tests finds libnccl.so.2 and NCCL its net plugin on
# LD_LIBRARY_PATH; orted and the binary on PATH): forwarded from the launcher, which runs the same image.
IMAGE_PATHS = ("PATH", "LD_LIBRARY_PATH")


def _forwarded(args):
    """Names an mpirun line already passes with -x (NAME=VALUE or NAME)."""
    return set(args[index + 1].split("=", 1)[0] for index in range(len(args) - 1) if args[index] == "-x")


def rank_env_args(args, worker_env):
    """``-x`` arguments that give every rank the worker container's environment (the base NCCL variables, the
    platform's and the user's): the ranks start over ssh, and sshd gives them none of the container's environment,
    only what mpirun forwards (tests/e2e/test_mpi_launch.py). A name the line already forwards keeps that value
    (NCCL_DEBUG=INFO, the overrides' pins); a ``valueFrom`` variable is forwarded by name (the launcher has the user's
    env too); PATH and LD_LIBRARY_PATH, unless the container sets them, are the launcher's: the image's."""
    done = _forwarded(args)
    result = []
    for item in worker_env or []:
        name = item.get("name")
        if not name or name in done:
            continue
        done.add(name)
        result += ["-x", "%s=%s" % (name, item["value"]) if "value" in item else name]
    for name in IMAGE_PATHS:
        if name not in done:
            result += ["-x", name]
    return result


def _worker_env(objects, runtime_name):
    """The env of the GPU workers' container ("node" of replicatedJob "node") in the merged runtime."""
    for obj in objects:
        if obj.get("kind") != "TrainingRuntime" or (obj.get("metadata") or {}).get("name") != runtime_name:
            continue
        for job in obj["spec"]["template"]["spec"]["replicatedJobs"]:
            if job.get("name") == "node":
                for container in job["template"]["spec"]["template"]["spec"].get("containers") or []:
                    if container.get("name") == "node":
                        return container.get("env") or []
    return []


def _trainjob_spec(job_template, command, args, mpi_args, pre_command, enable_mnnvl, cfg, base_runtime, rank_env=None):
    """The TrainJob's spec from the merged template: the trainer's command line (the overrides' mpiArgs after the
    collection's, then for MPI the workers' env with -x before the binary, preCommand wrapped) and the image pull
    secrets as runtime patches."""
    if mpi_args:
        position = args.index("NCCL_MNNVL_ENABLE=%s" % ("1" if enable_mnnvl else "0")) + 1
        args = args[:position] + mpi_args + args[position:]
    if rank_env is not None:
        position = args.index(rank_env["binary"])
        args = args[:position] + rank_env_args(args[:position], rank_env["env"]) + args[position:]
    command, args = wrap_pre_command(command, args, pre_command)
    trainjob_spec = job_template["spec"]["workload"]["trainJob"]
    trainjob_spec["trainer"] = dict(trainjob_spec.get("trainer") or {}, command=command, args=args)
    if cfg["image_pull_secrets"]:
        # The runtime never carries pull secrets; the TrainJob patches them onto every replicated job.
        job_names = [job["name"] for job in base_runtime["spec"]["template"]["spec"]["replicatedJobs"]]
        trainjob_spec["runtimePatches"] = [
            {
                "manager": RUNTIME_PATCH_MANAGER,
                "trainingRuntimeSpec": {
                    "template": {
                        "spec": {
                            "replicatedJobs": [
                                {"name": name, "template": {"spec": {"template": {"spec": {"imagePullSecrets": cfg["image_pull_secrets"]}}}}}
                                for name in job_names
                            ]
                        }
                    }
                },
            }
        ]
    return trainjob_spec


def _stamp_objects(base_runtime, objects, trainjob_spec, trainjob_name, entry_name, run_id, namespace, orchestration):
    """Every object to apply, in order (dependencies, runtime, TrainJob: ``objects`` are the runtime merged with the
    dependencies), with the collection's labels, the topology annotation and the namespace: ``(objects, topology_key)``."""
    shared_labels = {MANAGED_BY_LABEL: MANAGER, ENTRY_LABEL: entry_name}
    runtime_key = merge.object_key(base_runtime)
    merged_runtime = [obj for obj in objects if merge.object_key(obj) == runtime_key][0]
    others = [obj for obj in objects if merge.object_key(obj) != runtime_key]
    trainjob = {
        "apiVersion": TRAINJOB_API,
        "kind": "TrainJob",
        "metadata": {"name": trainjob_name, "labels": dict(shared_labels, **{RUN_LABEL: run_id})},
        "spec": trainjob_spec,
    }
    topology_key = (orchestration.get("topology") or {}).get("topologyKey")
    if topology_key:
        trainjob["metadata"]["annotations"] = {TOPOLOGY_ANNOTATION: topology_key}
    planned = [_labels(obj, shared_labels) for obj in others + [merged_runtime]] + [trainjob]
    for obj in planned:
        obj["metadata"]["namespace"] = namespace
    return planned, topology_key


def _check_dra(data, planned):
    """Objects that need Dynamic Resource Allocation on a cluster without it: the error that names them."""
    if data["rct_api_version"] == dra.DRA_UNAVAILABLE:
        needing = ["%s %s" % (obj["kind"], obj["metadata"]["name"]) for obj in planned if overrides.needs_dra(obj)]
        if needing:
            raise dra.dra_unavailable_error(data["server_version"], ", ".join(needing))


def plan_workload(config, facts, library=None):
    """Build every object of one burn-in for one cluster.

    ``config``: entry_name, namespace, image, framework, nodes, gpus_per_node, mlnx_per_node, enable_mnnvl,
    env, volumes, volume_mounts, init_containers, resources, image_pull_secrets, trainer_version, trainer
    (framework-specific command), overrides (user overrides, applied after the platform ones), run_id; and for the
    platform layer: instance_type, cluster_nodes (Node objects to discover from), server_version, rct_api_version,
    dra_driver_version, efa_per_node, rdma_resource, rdma_per_node, platform_vars, extended_platforms.
    ``facts``: platform, gpuArchitecture (the cluster's, detected or declared).
    Returns a dict: objects (dependencies, runtime, TrainJob: apply in that order), trainjob_name, matched
    (the matched overrides: origin, 1-based position within their source, source, when), topology_key,
    orchestration, pre_command, mpi_args, instance_type and platform_data (what the platform layer used).

    The steps: check the target (:func:`_check_target`), build the runtime, resolve the cluster
    (:func:`resolve_cluster`), render and parse the overrides (:func:`_override_sources`), match and merge them into
    the job template (:func:`_apply_overrides`), build the TrainJob's spec (:func:`_trainjob_spec`), stamp labels,
    names and namespace (:func:`_stamp_objects`) and check DRA (:func:`_check_dra`).
    """
    framework = config.get("framework", "torch")
    run_id, namespace = _check_target(config)
    enable_mnnvl = config.get("enable_mnnvl", False)
    env = nccl_env.merge_env(nccl_env.base_nccl_env(enable_mnnvl), config.get("env") or [])
    base_runtime = runtime.build_runtime(framework, dict(config, env=env))
    cfg = runtime.normalize_runtime_config(dict(config, env=env))
    library = library or templating.shared_library()
    catalog = platform_catalog.load_platform_catalog(library.lib_dir)
    cluster = resolve_cluster(config, facts, catalog)
    data, platform_overrides, user_overrides = _override_sources(config, facts, cfg, cluster, catalog, library)
    match_facts = dict(facts, framework=framework, workloadKind="TrainJob", instanceType=cluster["instance_type"])

    command, args = trainer_command(framework, config.get("trainer"), cfg["gpus_per_node"], enable_mnnvl)
    trainjob_name = "%s-%s" % (cfg["entry_name"], run_id)
    job_template, matched, dependencies, pre_command, mpi_args, orchestration = _apply_overrides(
        _base_job_template(cfg, base_runtime), platform_overrides, user_overrides, match_facts, framework
    )
    merged = merge.merge_objects([base_runtime] + dependencies)
    rank_env = None
    if framework == "mpi":
        rank_env = {"binary": config["trainer"]["binary"], "env": _worker_env(merged, base_runtime["metadata"]["name"])}
    trainjob_spec = _trainjob_spec(job_template, command, args, mpi_args, pre_command, enable_mnnvl, cfg, base_runtime, rank_env)
    planned, topology_key = _stamp_objects(base_runtime, merged, trainjob_spec, trainjob_name, cfg["entry_name"], run_id, namespace, orchestration)
    # What the chosen Trainer release refuses or changes silently (_lib/trainer-versions.yaml): names, images.
    trainer_rules.check_runtime(planned[-2], planned[-1], framework, cfg["trainer_version"])
    _check_dra(data, planned)
    platform_data = dict(
        cluster, rct_api_version=data["rct_api_version"], compute_domain_num_nodes=data["compute_domain_num_nodes"], platform_vars=data["platform_vars"]
    )
    return {
        "objects": planned,
        "trainjob_name": trainjob_name,
        "matched": matched,
        "topology_key": topology_key,
        "orchestration": orchestration,
        "pre_command": pre_command,
        "mpi_args": mpi_args,
        "instance_type": cluster["instance_type"],
        "platform_data": platform_data,
    }
