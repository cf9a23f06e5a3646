# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every variable of the role gpufleet.burnin.burnin, checked at the start of the role, before any task reaches a
cluster (the action gpufleet.burnin.burnin_start, the role's first task).

Survey answers and ``-e NAME=value`` arrive as text: integers, booleans and JSON lists or mappings given as text are
parsed here. Messages name the user's variable (``burnin_volumes[0].name``), the bad value and what is allowed.
The names are the role's argument specs (roles/burnin/meta/argument_specs.yml): a ``burnin_*`` variable none of its
entry points knows is a misspelling.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import json
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import defaults

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import dra

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import inputs

from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import export, metrics, writer

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import survey

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import stages, sweep
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift, offenders, siblings, thresholds

from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering import workload_catalog

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import inventory, node_marks, remediation
from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.names import FRAMEWORKS, check_entry_name
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import COLLECTION_ROOT, read_yaml_file

ARGUMENT_SPECS = os.path.join(COLLECTION_ROOT, "roles", "burnin", "meta", "argument_specs.yml")
# Variables the role sets itself (set_fact), so they may be defined when the role runs again in a play.
# The role's own facts, and the host variables the inventory plugin gpufleet.burnin.clusters sets beside the role's.
ROLE_FACTS = ("burnin_result", "burnin_generated_run_id") + inventory.HOST_FACTS
_TRUE = ("true", "yes", "on", "1", "y", "t")
_FALSE = ("false", "no", "off", "0", "n", "f")
THRESHOLD_ON_MISSING = ("pass", "warn", "fail")
_SPECS = {}


def argument_specs(path=ARGUMENT_SPECS):
    if path not in _SPECS:
        _SPECS[path] = read_yaml_file(path, "role argument specs")["argument_specs"]
    return _SPECS[path]


def known_names():
    return sorted(set(name for entry in argument_specs().values() for name in entry.get("options") or {}))


# --- text as a survey sends it ------------------------------------------------------------------------------------
def _int(name, value, low, high, optional=False):
    if optional and (value is None or value == ""):
        return None
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value.strip())
    return validate.check_int(name, value, low, high)


def _bool(name, value):
    if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
        return value.strip().lower() in _TRUE
    return validate.check_bool(name, value)


def _json(name, value, empty):
    if isinstance(value, str):
        value = validate.parse_json_text(name, value) if value.strip() else empty
    return empty if value is None else value


def _list(name, value, check=None):
    value = validate.check_list(name, _json(name, value, []))
    return check(name, value) if check else value


def _mapping(name, value):
    return validate.check_mapping(name, _json(name, value, {}))


def _text(name, value, grammar=None, allow_empty=True):
    if value is None:
        value = ""
    validate.check_str(name, value, allow_empty=allow_empty)
    if grammar and value != "":
        validate.check_grammar(name, value, grammar)
    return value


def _choice(name, value, choices, allow_empty=True):
    return validate.check_choice(name, "" if value is None else value, choices, allow_empty=allow_empty) or ""


def _env(name, value, allow_secret=False):
    return validate.check_env(name, survey.env_list(value, field=name), allow_secret)


def _thresholds(name, value):
    records = _list(name, value)
    collectives = workload_catalog.catalogue_collectives() if records else []
    for index, record in enumerate(records):
        where = "%s[%d]" % (name, index)
        normalized = thresholds.normalize_record(record, where, origin="user")
        # A record no run can use would silently judge nothing (a typo such as all_redcue).
        if normalized["collective"] not in collectives:
            validate.fail(
                "%s.collective" % where,
                "names a collective no workload of the collection runs; allowed: %s (the collectives of templates/workloads/)" % ", ".join(collectives),
                record.get("collective"),
            )
    return records


def _report_formats(name, value):
    if isinstance(value, str):
        value = [item.strip() for item in value.replace("\n", ",").split(",") if item.strip()]
    validate.check_list(name, value, allow_none=True)
    for index, item in enumerate(value or []):
        validate.check_choice("%s[%d]" % (name, index), item, writer.FORMATS)
    return value or []


def _stages(name, value):
    """burnin_stages: a list, JSON text or comma-separated survey text; a node stage's workload must be in the catalogue."""
    if isinstance(value, str) and value.strip().startswith("["):
        value = _json(name, value, [])
    return stages.check_stages(name, value, workload_catalog.available_workloads())


