# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""TrainingRuntime builders: the original BuildTorchRuntime / BuildMPIRuntime / BuildExecRuntime.

Input is a plain dict (the ``gpufleet.burnin.training_runtime`` options); output is the TrainingRuntime
object as a dict. Deliberate deviations from the original are marked ``DEVIATION`` and listed in the README.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import trainer_rules
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.names import check_entry_name, check_framework

API_VERSION = "trainer.kubeflow.org/v1alpha1"
TRAINER_VERSION_DEFAULT = "v2.3"
# The Trainer v2 releases whose trainer.kubeflow.org/v1alpha1 API these builders know (patch releases included): the
# releases of _lib/trainer-versions.yaml, whose rules the render follows (a unit test keeps the two equal).
TRAINER_RELEASES = ("v2.0", "v2.1", "v2.2", "v2.3", "v2.4")
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
GPU_RESOURCE = "nvidia.com/gpu"
MPI_SSH_RAW = "/tmp/mpi-ssh-raw"

_TRAINER_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?\Z")

_WORKER_SCRIPT = " && ".join(
    [
        "set -x",
        # DEVIATION (original bug 6): install sshd only when the image lacks it, no apt on every start.
        "(test -x /usr/sbin/sshd || (apt-get update && apt-get install -y --no-install-recommends openssh-server))",
        "mkdir -p /var/run/sshd",
        "chmod 0755 /var/run/sshd",
        "mkdir -p /root/.ssh",
        "chmod 700 /root/.ssh",
        "cp %s/* /root/.ssh/" % MPI_SSH_RAW,
        "chmod 600 /root/.ssh/id_rsa",
        "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys",
        "/usr/sbin/sshd -De",
    ]
)
_FIX_SSH_SCRIPT = "set -x && cp %s/* /root/.ssh/ && chmod 600 /root/.ssh/id_rsa && " "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys" % MPI_SSH_RAW


def parse_trainer_version(value):
    """Return ``(major, minor)`` of a Trainer version such as ``v2.3`` or ``2.2.1``."""
    match = _TRAINER_VERSION.match(str(value or ""))
    if not match:
        raise ConfigError("trainer_version", "must look like v2.3 or v2.2.1, got %r" % (value,))
    return int(match.group(1)), int(match.group(2))


def _int_field(config, field, minimum, default=None):
    value = config.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(field, "must be an integer >= %d, got %r" % (minimum, value))
    if value < minimum:
        raise ConfigError(field, "must be an integer >= %d, got %d" % (minimum, value))
    return value


def _list_field(config, field):
    value = config.get(field)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise ConfigError(field, "must be a list of mappings, got %r" % (value,))
    return copy.deepcopy(value)


def normalize_runtime_config(config):
    """Validate a runtime config dict and return a normalised copy. Errors name the field and allowed values."""
    if not isinstance(config, dict):
        raise ConfigError("config", "must be a mapping")
    entry_name = check_entry_name(config.get("entry_name"))
    image = config.get("image")
    if not isinstance(image, str) or not image.strip():
        raise ConfigError("image", "must be a non-empty container image reference")
    framework = check_framework(config.get("framework", "torch"))
    resources = config.get("resources")
    if resources is not None and not isinstance(resources, dict):
        raise ConfigError("resources", "must be a mapping with limits/requests/claims, got %r" % (resources,))
    trainer_version = config.get("trainer_version") or TRAINER_VERSION_DEFAULT
    parse_trainer_version(trainer_version)
    env = _list_field(config, "env")
    # Variables the release's Trainer plugin sets itself (PET_* for torchrun, OMPI_MCA_*/PRTE_MCA_* for mpirun).
    trainer_rules.check_env(env, framework, trainer_version)
    return {
        "entry_name": entry_name,
        "image": image,
        "framework": framework,
        "nodes": _int_field(config, "nodes", 1, 1),
        "gpus_per_node": _int_field(config, "gpus_per_node", 0, 0),
        "env": env,
        "volumes": _list_field(config, "volumes"),
        "volume_mounts": _list_field(config, "volume_mounts"),
        "init_containers": _list_field(config, "init_containers"),
        "resources": copy.deepcopy(resources),
        "image_pull_secrets": _list_field(config, "image_pull_secrets"),
        "trainer_version": trainer_version,
    }


def worker_resources(resources, gpus_per_node):
    """Resources of the GPU container.

    DEVIATION (original bug 1): no 800Gi memory default, the GPUs only. User resources are used as given,
    plus the GPU request unless the user named ``nvidia.com/gpu`` (the original's later ``withGPURequest``).
    """
    gpu = {GPU_RESOURCE: str(gpus_per_node)} if gpus_per_node > 0 else {}
    if resources is None:
        return {"limits": dict(gpu), "requests": dict(gpu)} if gpu else {}
    # A side or claims given as null is unset (the CRD refuses null there).
    result = dict((key, copy.deepcopy(value)) for key, value in resources.items() if value is not None)
    named = any(GPU_RESOURCE in (result.get(side) or {}) for side in ("limits", "requests"))
    if gpu and not named:
        for side in ("limits", "requests"):
            if side == "limits" or side in result:
                result[side] = dict(result.get(side) or {}, **gpu)
    return result


