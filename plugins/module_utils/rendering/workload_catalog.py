# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The burn-in workload catalog: ``templates/workloads/<name>.yaml``, rendered with the ``_lib/`` fragments.

Each template renders to what ``gpufleet.burnin.workload_plan`` takes: ``framework``, ``image``, ``trainer``
(torch: script or module, args; mpi: binary, args, mpi_args, timeout; exec: command, args), optionally ``env`` and,
for nccl-tests workloads, ``collective`` (what the verdict judges). ``results`` says how the verdict reads the
pods' logs (:data:`RESULTS`): ``nccl-tests`` (the default of a workload with a collective), ``dcgm-diag`` (DCGM's
diagnostic JSON of every pod, plugins/module_utils/judging/dcgm.py), ``gpu-burn`` (every pod's per-GPU lines,
plugins/module_utils/judging/gpu.py); none judges the TrainJob's outcome only.
``container``, optional, is merged into the GPU workers' container (``node``) of the runtime after every override
(burnin/role_plan.py with_container), e.g. dcgm-diag's ``securityContext: {privileged: true}``. ``judging``,
optional, holds parameters of the verdict rather than of the pods (JUDGING: name -> the ``results`` it is for), e.g.
gpu-burn's ``sibling_percent``: a workload parameter checked by its template like the others. The
data: nodes, gpus_per_node, platform, gpu_architecture, plus the workload's own parameters (each template documents
them and their defaults; a template refuses a bad one with ``refuse(name, why)``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import images, templating
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError, ParseError

