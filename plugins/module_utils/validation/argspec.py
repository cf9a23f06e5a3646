# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Argument specs shared by the action plugins and their documentation stubs (kept in sync by validate-modules)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import API_VERSION as TRAINER_API
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import JOB_STAGES, STAGES

FRAMEWORK_CHOICES = ["torch", "mpi", "exec"]
RCT_API_VERSION_CHOICES = ["v1", "v1beta2", "v1beta1"]

_OVERRIDE_DATA = dict(
    entry_name=dict(type="str", required=True),
    nodes=dict(type="int", default=1),
    gpus_per_node=dict(type="int", required=True),
    mlnx_per_node=dict(type="int", default=0),
    enable_mnnvl=dict(type="bool", default=False),
    framework=dict(type="str", default="torch", choices=FRAMEWORK_CHOICES),
    # The platform layer (templates/overrides/platforms/).
    extended_platforms=dict(type="bool", default=True),
    server_version=dict(type="str"),
    rct_api_version=dict(type="str", choices=RCT_API_VERSION_CHOICES),
    dra_driver_version=dict(type="str"),
    efa_per_node=dict(type="int"),
    rdma_resource=dict(type="str"),
    rdma_per_node=dict(type="int"),
    platform_vars=dict(type="dict", default={}),
)

_RUNTIME_DATA = dict(
    entry_name=dict(type="str", required=True),
    image=dict(type="str", required=True),
    framework=dict(type="str", default="torch", choices=FRAMEWORK_CHOICES),
    nodes=dict(type="int", default=1),
    gpus_per_node=dict(type="int", required=True),
    env=dict(type="list", elements="dict", default=[]),
    volumes=dict(type="list", elements="dict", default=[]),
    volume_mounts=dict(type="list", elements="dict", default=[]),
    init_containers=dict(type="list", elements="dict", default=[]),
    resources=dict(type="dict"),
    # Names of pull Secrets, not secrets themselves.
    image_pull_secrets=dict(type="list", elements="dict", default=[], no_log=False),
    trainer_version=dict(type="str", default="v2.3"),
    allow_secret_env=dict(type="bool", default=False),
)


def platform_overrides_spec():
    spec = copy.deepcopy(_OVERRIDE_DATA)
    spec.update(platform=dict(type="str"))
    return spec


def training_runtime_spec():
    return copy.deepcopy(_RUNTIME_DATA)


def workload_plan_spec():
    spec = training_runtime_spec()
    spec.update(copy.deepcopy(_OVERRIDE_DATA))
    spec.update(
        namespace=dict(type="str", required=True),
        run_id=dict(type="str", required=True),
        platform=dict(type="str", required=True),
        gpu_architecture=dict(type="str", required=True),
        trainer=dict(type="dict", required=True),
        overrides=dict(type="list", elements="dict", default=[]),
        instance_type=dict(type="str"),
        cluster_nodes=dict(type="list", elements="dict"),
    )
    return spec


def burnin_plan_spec():
    """gpufleet.burnin.burnin_plan: the role's plan step."""
    return dict(
        variables=dict(type="dict", required=True),
        platform=dict(type="str", required=True),
        gpu_architecture=dict(type="str", required=True),
        run_id=dict(type="str", required=True),
        namespace=dict(type="str", required=True),
        cluster=dict(type="dict", default={}),
        stage=dict(type="str", default="fleet", choices=list(JOB_STAGES)),
        attempt=dict(type="int", default=1),
    )


def burnin_start_spec():
    """gpufleet.burnin.burnin_start: the role's first step."""
    return dict(
        variables=dict(type="dict"),
        run_id=dict(type="str", default=""),
        host=dict(type="str", required=True),
    )


def burnin_write_spec():
    """gpufleet.burnin.burnin_write: files written on the controller through module_utils/files.py."""
    return dict(
        directory=dict(type="path", required=True),
        files=dict(type="list", elements="dict", required=True, options=dict(name=dict(type="str", required=True), content=dict(type="str", default=""))),
    )


# gpufleet.burnin.k8s_apply's own options; the others are kubernetes.core's authentication options.
K8S_APPLY_OWN = dict(
    objects=dict(type="list", elements="dict", required=True),
    field_manager=dict(type="str", default="gpufleet.burnin"),
    force_conflicts=dict(type="bool", default=False),
)


def with_k8s_auth(own):
    """OWN options plus kubernetes.core's authentication options: the spec of a plugin that talks to a cluster."""
    # kubernetes.core is a dependency of the collection; import it here so the rest of the core never needs it.
    from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

    spec = copy.deepcopy(AUTH_ARG_SPEC)
    spec.update(copy.deepcopy(own))
    return spec


def k8s_apply_spec():
    """gpufleet.burnin.k8s_apply."""
    return with_k8s_auth(K8S_APPLY_OWN)


# gpufleet.burnin.trainjob_wait's own options; the others are kubernetes.core's authentication options.
TRAINJOB_WAIT_OWN = dict(
    name=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    api_version=dict(type="str", default=TRAINER_API),
    timeout=dict(type="int", default=3600),
    poll_interval=dict(type="int", default=10),
    unreachable_grace=dict(type="int", default=30),
    record_pods=dict(type="bool", default=True),
)


def trainjob_wait_spec():
    """gpufleet.burnin.trainjob_wait."""
    return with_k8s_auth(TRAINJOB_WAIT_OWN)


