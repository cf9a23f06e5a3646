# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The role's plan of one cluster, from its checked ``burnin_*`` variables (plugins/module_utils/burnin/role_vars.py)
and what detection read, in one place: the per-node counts from the GPU defaults, the workload of the catalogue with
the user's image, trainer and env, the options of gpufleet.burnin.workload_plan, the plan, the TrainJob annotations
and the fields the cluster's result records (the actions gpufleet.burnin.burnin_plan and gpufleet.burnin.burnin_stage).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result, stages, sweep
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import defaults, images, merge, nccl_env, node_local, platform_catalog, templating
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import ENTRY_LABEL, MANAGED_BY_LABEL, MANAGER, RUN_LABEL, plan_workload
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs
from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.validation.argspec import workload_plan_spec
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import runs_on_every_node

# Role variable -> workload_plan option, passed as they are when set (None or "" leaves the option's default).
_PASSED = (
    ("burnin_entry_name", "entry_name"),
    ("burnin_nodes", "nodes"),
    ("burnin_enable_mnnvl", "enable_mnnvl"),
    ("burnin_volumes", "volumes"),
    ("burnin_volume_mounts", "volume_mounts"),
    ("burnin_init_containers", "init_containers"),
    ("burnin_resources", "resources"),
    ("burnin_image_pull_secrets", "image_pull_secrets"),
    ("burnin_trainer_version", "trainer_version"),
    ("burnin_allow_secret_env", "allow_secret_env"),
    ("burnin_overrides", "overrides"),
    ("burnin_extended_platforms", "extended_platforms"),
    ("burnin_instance_type", "instance_type"),
    ("burnin_dra_driver_version", "dra_driver_version"),
    ("burnin_efa_per_node", "efa_per_node"),
    ("burnin_rdma_resource", "rdma_resource"),
    ("burnin_rdma_per_node", "rdma_per_node"),
    ("burnin_platform_vars", "platform_vars"),
)


def _set(value):
    return value is not None and value != "" and value != {} and value != []


def _with_defaults(options):
    """OPTIONS with workload_plan's argument-spec defaults for what is not set (as the action would get them)."""
    out = dict(options)
    for name, spec in workload_plan_spec().items():
        if name not in out and "default" in spec:
            out[name] = copy.deepcopy(spec["default"])
    return out


def workload_of(variables, platform, gpu_architecture):
    """The catalogue's workload for the cluster: {counts, workload, framework, image, trainer, env, collective, results}."""
    counts = defaults.gpu_defaults(gpu_architecture or "unknown", platform or None)
    gpus = variables.get("burnin_gpus_per_node")
    gpus = counts["gpus_per_node"] if gpus is None else gpus
    mlnx = variables.get("burnin_mlnx_per_node")
    mlnx = counts["mlnx_per_node"] if mlnx is None else mlnx
    # burnin_image is a nccl-tests workload's image unless the parameters name one.
    name = variables.get("burnin_workload") or "nccl-all-reduce"
    params = workload_catalog.with_burnin_image(name, variables.get("burnin_workload_params"), variables.get("burnin_image"))
    rendered = workload_catalog.render_workload(
        name,
        dict(params, nodes=variables.get("burnin_nodes", 2), gpus_per_node=gpus, platform=platform or "", gpu_architecture=gpu_architecture or ""),
    )
    custom = variables.get("burnin_trainer") or {}
    return {
        "gpus_per_node": int(gpus),
        "mlnx_per_node": int(mlnx),
        "workload": rendered["workload"],
        "framework": variables.get("burnin_framework") or rendered["framework"],
        "image": rendered["image"],
        # A custom trainer replaces the workload's and is judged by what it prints, not as the workload's collective.
        "trainer": custom or rendered["trainer"],
        "collective": "" if custom else rendered.get("collective") or "",
        # How the verdict reads the logs (workload_catalog.RESULTS); a custom trainer is judged by its outcome.
        "results": "" if custom else rendered.get("results") or "",
        # Which parser judges a node stage's output, pod by pod: plugins/module_utils/judging/verdict.py KINDS (its node judges).
        "parser": (rendered.get("results") or "nccl-tests") if not custom else "nccl-tests",
        "env": nccl_env.merge_env(rendered.get("env") or [], variables.get("burnin_env") or []),
        # What the workload sets on the GPU container itself (dcgm-diag's privileged securityContext): with_container.
        "container": rendered.get("container") or {},
        # The verdict's parameters the workload rendered (gpu-burn's sibling_percent; workload_catalog.JUDGING).
        "judging": {} if custom else dict(rendered.get("judging") or {}),
    }


