# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The options of training_runtime, platform_overrides, workload_plan and k8s_apply, checked as a whole before any
rendering or API call (the grammars are in validate.py). The role's variables map onto these (role_vars.py).

Allowed sets come from the data, each from one place: platforms from the platform catalogues (``_lib/platforms``),
``_lib/gpu-defaults.yaml`` and the seed's ``when`` conditions; GPU architectures from ``_lib/gpu-defaults.yaml``;
instance types from the catalogue's shapes; frameworks from names.py; Trainer versions from runtime.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import defaults

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import dra

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import merge

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import overrides

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import platform_catalog

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import runtime

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate
from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.detect import UNKNOWN
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.names import FRAMEWORKS, check_entry_name
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import shared_library
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.plan import TRAINER_KEYS

_CACHE = {}


def _seed_platforms(library):
    """Platforms named by the seed's ``when`` conditions (togetherai, mistral, ... beside the catalogued ones)."""
    data = overrides.normalize_override_config(
        {"entry_name": "probe", "gpus_per_node": 8, "extended_platforms": False}, platform_catalog.load_platform_catalog(library.lib_dir)
    )
    names = set()
    for framework in FRAMEWORKS:
        for item, dummy in overrides.render_overrides(dict(data, framework=framework), library, platforms=[]):
            spec = item["when"].get("platform") or {}
            names.update(name for name in [spec.get("equals")] + list(spec.get("in") or []) if name)
    return names


def known_platforms(library=None):
    """Every platform the collection knows, sorted, plus ``unknown`` (what detection gives for other clusters)."""
    library = library or shared_library()
    key = ("platforms", library.lib_dir)
    if key not in _CACHE:
        names = set(platform_catalog.load_platform_catalog(library.lib_dir))
        names.update((defaults.load_gpu_defaults().get("platforms") or {}).keys())
        names.update(_seed_platforms(library))
        _CACHE[key] = sorted(names) + [UNKNOWN]
    return _CACHE[key]


def known_architectures():
    return sorted(defaults.load_gpu_defaults()["architectures"]) + [UNKNOWN]


def check_platform(field, value, allow_empty=False, library=None):
    return validate.check_choice(field, value, known_platforms(library), allow_empty=allow_empty)


def check_architecture(field, value, allow_empty=False):
    return validate.check_choice(field, value, known_architectures(), allow_empty=allow_empty)


def check_instance_type(field, value, platform=None, library=None):
    """A label value; on a platform whose catalogue lists shapes, one of them."""
    if value in (None, ""):
        return value
    validate.check_grammar(field, value, "label_value")
    library = library or shared_library()
    shapes = (platform_catalog.load_platform_catalog(library.lib_dir).get(platform) or {}).get("shapes") or {}
    if shapes and value not in shapes:
        validate.fail(
            field, "must be one of the %s instance types %s (or empty: from the nodes, else the default)" % (platform, ", ".join(sorted(shapes))), value
        )
    return value


def check_trainer_version(field, value):
    """A string naming a Trainer release: ``trainer_version: 2.10`` from YAML is the number 2.1, so numbers are refused."""
    if value is None:
        return value
    if not isinstance(value, str):
        validate.fail(
            field, "must be a string such as v2.3 (quote it: a YAML number loses digits, 2.10 is 2.1); allowed: %s" % ", ".join(runtime.TRAINER_RELEASES), value
        )
    try:
        release = "v%d.%d" % runtime.parse_trainer_version(value)
    except ConfigError:
        release = None
    if release not in runtime.TRAINER_RELEASES:
        validate.fail(field, "must be a Trainer release: %s (a patch release such as v2.2.1 too)" % ", ".join(runtime.TRAINER_RELEASES), value)
    return value


def check_raw_options(args):
    """The options of training_runtime and workload_plan as the task gave them, before the argument spec turns a
    number into text: ``trainer_version: 2.10`` is refused, not planned as v2.1."""
    if isinstance(args, dict) and args.get("trainer_version") is not None:
        check_trainer_version("trainer_version", args["trainer_version"])
    return args


def check_version(field, value, parse):
    if value in (None, ""):
        return value
    if not isinstance(value, str):
        validate.fail(field, "must be a version string", value)
    parse(value, field)
    return value


