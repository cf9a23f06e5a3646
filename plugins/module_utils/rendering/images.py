# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The image records: which image a workload runs by default, of which kind, and the one rule for the library and
program paths a platform sets on it. The records are ``_lib/images.yaml`` (the images of every platform) and each
platform's own, ``_lib/platforms/<platform>/images.yaml`` (:func:`merge_records`).

Every workload declares the kind of image it needs (``image_kind``: nccl-tests, pytorch, dcgm). Its default is the
record of that kind the platform names in ``default_for`` (for the node's CPU and GPU), else the kind's record for
every platform (``default_for: ["*"]``). A platform that sets ``LD_LIBRARY_PATH`` or ``PATH`` on a container (or
forwards one with ``mpirun -x NAME=value``) prepends it to the image's own, unless the image's record says the
platform's recipe replaces it (``platforms.<platform>.ld_library_path: replace``): :func:`with_image_paths`, applied
to every stage's objects.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError

KINDS = ("nccl-tests", "pytorch", "dcgm")
PATH_VARIABLES = ("LD_LIBRARY_PATH", "PATH")
ANY_PLATFORM = "*"


def merge_records(sources):
    """``({key: record}, {key: file})`` from SOURCES, ``[(file, platform, data)]`` in order: ``platform`` None for the
    shared file, else the platform whose folder holds the file, whose records may name no other platform (in
    ``default_for`` or ``platforms``). A key is one record in all the files."""
    records, files = {}, {}
    for label, platform, data in sources:
        if not isinstance(data or {}, dict):
            raise ParseError("%s: must be a mapping of image records, got %s" % (label, type(data).__name__))
        for key, record in (data or {}).items():
            if key in records:
                raise ParseError("%s: image record %s is already in %s; keys are one record in all the image files" % (label, key, files[key]))
            if not isinstance(record, dict):
                raise ParseError("%s: image record %s must be a mapping" % (label, key))
            named = set(record.get("default_for") or []) | set(record.get("platforms") or {})
            if platform is not None and named - {platform}:
                raise ParseError(
                    "%s: image record %s names %s in default_for or platforms: a platform's folder holds its own images only, "
                    "the images of every platform are _lib/images.yaml's" % (label, key, ", ".join(sorted(named - {platform})))
                )
            records[key], files[key] = record, label
    return records, files


def cpu_of(gpu_architecture):
    """The CPU architecture of a GPU's nodes: Grace (gb200, gb300) is arm64, the rest x86_64."""
    return "arm64" if gpu_architecture in ("gb200", "gb300") else "amd64"


def default_record(records, kind, platform, gpu_architecture):
    """(key, record) of the image of KIND that PLATFORM runs by default on GPU_ARCHITECTURE's nodes, or (None, None):
    the platform's own where one is recorded for the node's CPU and GPU, else the kind's any-platform record."""
    cpu = cpu_of(gpu_architecture)
    own, anywhere = [], []
    for key, record in (records or {}).items():
        if record.get("kind") != kind or cpu not in record.get("arches", []):
            continue
        if gpu_architecture not in record.get("default_gpus", [gpu_architecture]):
            continue
        if platform in record.get("default_for", []):
            own.append((key, record))
        elif ANY_PLATFORM in record.get("default_for", []):
            anywhere.append((key, record))
    return (own + anywhere + [(None, None)])[0]


def record_of(records, image):
    """(key, record) of the record whose image is IMAGE, or (None, None) for an image no record names."""
    for key, record in (records or {}).items():
        if record.get("image") == image:
            return key, record
    return None, None


def check_kind(records, image, kind, workload, field="image", files=None):
    """Refuse IMAGE for WORKLOAD when the image records (FILES: the file of each, merge_records) record it as an image
    of another kind than KIND."""
    key, record = record_of(records, image)
    if record is not None and record.get("kind") != kind:
        raise ConfigError(
            field,
            "workload %s needs a %s image, but %s is %s's %s, a %s image: set the workload's image "
            "(burnin_stage_params or burnin_workload_params) to a %s image, or leave it unset for the default"
            % (workload, kind, image, (files or {}).get(key, "_lib/images.yaml"), key, record.get("kind"), kind),
        )


def path_value(record, platform, name, value):
    """What a platform's VALUE of NAME (LD_LIBRARY_PATH or PATH) becomes on RECORD's image: VALUE where the record says
    the platform's recipe replaces the image's path (or the image's own is unrecorded), else VALUE before the image's."""
    if record is None or name not in PATH_VARIABLES:
        return value
    needs = (record.get("platforms") or {}).get(platform) or {}
    if needs.get("ld_library_path") == "replace":
        return value
    own = (record.get("env") or {}).get(name)
    if not own or value == own or value.endswith(":" + own):
        return value
    return "%s:%s" % (value, own) if value else own


def _env_items(env, record, platform):
    for item in env or []:
        if item.get("name") in PATH_VARIABLES and isinstance(item.get("value"), str):
            item["value"] = path_value(record, platform, item["name"], item["value"])


def _forwarded(words, record, platform):
    out = list(words)
    for index in range(1, len(out)):
        word = out[index]
        if out[index - 1] == "-x" and isinstance(word, str) and "=" in word:
            name, value = word.split("=", 1)
            if name in PATH_VARIABLES:
                out[index] = "%s=%s" % (name, path_value(record, platform, name, value))
    return out


def with_image_paths(objects, records, platform):
    """OBJECTS with the one path rule (path_value) applied to every container of the runtime's replicated jobs (by
    each container's image) and to the TrainJob's ``mpirun -x NAME=value`` words (by the TrainJob's image): the
    container and the MPI ranks then agree."""
    out = copy.deepcopy(objects)
    for obj in out:
        spec = obj.get("spec") or {}
        if obj.get("kind") == "TrainingRuntime":
            for job in spec["template"]["spec"].get("replicatedJobs") or []:
                pod_spec = job["template"]["spec"]["template"].get("spec") or {}
                for container in (pod_spec.get("containers") or []) + (pod_spec.get("initContainers") or []):
                    _env_items(container.get("env"), record_of(records, container.get("image"))[1], platform)
        elif obj.get("kind") == "TrainJob":
            trainer = spec.get("trainer") or {}
            record = record_of(records, trainer.get("image"))[1]
            for key in ("command", "args"):
                if isinstance(trainer.get(key), list):
                    trainer[key] = _forwarded(trainer[key], record, platform)
            _env_items(trainer.get("env"), record, platform)
    return out