def plan_options(variables, platform, gpu_architecture, run_id, namespace, cluster=None):
    """The options of gpufleet.burnin.workload_plan for the role's plan, and the workload: (options, workload).
    CLUSTER: what detection read (nodes, kubernetes_version, dra_api_versions); a set variable wins over it."""
    cluster = cluster or {}
    workload = workload_of(variables, platform, gpu_architecture)
    options = dict((option, variables[name]) for name, option in _PASSED if _set(variables.get(name)))
    options.update(
        image=workload["image"],
        framework=workload["framework"],
        trainer=workload["trainer"],
        env=workload["env"],
        gpus_per_node=workload["gpus_per_node"],
        mlnx_per_node=workload["mlnx_per_node"],
        namespace=namespace,
        run_id=run_id,
        platform=platform,
        gpu_architecture=gpu_architecture,
    )
    if cluster.get("nodes"):
        options["cluster_nodes"] = cluster["nodes"]
    server_version = variables.get("burnin_server_version") or cluster.get("kubernetes_version")
    if server_version:
        options["server_version"] = server_version
    rct = variables.get("burnin_rct_api_version") or (list(cluster.get("dra_api_versions") or []) + [None])[0]
    if rct:
        options["rct_api_version"] = rct
    return _with_defaults(options), workload


def annotated(objects, annotations):
    """OBJECTS with ANNOTATIONS added to the TrainJob's (the last object)."""
    if not annotations:
        return objects
    trainjob = copy.deepcopy(objects[-1])
    trainjob.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
    return objects[:-1] + [trainjob]


def object_names(objects):
    """Kind/name of each object, in order."""
    return ["%s/%s" % (obj["kind"], obj["metadata"]["name"]) for obj in objects]


def namespace_object(namespace, run_id=None):
    """The run's Namespace, as the burn-in creates it when missing: labelled as the burn-in's (the cleanup deletes
    only those), with the run id when the namespace is the run's own."""
    labels = {MANAGED_BY_LABEL: MANAGER}
    if run_id:
        labels[RUN_LABEL] = run_id
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}


def staged(objects, trainjob, entry):
    """OBJECTS of a stage's plan with the stage's TRAINJOB name (the last object) and the run's ENTRY label on every
    object, so a cleanup of the entry finds the stage's runtime and TrainJob too."""
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        labels = obj.setdefault("metadata", {}).setdefault("labels", {})
        if ENTRY_LABEL in labels:
            labels[ENTRY_LABEL] = entry
        out.append(obj)
    out[-1]["metadata"]["name"] = trainjob
    return out


# Labels JobSet puts on every pod of a TrainJob's JobSet: a node stage's pods repel each other by the JobSet's name.
# The API server refuses a key both in matchLabelKeys and in the labelSelector, and matchLabelKeys needs a selector:
# the selector names the replicated job's label, which every JobSet pod has.
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"


def nic_resource_names():
    """Every NIC resource name of the platform catalogue (_lib/platforms/*/platform.yaml nic_resources)."""
    return set(nic["name"] for info in platform_catalog.load_platform_catalog().values() for nic in info.get("nic_resources") or [])