def _metadata(cfg, framework_label):
    return {
        "name": "%s-runtime" % cfg["entry_name"],
        "labels": {FRAMEWORK_LABEL: framework_label, "app": cfg["entry_name"]},
    }


def build_torch_runtime(config):
    """Torch mlPolicy and a single ``node`` replicatedJob carrying the trainer ancestor label."""
    cfg = normalize_runtime_config(config)
    container = {
        "name": "node",
        "image": cfg["image"],
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}] + cfg["volume_mounts"],
    }
    # The original writes env: null when empty; an absent key is the same object after the API round trip.
    if cfg["env"]:
        container["env"] = cfg["env"]
    resources = worker_resources(cfg["resources"], cfg["gpus_per_node"])
    if resources:
        container["resources"] = resources
    pod_spec = {
        "terminationGracePeriodSeconds": 30,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}] + cfg["volumes"],
    }
    if cfg["init_containers"]:
        pod_spec["initContainers"] = cfg["init_containers"]
    torch_policy = {}
    # DEVIATION (original bug 4): Trainer v2.2 removed mlPolicy.torch.numProcPerNode (kubeflow/trainer#3239).
    if parse_trainer_version(cfg["trainer_version"]) < (2, 2):
        torch_policy["numProcPerNode"] = cfg["gpus_per_node"]
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": _metadata(cfg, "torch"),
        "spec": {
            "mlPolicy": {"numNodes": cfg["nodes"], "torch": torch_policy},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {ANCESTOR_LABEL: "trainer", "app": cfg["entry_name"]}},
                                "spec": {"template": {"spec": pod_spec}},
                            },
                        }
                    ]
                }
            },
        },
    }


def build_exec_runtime(config):
    """The original's exec runtime is exactly the torch runtime (torch mlPolicy, ``node`` job)."""
    return build_torch_runtime(config)


def build_mpi_runtime(config):
    """MPI mlPolicy with ``node`` workers (sshd) then a ``launcher`` that runs mpirun once workers are Ready."""
    cfg = normalize_runtime_config(config)
    ssh_raw_mount = {"name": "mpi-ssh-auth", "mountPath": MPI_SSH_RAW, "readOnly": True}
    worker = {
        "name": "node",
        "image": cfg["image"],
        "command": ["sh", "-c"],
        "args": [_WORKER_SCRIPT],
        "readinessProbe": {"initialDelaySeconds": 5, "tcpSocket": {"port": 22}},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "volumeMounts": [ssh_raw_mount, {"name": "dshm", "mountPath": "/dev/shm"}] + cfg["volume_mounts"],
    }
    resources = worker_resources(cfg["resources"], cfg["gpus_per_node"])
    if resources:
        worker["resources"] = resources
    launcher = {
        "name": "node",
        "image": cfg["image"],
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
        "volumeMounts": [dict(ssh_raw_mount), {"name": "ssh-keys", "mountPath": "/root/.ssh"}] + copy.deepcopy(cfg["volume_mounts"]),
    }
    # DEVIATION (original bug 2, "issue #68"): the env reaches both MPI containers, and user volumes,
    # mounts and init containers are kept (the original dropped them).
    if cfg["env"]:
        worker["env"] = cfg["env"]
        launcher["env"] = copy.deepcopy(cfg["env"])
    worker_pod = {
        "restartPolicy": "OnFailure",
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}] + cfg["volumes"],
        "containers": [worker],
    }
    if cfg["init_containers"]:
        worker_pod["initContainers"] = cfg["init_containers"]
    launcher_pod = {
        "restartPolicy": "OnFailure",
        "volumes": [{"name": "ssh-keys", "emptyDir": {}}] + copy.deepcopy(cfg["volumes"]),
        "initContainers": [
            {
                "name": "fix-ssh-permissions",
                "image": cfg["image"],
                "command": ["sh", "-c"],
                "args": [_FIX_SSH_SCRIPT],
                "volumeMounts": [dict(ssh_raw_mount), {"name": "ssh-keys", "mountPath": "/root/.ssh"}],
            }
        ],
        "containers": [launcher],
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "TrainingRuntime",
        "metadata": _metadata(cfg, "mpi"),
        "spec": {
            "mlPolicy": {
                # The TrainJob's trainer.numNodes sets the real count, as in the original.
                "numNodes": 1,
                "mpi": {"mpiImplementation": "OpenMPI", "numProcPerNode": cfg["gpus_per_node"], "sshAuthMountPath": MPI_SSH_RAW},
            },
            "template": {
                "spec": {
                    "network": {"publishNotReadyAddresses": True},
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
                    "replicatedJobs": [
                        {"name": "node", "template": {"spec": {"template": {"spec": worker_pod}}}},
                        {
                            "name": "launcher",
                            "dependsOn": [{"name": "node", "status": "Ready"}],
                            "template": {
                                "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                                "spec": {"template": {"spec": launcher_pod}},
                            },
                        },
                    ],
                }
            },
        },
    }


_BUILDERS = {"torch": build_torch_runtime, "mpi": build_mpi_runtime, "exec": build_exec_runtime}


def build_runtime(framework, config):
    """Dispatch on ``framework`` (torch, mpi or exec)."""
    check_framework(framework)
    return _BUILDERS[framework](dict(config, framework=framework))