def check_platform_vars(field, value, library=None):
    library = library or shared_library()
    validate.check_mapping(field, value, allow_none=True)
    try:
        platform_catalog.resolve_platform_vars(value, platform_catalog.load_platform_catalog(library.lib_dir))
    except ConfigError as exc:
        raise ConfigError(field + exc.field[len("platform_vars") :], str(exc).split(": ", 1)[-1])
    specs = platform_catalog.platform_var_specs(platform_catalog.load_platform_catalog(library.lib_dir))
    for name, item in (value or {}).items():
        if specs[name].get("format") and item != "":
            # The catalogue names the grammar of a value that becomes a Kubernetes field (a quantity, ...).
            validate.check_grammar("%s.%s" % (field, name), item, specs[name]["format"])
        for index, text in enumerate(item if isinstance(item, list) else [item]):
            # Rendered into YAML templates: a line break or a YAML/Jinja2 delimiter would change the document.
            if isinstance(text, str) and (
                any(char in text for char in "\n\r{}[]#&*!|>'\"%`,") or ": " in text or text[:1] in ("-", "?", "@", " ") or text.endswith((":", " "))
            ):
                validate.fail(
                    "%s.%s" % (field, name) + ("[%d]" % index if isinstance(item, list) else ""),
                    "must be a name, path or image reference (no line breaks, quotes, brackets or YAML indicators)",
                    text,
                )
    return value


# --- user overrides -----------------------------------------------------------------------------------------------
def check_override_item(field, item):
    """One user override: the keys of overrides.OVERRIDE_KEYS with their types; ``when`` operators and values;
    jobTemplatePatch as RFC 6902; dependencies as Kubernetes objects."""
    validate.check_mapping(field, item)
    validate.check_keys(field, item, overrides.OVERRIDE_KEYS)
    if not isinstance(item.get("when"), dict):
        validate.fail(
            "%s.when" % field, "is required: a mapping of conditions (%s; {} matches every cluster)" % ", ".join(merge.MATCH_FIELDS), item.get("when")
        )
    merge.check_when(item["when"], "%s.when" % field)
    template = item.get("jobTemplate")
    if template is not None:
        validate.check_mapping("%s.jobTemplate" % field, template)
        validate.check_keys("%s.jobTemplate" % field, template, ("spec", "metadata"))
        spec = validate.check_mapping("%s.jobTemplate.spec" % field, template.get("spec", {}))
        validate.check_keys("%s.jobTemplate.spec" % field, spec, ("workload",))
        workload = validate.check_mapping("%s.jobTemplate.spec.workload" % field, spec.get("workload", {}))
        validate.check_keys("%s.jobTemplate.spec.workload" % field, workload, ("trainJob",))
        validate.check_mapping("%s.jobTemplate.spec.workload.trainJob" % field, workload.get("trainJob", {}))
    patch = item.get("jobTemplatePatch")
    if patch is not None:
        patch = validate.parse_json_text("%s.jobTemplatePatch" % field, patch)
        validate.check_json_patch("%s.jobTemplatePatch" % field, patch)
    if item.get("dependencies") is not None:
        validate.check_objects("%s.dependencies" % field, item["dependencies"])
    orchestration = item.get("orchestration")
    if orchestration is not None:
        validate.check_mapping("%s.orchestration" % field, orchestration)
        topology = orchestration.get("topology")
        if topology is not None:
            validate.check_mapping("%s.orchestration.topology" % field, topology)
            if topology.get("topologyKey") is not None:
                validate.check_grammar("%s.orchestration.topology.topologyKey" % field, topology["topologyKey"], "qualified_name")
    for key in ("preCommand", "mpiArgs"):
        validate.check_words("%s.%s" % (field, key), item.get(key))
    return item


def check_override_items(field, items):
    validate.check_list(field, items, allow_none=True)
    for index, item in enumerate(items or []):
        check_override_item("%s[%d]" % (field, index), item)
    return items


def check_trainer(field, trainer, framework=None):
    """The trainer command: the keys of the framework (any framework's when it is not known yet) and their types."""
    validate.check_mapping(field, trainer, allow_none=True)
    allowed = TRAINER_KEYS[framework] if framework in TRAINER_KEYS else sorted(set(k for keys in TRAINER_KEYS.values() for k in keys))
    validate.check_keys(field, trainer or {}, allowed)
    for key, value in (trainer or {}).items():
        where = "%s.%s" % (field, key)
        if key in ("args", "mpi_args", "command"):
            validate.check_words(where, value)
        elif key == "timeout":
            validate.check_int(where, value, 1, validate.TIMEOUT_MAX)
        elif value is not None:
            validate.check_str(where, value, allow_empty=True)
    return trainer


def check_cluster_nodes(field, nodes):
    """Node objects as kubernetes.core.k8s_info lists them: only the parts discovery reads are checked."""
    if nodes is None:
        return nodes
    validate.check_list(field, nodes)
    for index, node in enumerate(nodes):
        where = "%s[%d]" % (field, index)
        validate.check_mapping(where, node)
        metadata = validate.check_mapping("%s.metadata" % where, node.get("metadata") or {})
        labels = validate.check_mapping("%s.metadata.labels" % where, metadata.get("labels") or {})
        for key, value in labels.items():
            validate.check_str("%s.metadata.labels[%s]" % (where, key), value, allow_empty=True)
        status = validate.check_mapping("%s.status" % where, node.get("status") or {})
        for side in ("allocatable", "capacity"):
            validate.check_mapping("%s.status.%s" % (where, side), status.get(side) or {})
    return nodes