def with_container(objects, container):
    """OBJECTS with CONTAINER (the workload's ``container``, workload_catalog.py) merged into the GPU workers'
    container ``node`` of the runtime's replicatedJob ``node`` (torch, exec and mpi alike; not MPI's launcher), after
    the platform and user overrides: maps recursively, named lists by name (merge.merge_named), so a platform's
    ``capabilities`` stay beside the workload's ``privileged``."""
    if not container:
        return objects
    for obj in objects:
        if obj.get("kind") != "TrainingRuntime":
            continue
        for job in obj["spec"]["template"]["spec"]["replicatedJobs"]:
            if job.get("name") != "node":
                continue
            pod_spec = job["template"]["spec"]["template"].get("spec") or {}
            pod_spec["containers"] = [
                merge.merge_named(item, copy.deepcopy(container)) if item.get("name") == "node" else item for item in pod_spec.get("containers") or []
            ]
    return objects


def one_pod_per_node(objects):
    """OBJECTS with every pod of the runtime's replicated jobs required on a node without another pod of the same
    TrainJob (pod anti-affinity by hostname, matchLabelKeys on the JobSet's name: Kubernetes 1.31+): a node stage judges
    each node by its own pod, so two pods may not share a node, even when one node frees its GPUs before another."""
    term = {
        "labelSelector": {"matchExpressions": [{"key": REPLICATED_JOB_LABEL, "operator": "Exists"}]},
        "matchLabelKeys": [JOBSET_NAME_LABEL],
        "topologyKey": "kubernetes.io/hostname",
    }
    for obj in objects:
        if obj.get("kind") != "TrainingRuntime":
            continue
        for job in obj["spec"]["template"]["spec"]["replicatedJobs"]:
            pod_spec = job["template"]["spec"]["template"].setdefault("spec", {})
            anti = pod_spec.setdefault("affinity", {}).setdefault("podAntiAffinity", {})
            anti.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(copy.deepcopy(term))
    return objects