def _sweep_stages(name, value):
    """burnin_sweep_stages: stages as burnin_stages, node-local ones only (burnin/sweep.py pins them to the picked nodes)."""
    value = _stages(name, value)
    fleet_wide = [stage for stage in value if stage not in stages.NODE_STAGE_WORKLOADS]
    if fleet_wide:
        validate.fail(
            name, "takes node stages only (%s); %s run(s) over the fleet" % (", ".join(sorted(stages.NODE_STAGE_WORKLOADS)), ", ".join(fleet_wide)), show=False
        )
    return value


def _node_names(name, value):
    """burnin_sweep_nodes: node names (DNS subdomains), at most NODES_MAX, no repeats."""
    if len(value) > validate.NODES_MAX:
        validate.fail(name, "may name at most %d nodes" % validate.NODES_MAX, show=False)
    for index, item in enumerate(value):
        validate.check_grammar("%s[%d]" % (name, index), item, "dns_subdomain")
    if len(set(value)) != len(value):
        validate.fail(name, "names a node twice", value)
    return list(value)


def _stage_params(name, value):
    """burnin_stage_params: {<node stage>: its catalogue workload's parameters}; each stage's checked by check_stage_params."""
    value = _mapping(name, value)
    for stage in sorted(value, key=str):
        if stage not in stages.NODE_STAGE_WORKLOADS:
            validate.fail(
                "%s.%s" % (name, stage),
                "is not a stage that takes parameters; allowed: %s (each a mapping of its workload's parameters: %s)"
                % (", ".join(sorted(stages.NODE_STAGE_WORKLOADS)), ", ".join("%s: %s" % item for item in sorted(stages.NODE_STAGE_WORKLOADS.items()))),
                show=False,
            )
        validate.check_mapping("%s.%s" % (name, stage), value[stage])
    return value


def _workload(name, value):
    return validate.check_choice(name, value, workload_catalog.available_workloads())


def _platform_vars(name, value):
    return inputs.check_platform_vars(name, _mapping(name, value))


def _overrides(name, value):
    return inputs.check_override_items(name, _list(name, value))


def _names(name, value):
    return validate.check_name_refs(name, survey.name_refs(value, field=name))


def _version(parse):
    return lambda name, value: inputs.check_version(name, _text(name, value), parse)


def _kinds(name, value):
    """burnin_cleanup_extra_kinds: {api_version, kind} mappings."""
    for index, item in enumerate(value):
        field = "%s[%d]" % (name, index)
        validate.check_mapping(field, item)
        for key in ("api_version", "kind"):
            validate.check_str("%s.%s" % (field, key), item.get(key))
        extra = sorted(set(item) - {"api_version", "kind"})
        if extra:
            validate.fail(field, "has %s; only api_version and kind are allowed" % ", ".join(extra))
    return value


def _per_node(name, value):
    return _int(name, value, 0, validate.PER_NODE_MAX, optional=True)


def _percent(name, value):
    """A percentage from 0 to 100, an int or a float, or the same as survey text."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            validate.fail(name, "must be a number from 0 to 100", value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
        validate.fail(name, "must be a number from 0 to 100", value)
    return float(value)


def _export_headers(name, value):
    """burnin_export_headers: checked, returned masked (the checked variables are in the start task's result, which
    -v prints); the export task reads the variable itself. No message repeats a value."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            validate.fail(name, "must be a mapping of header names to values (or that mapping as JSON text)", show=False)
    return export.shown_headers(export.check_headers(name, value))


# The metrics and the export read the run's JSON report (plugins/plugin_utils/export_run.py).
EXPORT_VARIABLES = ("burnin_metrics_dir", "burnin_pushgateway_url", "burnin_export_url")


def check_export_needs_report(result):
    wanted = [name for name in EXPORT_VARIABLES if result.get(name)]
    if wanted and (not result.get("burnin_report_dir") or "json" not in result.get("burnin_report_formats", writer.FORMATS)):
        validate.fail(wanted[0], "needs the run's JSON report: set burnin_report_dir and keep json in burnin_report_formats", show=False)


def check_export_insecure(result):
    """Credentials over plain http:// to a host other than loopback, refused before any cluster (export.check_insecure)."""
    allow = result.get("burnin_export_allow_insecure", False)
    export.check_insecure("burnin_pushgateway_url", result.get("burnin_pushgateway_url"), allow=allow)
    export.check_insecure("burnin_export_url", result.get("burnin_export_url"), result.get("burnin_export_headers"), allow=allow)


# The isolation's budget (module_utils/burnin/isolation_stage.py): pair jobs in all, and minutes in all (a day at most).
ISOLATION_MAX_JOBS = 1000
ISOLATION_MAX_MINUTES = 1440