def check_structures(args):
    """Every option's size and depth bounded (validate.check_structure) before anything walks it."""
    for name in sorted(args or {}):
        validate.check_structure(name, args[name])
    return args


# --- the plugins' options -----------------------------------------------------------------------------------------
def check_runtime_options(args):
    """gpufleet.burnin.training_runtime."""
    check_structures(args)
    return _runtime_options(args)


def _runtime_options(args):
    """The runtime's options, once their structures are bounded (also the runtime part of workload_plan)."""
    check_entry_name(args.get("entry_name"))
    validate.check_grammar("image", args.get("image"), "image")
    validate.check_choice("framework", args.get("framework", "torch"), FRAMEWORKS)
    validate.check_int("nodes", args.get("nodes", 1), 1, validate.NODES_MAX)
    validate.check_int("gpus_per_node", args.get("gpus_per_node"), 0, validate.PER_NODE_MAX)
    allow_secret = validate.check_bool("allow_secret_env", args.get("allow_secret_env") or False)
    validate.check_env("env", args.get("env"), allow_secret)
    validate.check_volumes("volumes", args.get("volumes"))
    validate.check_volume_mounts("volume_mounts", args.get("volume_mounts"))
    validate.check_containers("init_containers", args.get("init_containers"), allow_secret)
    validate.check_resources("resources", args.get("resources"))
    validate.check_name_refs("image_pull_secrets", args.get("image_pull_secrets"))
    check_trainer_version("trainer_version", args.get("trainer_version"))
    return args


def check_override_options(args, library=None):
    """gpufleet.burnin.platform_overrides."""
    check_structures(args)
    return _override_options(args, library)


def _override_options(args, library=None):
    """The overrides' options, once their structures are bounded (also the override part of workload_plan)."""
    check_entry_name(args.get("entry_name"))
    validate.check_choice("framework", args.get("framework", "torch"), FRAMEWORKS)
    validate.check_int("nodes", args.get("nodes", 1), 1, validate.NODES_MAX)
    validate.check_int("gpus_per_node", args.get("gpus_per_node"), 0, validate.PER_NODE_MAX)
    for name in ("mlnx_per_node", "efa_per_node", "rdma_per_node"):
        validate.check_optional_int(name, args.get(name), 0, validate.PER_NODE_MAX)
    for name in ("enable_mnnvl", "extended_platforms"):
        if args.get(name) is not None:
            validate.check_bool(name, args[name])
    if args.get("platform") not in (None, ""):
        check_platform("platform", args["platform"], library=library)
    check_version("server_version", args.get("server_version"), dra.parse_server_version)
    check_version("dra_driver_version", args.get("dra_driver_version"), dra.parse_driver_version)
    if args.get("rct_api_version") not in (None, ""):
        dra.resource_api_version(args["rct_api_version"])
    if args.get("rdma_resource") not in (None, ""):
        validate.check_grammar("rdma_resource", args["rdma_resource"], "resource_name")
        if "/" not in args["rdma_resource"]:
            validate.fail("rdma_resource", "must be an extended resource name with a domain, such as rdma/ib", args["rdma_resource"])
    check_platform_vars("platform_vars", args.get("platform_vars"), library)
    return args


def check_plan_options(args, library=None):
    """gpufleet.burnin.workload_plan: the runtime's and the overrides' options plus the cluster's and the run's."""
    # Walked once: the role plans every attempt of every cluster through here, with the cluster's nodes among the options.
    check_structures(args)
    _runtime_options(args)
    _override_options(dict(args, platform=None), library)
    check_platform("platform", args.get("platform"), library=library)
    check_architecture("gpu_architecture", args.get("gpu_architecture"))
    validate.check_grammar("namespace", args.get("namespace"), "dns_label")
    run_id = validate.check_grammar("run_id", args.get("run_id"), "dns_label")
    if len("%s-%s" % (args["entry_name"], run_id)) > 63:
        validate.fail("run_id", "makes the TrainJob name '<entry_name>-<run_id>' longer than 63 characters", run_id)
    check_trainer("trainer", args.get("trainer"), args.get("framework", "torch"))
    check_override_items("overrides", args.get("overrides"))
    check_instance_type("instance_type", args.get("instance_type"), args.get("platform"), library)
    check_cluster_nodes("cluster_nodes", args.get("cluster_nodes"))
    return args


def check_apply_options(args):
    """gpufleet.burnin.k8s_apply: every object and the field manager, before connecting."""
    check_structures(args)
    validate.check_objects("objects", args.get("objects"), need_namespace=True)
    check_field_manager("field_manager", args.get("field_manager"))
    return args


def check_field_manager(field, manager):
    if not isinstance(manager, str) or not manager.strip() or len(manager) > validate.FIELD_MANAGER_MAX or not manager.isprintable():
        validate.fail(field, "must be a non-empty printable name of at most %d characters, such as gpufleet.burnin" % validate.FIELD_MANAGER_MAX, manager)
    return manager