def role_plan(variables, platform, gpu_architecture, run_id, namespace, cluster=None, stage="fleet", attempt=1):
    """The plan of one cluster for the role: {objects (to apply, annotations added), record (the result's fields),
    stage (what the stage's attempt runs: stage, attempt, trainjob, workload, collective, parser, nodes,
    gpus_per_node, instance_type, note), pre_command, mpi_args}. STAGE: a stage of burnin/stages.py that runs a
    TrainJob; a node stage plans its catalogue workload on every GPU node of CLUSTER, and its record changes only the
    result's stage (the cluster's workload fields stay the fleet stage's). Raises ConfigError on input the checks let
    through."""
    if not isinstance(variables, dict):
        raise ConfigError("variables", "must be the role's checked variables (a mapping)")
    if stage not in stages.JOB_STAGES:
        raise ConfigError("stage", "must be a stage that runs a TrainJob, one of %s, got %r" % (", ".join(stages.JOB_STAGES), stage))
    entry = variables.get("burnin_entry_name") or "nccl-burnin"
    stage_vars, note = stages.stage_variables(variables, stage, cluster)
    options, workload = plan_options(stage_vars, platform, gpu_architecture, run_id, namespace, cluster)
    inputs.check_plan_options(options)
    facts = {"platform": options.pop("platform"), "gpuArchitecture": options.pop("gpu_architecture")}
    plan = plan_workload(options, facts)
    trainjob = stages.stage_trainjob("%s-%s" % (entry, run_id), stage, attempt)
    objects = with_container(staged(plan["objects"], trainjob, entry), workload["container"])
    # Every stage: a platform's LD_LIBRARY_PATH or PATH before the image's own, unless its record says replace.
    objects = images.with_image_paths(objects, templating.shared_library().image_records()[0], facts["platform"])
    if runs_on_every_node(stage) or workload["results"] in ("dcgm-diag", "gpu-burn"):
        objects = one_pod_per_node(objects)
    if stage in stages.NODE_STAGE_WORKLOADS:
        # GPUs only: a node with a NIC fault still gets its GPU and DCGM verdicts (rendering/node_local.py).
        objects = node_local.gpus_only(objects, nic_resource_names())
    if variables.get("burnin_sweep_nodes"):
        # A sweep's stages, and the fleet stage its pairs are made of (burnin/isolation_stage.py sweep_pairs()).
        objects = sweep.pinned(objects, variables["burnin_sweep_nodes"], hold=variables.get("burnin_sweep_hold") == "taint")
    objects = annotated(objects, variables.get("burnin_trainjob_annotations") or {})
    # The logs read whole (trainjob_logs whole_logs_of): nccl-tests' table is the launcher's; every pod of a
    # dcgm-diag run prints its own DCGM JSON, longer than a log's tail.
    whole_logs_of = ["launcher", "node"] if workload["results"] in ("dcgm-diag", "gpu-burn") else ["launcher"]
    record = cluster_result.planned_record(stage, trainjob, workload, plan, object_names(objects), whole_logs_of)
    stage_plan = {
        "stage": stage,
        "attempt": int(attempt),
        "trainjob": trainjob,
        "workload": workload["workload"],
        "collective": workload["collective"],
        "parser": workload["parser"],
        "judging": workload["judging"],
        "nodes": int(stage_vars.get("burnin_nodes") or 1),
        "gpus_per_node": workload["gpus_per_node"],
        "instance_type": plan.get("instance_type") or "",
        "objects": object_names(objects),
        # A node stage's pods each print a whole table or DCGM JSON: read them whole, as the fleet stage's launcher.
        "whole_logs_of": ["node"] if runs_on_every_node(stage) else whole_logs_of,
        # Where the stage's pod logs go under the cluster's report directory: the fleet stage's in it, the others' in
        # a directory of their own (a name, joined by gpufleet.burnin.burnin_stage with files.safe_join).
        "log_subdir": stage if runs_on_every_node(stage) else "",
        "note": note,
    }
    return {
        "objects": objects,
        "record": record,
        "stage": stage_plan,
        "pre_command": plan.get("pre_command"),
        "mpi_args": plan.get("mpi_args"),
        "namespace_object": namespace_object(namespace, run_id if variables.get("burnin_namespace_per_run") else None),
    }


def run_start(variables, cluster, run_id, check_mode=False, started=None):
    """Where one cluster's run goes and its first result: {namespace, trainjob, problem (why the names cannot be used,
    or ""), result}. VARIABLES: the role's checked variables; RUN_ID: the run's (given or generated)."""
    namespace = variables.get("burnin_namespace") or "gpufleet-burnin"
    if variables.get("burnin_namespace_per_run"):
        namespace = "%s-%s" % (namespace, run_id)
    entry = variables.get("burnin_entry_name") or "nccl-burnin"
    trainjob = "%s-%s" % (entry, run_id)
    problem = ""
    # Every stage's TrainJob (burnin/stages.py: <entry>-<run id>-<stage>-<attempt>) must be a DNS label too.
    longest = stages.longest_trainjob(trainjob, variables.get("burnin_stages") or list(stages.DEFAULT_STAGES), variables.get("burnin_repeats") or 0)
    for kind, name in (("TrainJob", longest), ("namespace", namespace)):
        try:
            validate.check_grammar(kind, name, "dns_label")
        except ConfigError:
            problem = (
                "TrainJob %s in namespace %s: both must be DNS labels of at most 63 characters; shorten "
                "burnin_entry_name, burnin_run_id or burnin_namespace" % (longest, namespace)
            )
    result = cluster_result.started_record(variables, cluster, run_id, namespace, trainjob, entry, check_mode=check_mode, started=started)
    return {"namespace": namespace, "trainjob": trainjob, "problem": problem, "result": result}