WORKLOADS_SUBDIR = "workloads"
FRAMEWORKS = ("torch", "mpi", "exec")
_RESULT_KEYS = ("framework", "image", "image_kind", "trainer", "collective", "env", "results", "container", "judging")
RESULTS = ("nccl-tests", "dcgm-diag", "gpu-burn")
# The verdict's parameters a workload may render (``judging``), each a number, and the results that read it
# (plugins/module_utils/judging/gpu.py gpu_verdict's sibling_percent).
JUDGING = {"sibling_percent": "gpu-burn"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*\Z")


def available_workloads(library=None):
    """Sorted names of the workload templates."""
    templates_dir = library.templates_dir if library is not None else templating.TEMPLATES_DIR
    directory = os.path.join(templates_dir, WORKLOADS_SUBDIR)
    if not os.path.isdir(directory):
        return []
    return sorted(name[:-5] for name in os.listdir(directory) if name.endswith(".yaml") and _NAME.match(name[:-5]))


# What the caller gives every workload (the role: from the cluster); the rest of the data are the workload's parameters.
DATA_KEYS = ("nodes", "gpus_per_node", "platform", "gpu_architecture")


def workload_parameters(name, library=None):
    """The parameters workload NAME has: the names its template and the fragments it includes read from their data
    (templating.TemplateLibrary.variables_read), but DATA_KEYS and names starting with ``_`` (a template's own)."""
    library = library or templating.shared_library()
    names = library.variables_read("templates/%s/%s.yaml" % (WORKLOADS_SUBDIR, name))
    return sorted(item for item in names if item not in DATA_KEYS and not item.startswith("_"))


def check_parameters(name, params, field=None, library=None):
    """Refuse a key of PARAMS that workload NAME does not have, naming it (``<field>.<key>``, or the key) and the
    workload's parameters: a misspelt one would otherwise be ignored and its default used."""
    allowed = workload_parameters(name, library)
    for key in sorted(params or {}, key=str):
        if key not in allowed:
            raise ConfigError(
                "%s.%s" % (field, key) if field else str(key),
                "is not a parameter of workload %s; its parameters: %s (templates/%s/%s.yaml)" % (name, ", ".join(allowed), WORKLOADS_SUBDIR, name),
            )
    return params


_COLLECTIVES = {}
# Data any workload renders with: what catalogue_collectives reads is a workload's constant, not the cluster's.
_PROBE = {"nodes": 2, "gpus_per_node": 8, "platform": "", "gpu_architecture": "h100"}


def catalogue_collectives(library=None):
    """The nccl-tests collectives the catalogue's workloads run (their ``collective``), sorted: what a threshold
    record may name, since the verdict judges only those (a custom trainer is judged by its outcome)."""
    library = library or templating.shared_library()
    if library.templates_dir not in _COLLECTIVES:
        found = set()
        for name in available_workloads(library):
            try:
                rendered = library.render_yaml("%s/%s.yaml" % (WORKLOADS_SUBDIR, name), dict(_PROBE))
            except BurninError:
                continue  # a broken template is reported by the render that uses it
            if isinstance(rendered, dict) and isinstance(rendered.get("collective"), str) and rendered["collective"]:
                found.add(rendered["collective"])
        _COLLECTIVES[library.templates_dir] = sorted(found)
    return list(_COLLECTIVES[library.templates_dir])


_KINDS = {}


def image_kind(name, library=None):
    """The kind of image (rendering/images.py KINDS) workload NAME declares (``image_kind``), or None for a workload
    that does not render with probe data."""
    library = library or templating.shared_library()
    key = (library.templates_dir, name)
    if key not in _KINDS:
        try:
            rendered = library.render_yaml("%s/%s.yaml" % (WORKLOADS_SUBDIR, name), dict(_PROBE))
        except BurninError:
            rendered = {}
        _KINDS[key] = rendered.get("image_kind") if isinstance(rendered, dict) else None
    return _KINDS[key]


def with_burnin_image(name, params, burnin_image, library=None):
    """PARAMS of workload NAME with BURNIN_IMAGE as its image when the workload runs nccl-tests images and PARAMS name
    none: burnin_image is the nccl-tests image (the example inventory's Grace image), never the PyTorch or DCGM image
    of the gpu and dcgm stages, which keep theirs."""
    params = dict(params or {})
    if burnin_image and "image" not in params and image_kind(name, library) == "nccl-tests":
        params["image"] = burnin_image
    return params


def _check_data(data):
    if not isinstance(data, dict):
        raise ConfigError("data", "must be a mapping with nodes, gpus_per_node, platform and gpu_architecture, got %r" % (data,))
    for key in ("nodes", "gpus_per_node"):
        value = data.get(key)
        low = 1 if key == "nodes" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError("data.%s" % key, "must be an integer >= %d, got %r" % (low, value))
    for key in ("platform", "gpu_architecture"):
        if not isinstance(data.get(key), str):
            raise ConfigError("data.%s" % key, "must be a string such as aws or h100 (empty when unknown), got %r" % (data.get(key),))


def _check_result(name, rendered, data):
    where = "workload %s" % name
    if not isinstance(rendered, dict):
        raise ParseError("%s: templates/workloads/%s.yaml must render a mapping, got %r" % (where, name, type(rendered).__name__))
    unknown = sorted(set(rendered) - set(_RESULT_KEYS))
    if unknown:
        raise ParseError("%s: unknown key(s) %s; allowed: %s" % (where, ", ".join(unknown), ", ".join(_RESULT_KEYS)))
    if rendered.get("framework") not in FRAMEWORKS:
        raise ParseError("%s: framework must be one of %s, got %r" % (where, ", ".join(FRAMEWORKS), rendered.get("framework")))
    image = rendered.get("image")
    if not isinstance(image, str) or not image:
        raise ConfigError(
            "data.image",
            "%s has no default image for gpu_architecture %r (Grace nodes are arm64 and no image record, in _lib/images.yaml or the "
            "platform's images.yaml, is a public arm64 nccl-tests image built with MPI for platform %r): set burnin_image (or image in "
            "burnin_workload_params) to yours" % (where, data.get("gpu_architecture"), data.get("platform")),
        )
    if not isinstance(rendered.get("trainer"), dict) or not rendered["trainer"]:
        raise ParseError("%s: trainer must be a non-empty mapping" % where)
    if rendered.get("image_kind") not in images.KINDS:
        raise ParseError("%s: image_kind must be one of %s, got %r" % (where, ", ".join(images.KINDS), rendered.get("image_kind")))
    if "collective" in rendered and (not isinstance(rendered["collective"], str) or not rendered["collective"]):
        raise ParseError("%s: collective must be a non-empty string such as all_reduce" % where)
    if rendered.get("results") is not None and rendered["results"] not in RESULTS:
        raise ParseError("%s: results must be one of %s (or absent), got %r" % (where, ", ".join(RESULTS), rendered["results"]))
    container = rendered.get("container")
    if container is not None and (not isinstance(container, dict) or "name" in container):
        raise ParseError("%s: container must be a mapping of container fields (without name) merged into the GPU container" % where)
    judging = rendered.get("judging")
    if judging is not None:
        if not isinstance(judging, dict):
            raise ParseError("%s: judging must be a mapping of the verdict's parameters" % where)
        for key, value in judging.items():
            if JUDGING.get(key) != rendered.get("results"):
                raise ParseError(
                    "%s: judging.%s is not a parameter of the %s verdict; known: %s" % (where, key, rendered.get("results"), ", ".join(sorted(JUDGING)))
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParseError("%s: judging.%s must be a number, got %r" % (where, key, value))
    env = rendered.get("env")
    if env is not None and (not isinstance(env, list) or not all(isinstance(item, dict) and item.get("name") for item in env)):
        raise ParseError("%s: env must be a list of {name, value} mappings" % where)


def render_workload(name, data, library=None):
    """Render workload ``name`` with ``data`` and return the checked dict (plus ``workload``: the name)."""
    library = library or templating.shared_library()
    names = available_workloads(library)
    if not isinstance(name, str) or name not in names:
        raise ConfigError("workload", "unknown workload %r; available: %s" % (name, ", ".join(names) or "none"))
    _check_data(data)
    check_parameters(name, dict((key, value) for key, value in data.items() if key not in DATA_KEYS), library=library)
    rendered = library.render_yaml("%s/%s.yaml" % (WORKLOADS_SUBDIR, name), dict(data))
    _check_result(name, rendered, data)
    if os.path.isfile(os.path.join(library.lib_dir, "images.yaml")):
        records, files = library.image_records()
        images.check_kind(records, rendered["image"], rendered["image_kind"], name, "data.image", files)
    rendered["workload"] = name
    if rendered.get("results") is None:
        rendered["results"] = "nccl-tests" if rendered.get("collective") else None
    return rendered