def check_isolation_budget(max_jobs, max_minutes, names=("max_jobs", "max_minutes")):
    """The isolation's budget, MAX_JOBS and MAX_MINUTES (text as a survey sends it parsed), named as NAMES."""
    return _int(names[0], max_jobs, 1, ISOLATION_MAX_JOBS), _int(names[1], max_minutes, 1, ISOLATION_MAX_MINUTES)


# name -> check(name, value) -> the value to use. Bounds are validate.py's.
CHECKS = {
    "burnin_platform": lambda n, v: inputs.check_platform(n, _text(n, v), allow_empty=True) or "",
    "burnin_gpu_architecture": lambda n, v: inputs.check_architecture(n, _text(n, v), allow_empty=True) or "",
    "burnin_check_nodes": _bool,
    "burnin_gpus_per_node": _per_node,
    "burnin_mlnx_per_node": _per_node,
    "burnin_instance_type": lambda n, v: _text(n, v, "label_value"),
    "burnin_efa_per_node": _per_node,
    "burnin_rdma_resource": lambda n, v: _text(n, v, "resource_name"),
    "burnin_rdma_per_node": _per_node,
    "burnin_platform_vars": _platform_vars,
    "burnin_extended_platforms": _bool,
    "burnin_server_version": _version(dra.parse_server_version),
    "burnin_rct_api_version": lambda n, v: _choice(n, v, list(dra.RCT_API_VERSIONS)),
    "burnin_dra_driver_version": _version(dra.parse_driver_version),
    "burnin_entry_name": lambda n, v: check_entry_name(v, n),
    "burnin_workload": _workload,
    "burnin_workload_params": _mapping,
    "burnin_image": lambda n, v: _text(n, v, "image"),
    "burnin_framework": lambda n, v: _choice(n, v, FRAMEWORKS),
    "burnin_nodes": lambda n, v: _int(n, v, 1, validate.NODES_MAX),
    "burnin_enable_mnnvl": _bool,
    "burnin_trainer": _mapping,
    "burnin_trainer_version": inputs.check_trainer_version,
    "burnin_env": _env,
    "burnin_volumes": lambda n, v: _list(n, v, validate.check_volumes),
    "burnin_volume_mounts": lambda n, v: _list(n, v, validate.check_volume_mounts),
    "burnin_init_containers": lambda n, v, allow_secret=False: validate.check_containers(n, _list(n, v), allow_secret),
    "burnin_allow_secret_env": _bool,
    "burnin_resources": lambda n, v: validate.check_resources(n, _mapping(n, v)),
    "burnin_image_pull_secrets": _names,
    "burnin_overrides": _overrides,
    "burnin_trainjob_annotations": lambda n, v: validate.check_string_map(n, _mapping(n, v)),
    "burnin_run_id": lambda n, v: _text(n, v, "dns_label"),
    "burnin_namespace": lambda n, v: _text(n, v, "dns_label", allow_empty=False),
    "burnin_namespace_per_run": _bool,
    "burnin_create_namespace": _bool,
    "burnin_field_manager": inputs.check_field_manager,
    "burnin_force_conflicts": _bool,
    "burnin_wait": _bool,
    "burnin_timeout": lambda n, v: _int(n, v, 1, validate.TIMEOUT_MAX),
    "burnin_poll_interval": lambda n, v: _int(n, v, 1, 3600),
    "burnin_collect_logs": _bool,
    "burnin_log_tail_lines": lambda n, v: _int(n, v, 1, 1000000),
    "burnin_log_max_bytes": lambda n, v: _int(n, v, 65536, 1 << 34),
    "burnin_report_dir": _text,
    "burnin_report_formats": _report_formats,
    "burnin_baseline": _text,
    "burnin_regression_percent": _percent,
    "burnin_sibling_key": lambda n, v: list(siblings.check_key(v, n)),
    "burnin_sibling_rule": lambda n, v: siblings.check_rule(v, n),
    "burnin_sibling_min": lambda n, v: siblings.check_min_siblings(v, n),
    "burnin_sibling_verdict": lambda n, v: siblings.check_verdict(v, n),
    "burnin_baseline_dir": _text,
    "burnin_golden": lambda n, v: drift.load_golden(v, n),
    "burnin_drift_fail": lambda n, v: list(drift.check_fail_keys(v, n)),
    "burnin_offender_failures": lambda n, v: _int(n, v, 1, offenders.MAX_RUNS),
    "burnin_offender_runs": lambda n, v: _int(n, v, 1, offenders.MAX_RUNS),
    "burnin_metrics_dir": _text,
    "burnin_metrics_max_series": lambda n, v: _int(n, v, 1, metrics.MAX_SERIES_LIMIT),
    "burnin_pushgateway_url": export.check_url,
    "burnin_pushgateway_job": lambda n, v: _text(n, v, "label_value", allow_empty=False),
    "burnin_export_url": export.check_url,
    "burnin_export_headers": _export_headers,
    "burnin_export_attempts": lambda n, v: _int(n, v, 1, export.MAX_ATTEMPTS),
    "burnin_export_backoff": export.check_backoff,
    "burnin_export_allow_insecure": _bool,
    "burnin_thresholds": _thresholds,
    "burnin_stages": _stages,
    "burnin_stage_params": _stage_params,
    "burnin_repeats": stages.check_repeats,
    "burnin_threshold_on_missing": lambda n, v: _choice(n, v, THRESHOLD_ON_MISSING, allow_empty=False),
    "burnin_fail_on_error": _bool,
    "burnin_summary": _bool,
    "burnin_render_dir": _text,
    "burnin_unreachable_grace": lambda n, v: _int(n, v, 0, validate.TIMEOUT_MAX),
    "burnin_isolation_max_jobs": lambda n, v: _int(n, v, 1, ISOLATION_MAX_JOBS),
    "burnin_isolation_max_minutes": lambda n, v: _int(n, v, 1, ISOLATION_MAX_MINUTES),
    "burnin_cleanup_all_runs": _bool,
    "burnin_cleanup_namespace": _bool,
    "burnin_cleanup_shared": _bool,
    "burnin_cleanup_wait": _bool,
    "burnin_cleanup_extra_kinds": lambda n, v: _list(n, v, _kinds),
    "burnin_label_verified": _bool,
    "burnin_verified_label": lambda n, v: _text(n, v, "qualified_name", allow_empty=False),
    "burnin_quarantine": lambda n, v: _choice(n, v, remediation.QUARANTINE_MODES, allow_empty=False),
    "burnin_quarantine_taint": lambda n, v: remediation.check_taint(n, _mapping(n, v)),
    "burnin_node_marks": _bool,
    "burnin_mark_ttl_hours": lambda n, v: _int(n, v, 1, node_marks.TTL_HOURS_MAX),
    "burnin_mark_condition": _bool,
    "burnin_sweep_max_age_hours": lambda n, v: _int(n, v, 1, sweep.MAX_AGE_HOURS_MAX),
    "burnin_sweep_max_nodes": lambda n, v: _int(n, v, 1, sweep.MAX_NODES_MAX),
    "burnin_sweep_max_percent": lambda n, v: _int(n, v, 1, 100),
    "burnin_sweep_hold": lambda n, v: _choice(n, v, list(sweep.HOLDS), allow_empty=False),
    "burnin_sweep_stages": _sweep_stages,
    "burnin_sweep_nodes": lambda n, v: _list(n, v, _node_names),
    "burnin_marks_now": lambda n, v: _int(n, v, 0, node_marks.NOW_MAX),
}