# gpufleet.burnin.trainjob_logs's own options; the others are kubernetes.core's authentication options.
TRAINJOB_LOGS_OWN = dict(
    name=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    tail_lines=dict(type="int", default=200),
    whole_logs_of=dict(type="list", elements="str", default=["launcher"]),
    seen_pods=dict(type="list", elements="dict", default=[]),
    early_logs=dict(type="dict", default={}),
    early_cuts=dict(type="dict", default={}),
    max_bytes=dict(type="int", default=16777216),
    unreachable_grace=dict(type="int", default=30),
    log_dir=dict(type="path", default=""),
)


def trainjob_logs_spec():
    """gpufleet.burnin.trainjob_logs."""
    return with_k8s_auth(TRAINJOB_LOGS_OWN)


# gpufleet.burnin.burnin_cleanup's own options; the others are kubernetes.core's authentication options.
BURNIN_CLEANUP_OWN = dict(
    entry=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    run_id=dict(type="str", default=""),
    all_runs=dict(type="bool", default=False),
    namespace_per_run=dict(type="bool", default=False),
    shared=dict(type="bool", default=True),
    drop_namespace=dict(type="bool", default=True),
    wait=dict(type="bool", default=True),
    wait_timeout=dict(type="int", default=180),
    extra_kinds=dict(type="list", elements="dict", default=[]),
    unreachable_grace=dict(type="int", default=30),
)


def burnin_cleanup_spec():
    """gpufleet.burnin.burnin_cleanup."""
    return with_k8s_auth(BURNIN_CLEANUP_OWN)


# gpufleet.burnin.burnin_remediate's own options; the others are kubernetes.core's authentication options.
BURNIN_REMEDIATE_OWN = dict(
    mode=dict(type="str", default="apply", choices=["apply", "undo", "expire"]),
    run_id=dict(type="str", default=""),
    all_runs=dict(type="bool", default=False),
    node_verdicts=dict(type="dict", default={}),
    cluster_result=dict(type="dict", default={}),
    node_marks=dict(type="bool", default=False),
    mark_ttl_hours=dict(type="int", default=24),
    mark_condition=dict(type="bool", default=False),
    now=dict(type="int", default=0),
    label_verified=dict(type="bool", default=False),
    verified_label=dict(type="str", default="gpufleet.burnin/verified"),
    quarantine=dict(type="str", default="none", choices=["none", "taint", "cordon"]),
    quarantine_taint=dict(type="dict", default={}),
    record_namespace=dict(type="str", default="gpufleet-burnin"),
    unreachable_grace=dict(type="int", default=30),
)


def burnin_remediate_spec():
    """gpufleet.burnin.burnin_remediate."""
    return with_k8s_auth(BURNIN_REMEDIATE_OWN)


# gpufleet.burnin.cluster_detect's own options; the others are kubernetes.core's authentication options.
CLUSTER_DETECT_OWN = dict(
    platform=dict(type="str", default=""),
    gpu_architecture=dict(type="str", default=""),
    check_nodes=dict(type="bool", default=True),
    namespace=dict(type="str", default=""),
)


def cluster_detect_spec():
    """gpufleet.burnin.cluster_detect."""
    return with_k8s_auth(CLUSTER_DETECT_OWN)


# gpufleet.burnin.burnin_isolate's own options; the others are kubernetes.core's authentication options.
BURNIN_ISOLATE_OWN = dict(
    result=dict(type="dict", required=True),
    objects=dict(type="list", elements="dict", required=True),
    nodes=dict(type="list", elements="str"),
    known_good=dict(type="list", elements="str"),
    max_jobs=dict(type="int", default=8),
    max_minutes=dict(type="int", default=30),
    overrides=dict(type="list", elements="dict", default=[]),
    on_missing=dict(type="str", default="warn", choices=["pass", "warn", "fail"]),
    mnnvl=dict(type="bool", default=False),
    field_manager=dict(type="str", default="gpufleet.burnin"),
    force_conflicts=dict(type="bool", default=False),
    timeout=dict(type="int", default=3600),
    poll_interval=dict(type="int", default=10),
    unreachable_grace=dict(type="int", default=30),
    tail_lines=dict(type="int", default=200),
)


def burnin_isolate_spec():
    """gpufleet.burnin.burnin_isolate."""
    return with_k8s_auth(BURNIN_ISOLATE_OWN)


BURNIN_STAGE_OWN = dict(
    stage=dict(type="str", required=True, choices=list(STAGES)),
    result=dict(type="dict", required=True),
    variables=dict(type="dict", required=True),
    run_id=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    cluster=dict(type="dict", default={}),
    host=dict(type="str", default=""),
)


def burnin_stage_spec():
    """gpufleet.burnin.burnin_stage."""
    return with_k8s_auth(BURNIN_STAGE_OWN)


BURNIN_BATCH_OWN = dict(
    hosts=dict(type="list", elements="str", required=True),
)


def burnin_batch_spec():
    """gpufleet.burnin.burnin_batch."""
    return with_k8s_auth(BURNIN_BATCH_OWN)


def refuse_on_host(spec, name, what="runs in the controller's process"):
    """The main() of a module that is only its action plugin's documentation: validate the options with SPEC, then
    fail, since NAME cannot run as a module on a host."""
    from ansible.module_utils.basic import AnsibleModule

    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    module.fail_json(msg="%s %s through its action plugin; it cannot run as a module on a host" % (name, what))