# The host's variables gpufleet.burnin.burnin_start checks when the task gives none: every burnin_* name (the role's
# own burnin__* are internal) but the kubeconfig and context, which may hold secrets and are kubernetes.core's to check.
GIVEN_NAME = re.compile(r"^burnin_[a-z0-9]")
NOT_GIVEN = ("burnin_kubeconfig", "burnin_context")


def given_names(names):
    """The names among NAMES (a host's variables) that check_role_vars is given, sorted."""
    return sorted(name for name in names if isinstance(name, str) and GIVEN_NAME.match(name) and name not in NOT_GIVEN)


SECRET_ENV_VARIABLES = ("burnin_env", "burnin_init_containers")


def check_role_vars(given):
    """Check the role's variables (a mapping of name to value, every ``burnin_*`` variable defined for the host) and
    return the values to use, text parsed. Unknown ``burnin_*`` names are refused with the nearest known name."""
    validate.check_mapping("variables", given)
    names = known_names()
    unknown = sorted(name for name in given if name not in names and name not in ROLE_FACTS and not name.startswith("burnin__"))
    for name in unknown:
        near = difflib.get_close_matches(name, names, n=1)
        raise ConfigError(
            name,
            "is not a variable of gpufleet.burnin.burnin%s; its variables: ansible-doc -t role gpufleet.burnin.burnin"
            % ("; did you mean %s?" % near[0] if near else ""),
        )
    # Bounded before any check walks a value: a YAML alias bomb is refused here, not expanded (validate.check_structure).
    for name in sorted(given):
        validate.check_structure(name, given[name], max_values=validate.ROLE_VAR_MAX_VALUES)
    result = {}
    # The env's Secret references are refused unless this is set (validate.SECRET_REASON says why).
    allow_secret = _bool("burnin_allow_secret_env", given.get("burnin_allow_secret_env", False))
    for name, check in CHECKS.items():
        if name in given:
            result[name] = check(name, given[name], allow_secret) if name in SECRET_ENV_VARIABLES else check(name, given[name])
    framework = result.get("burnin_framework") or None
    if "burnin_trainer" in result:
        inputs.check_trainer("burnin_trainer", result["burnin_trainer"], framework)
    if result.get("burnin_instance_type") and result.get("burnin_platform"):
        inputs.check_instance_type("burnin_instance_type", result["burnin_instance_type"], result["burnin_platform"])
    if "burnin_offender_failures" in result or "burnin_offender_runs" in result:
        # k of n: k may not exceed n (judging/offenders.py), refused here rather than by the report at the run's end.
        offenders.check_window(result.get("burnin_offender_failures", offenders.DEFAULT_FAILURES), result.get("burnin_offender_runs", offenders.DEFAULT_RUNS))
    if "burnin_workload" in result:
        check_workload(result)
    if result.get("burnin_stage_params"):
        check_stage_params(result)
    check_export_needs_report(result)
    check_export_insecure(result)
    if "burnin_poll_interval" in result and "burnin_timeout" in result and result["burnin_poll_interval"] > result["burnin_timeout"]:
        validate.fail("burnin_poll_interval", "must not exceed burnin_timeout (%d)" % result["burnin_timeout"], result["burnin_poll_interval"])
    return result


def check_stage_params(result, name="burnin_stage_params"):
    """Render each node stage's workload now with its burnin_stage_params entry, as burnin/stages.py stage_variables
    will: a bad value fails before the cluster is contacted, naming ``burnin_stage_params.<stage>``."""
    platform, arch = result.get("burnin_platform") or "", result.get("burnin_gpu_architecture") or ""
    gpus = result.get("burnin_gpus_per_node")
    if gpus is None:
        gpus = defaults.gpu_defaults(arch or "unknown", platform or None)["gpus_per_node"]
    for stage, params in sorted(result[name].items()):
        field, workload = "%s.%s" % (name, stage), stages.NODE_STAGE_WORKLOADS[stage]
        workload_catalog.check_parameters(workload, params, field)
        data = workload_catalog.with_burnin_image(workload, params, result.get("burnin_image"))
        try:
            workload_catalog.render_workload(workload, dict(data, nodes=1, gpus_per_node=gpus, platform=platform, gpu_architecture=arch))
        except BurninError as exc:
            raise ConfigError(field, "the %s stage's workload %s does not render with them: %s" % (stage, workload, exc))


def check_workload(result):
    """Render the workload now, as each stage will, with the declared platform and GPU (detection may still change them):
    a bad burnin_workload_params value or a framework that does not fit fails before the cluster is contacted."""
    platform, arch = result.get("burnin_platform") or "", result.get("burnin_gpu_architecture") or ""
    gpus = result.get("burnin_gpus_per_node")
    if gpus is None:
        gpus = defaults.gpu_defaults(arch or "unknown", platform or None)["gpus_per_node"]
    workload_catalog.check_parameters(result["burnin_workload"], result.get("burnin_workload_params"), "burnin_workload_params")
    params = workload_catalog.with_burnin_image(result["burnin_workload"], result.get("burnin_workload_params"), result.get("burnin_image"))
    data = dict(params, nodes=result.get("burnin_nodes", 2), gpus_per_node=gpus, platform=platform, gpu_architecture=arch)
    try:
        rendered = workload_catalog.render_workload(result["burnin_workload"], data)
    except BurninError as exc:
        raise ConfigError("burnin_workload_params", "workload %s does not render with them: %s" % (result["burnin_workload"], exc))
    custom = result.get("burnin_trainer")
    framework = result.get("burnin_framework") or rendered["framework"]
    if framework != rendered["framework"] and not custom:
        raise ConfigError(
            "burnin_framework",
            "%s does not fit burnin_workload %s, which runs %s: leave burnin_framework empty, "
            "pick a %s workload (burnin_workload: %s), or set burnin_trainer"
            % (framework, result["burnin_workload"], rendered["framework"], framework, ", ".join(workload_catalog.available_workloads())),
        )
    if not custom:
        inputs.check_trainer("burnin_workload_params (the trainer of workload %s)" % result["burnin_workload"], rendered["trainer"], framework)
