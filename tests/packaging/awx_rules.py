# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""AWX 24.6.1's own validation rules, restated, for the objects under examples/awx (tests/packaging/test_awx_rules.py).

Each rule cites the AWX 24.6.1 source it restates (github.com/ansible/awx at tag 24.6.1), as `path:line`. The
functions return findings, one string each, naming the example file and the question, field or variable at fault;
an empty list means AWX accepts the object and handles it the same on every launch path.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import shlex
from pathlib import Path

import yaml
from jinja2 import StrictUndefined, TemplateSyntaxError, UndefinedError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

# awx/main/constants.py:99 SURVEY_TYPE_MAPPING: question types and the Python type of their `default`.
SURVEY_TYPE_MAPPING = {"text": str, "textarea": str, "password": str, "multiplechoice": str, "multiselect": str, "integer": int, "float": (float, int)}
# awx/main/constants.py:48 ENV_BLOCKLIST: environment variables a credential type may not inject.
ENV_BLOCKLIST = frozenset(
    (
        "VIRTUAL_ENV",
        "PATH",
        "PYTHONPATH",
        "JOB_ID",
        "INVENTORY_ID",
        "INVENTORY_SOURCE_ID",
        "INVENTORY_UPDATE_ID",
        "AD_HOC_COMMAND_ID",
        "REST_API_URL",
        "REST_API_TOKEN",
        "MAX_EVENT_RES",
        "CALLBACK_QUEUE",
        "CALLBACK_CONNECTION",
        "CACHE",
        "JOB_CALLBACK_DEBUG",
        "INVENTORY_HOSTVARS",
        "AWX_HOST",
        "PROJECT_REVISION",
        "SUPERVISOR_CONFIG_PATH",
    )
)
# awx/main/models/inventory.py:922 InventorySourceOptions.SOURCE_CHOICES
INVENTORY_SOURCES = (
    "file",
    "constructed",
    "scm",
    "ec2",
    "gce",
    "azure_rm",
    "vmware",
    "satellite6",
    "openstack",
    "rhv",
    "controller",
    "insights",
    "terraform",
    "openshift_virtualization",
)
# awx/api/serializers.py:2352 InventorySourceOptionsSerializer.Meta.fields, :2411 InventorySourceSerializer.Meta.fields,
# plus name/description (every serializer's '*') and execution_environment (:697 UnifiedJobTemplateSerializer).
INVENTORY_SOURCE_FIELDS = frozenset(
    "name description source source_path source_vars scm_branch credential enabled_var enabled_value host_filter overwrite "
    "overwrite_vars timeout verbosity limit inventory update_on_launch update_cache_timeout source_project execution_environment".split()
)
# awx/api/serializers.py:3232 JobOptionsSerializer.Meta.fields and :3370 JobTemplateSerializer.Meta.fields (read-only
# ones left out), :697 execution_environment; plus what awx.awx.job_template adds to them: credentials, labels,
# instance_groups, survey_spec (awx_collection/plugins/modules/job_template.py:75,95,249,287).
JOB_TEMPLATE_FIELDS = frozenset(
    "name description job_type inventory project playbook scm_branch forks limit verbosity extra_vars job_tags force_handlers skip_tags "
    "start_at_task timeout use_fact_cache host_config_key ask_scm_branch_on_launch ask_diff_mode_on_launch ask_variables_on_launch "
    "ask_limit_on_launch ask_tags_on_launch ask_skip_tags_on_launch ask_job_type_on_launch ask_verbosity_on_launch ask_inventory_on_launch "
    "ask_credential_on_launch ask_execution_environment_on_launch ask_labels_on_launch ask_forks_on_launch ask_job_slice_count_on_launch "
    "ask_timeout_on_launch ask_instance_groups_on_launch survey_enabled become_enabled diff_mode allow_simultaneous job_slice_count "
    "webhook_service webhook_credential prevent_instance_group_fallback execution_environment credentials labels instance_groups survey_spec".split()
)
# awx/main/utils/ansible.py:20 valid_playbook_re: a project file AWX lists as a playbook (could_be_playbook, :42).
VALID_PLAYBOOK_RE = re.compile(r"^\s*?-?\s*?(?:hosts|(ansible\.builtin\.)?include|(ansible\.builtin\.)?import_playbook):\s*?.*?$")


# ------------------------------------------------------------------------------------------------ survey


def element_errors(question, data, validate_required=True):
    """awx/main/models/mixins.py:205 SurveyJobTemplateMixin._survey_element_validation: an answer's errors."""
    var, kind, errors = question["variable"], question["type"], []
    if var not in data and question["required"]:  # mixins.py:218
        if validate_required:
            errors.append("'%s' value missing" % var)
    elif var not in data:
        pass
    elif kind in ("text", "textarea", "password"):
        value = data[var]
        if not isinstance(value, str):  # mixins.py:224
            return ["Value %r for '%s' expected to be a string." % (value, var)]
        if question.get("min") not in ("", None) and len(value) < int(question["min"]):  # mixins.py:227
            errors.append("'%s' value %r is too small" % (var, value))
        if question.get("max") not in ("", None) and len(value) > int(question["max"]):  # mixins.py:232
            errors.append("'%s' value %r is too large" % (var, value))
    elif kind == "integer":
        value = data[var]
        if isinstance(value, bool) or not isinstance(value, int):  # mixins.py:240 (type() != int): a string "3" is refused, so is a bool
            return ["Value %r for '%s' expected to be an integer." % (value, var)]
        if question.get("min") not in ("", None) and value < int(question["min"]):  # mixins.py:243
            errors.append("'%s' value %s is too small" % (var, value))
        if question.get("max") not in ("", None) and value > int(question["max"]):  # mixins.py:253
            errors.append("'%s' value %s is too large" % (var, value))
    elif kind == "float":
        value = data[var]
        if isinstance(value, bool) or not isinstance(value, (float, int)):  # mixins.py:265
            return ["Value %r for '%s' expected to be a numeric type." % (value, var)]
    elif kind == "multiselect":
        value = data[var]
        if not isinstance(value, list):  # mixins.py:280: an answer must be a list, never a newline-separated string
            errors.append("'%s' value is expected to be a list." % var)
        else:
            choices = _choices(question)
            errors.extend("Value %r for '%s' expected to be one of %s." % (v, var, choices) for v in value if v not in choices)
    elif kind == "multiplechoice":  # mixins.py:289
        if data[var] not in _choices(question):
            errors.append("Value %r for '%s' expected to be one of %s." % (data[var], var, _choices(question)))
    return errors


def _choices(question):
    """mixins.py:284/291: choices as a list, or a newline-separated string of them."""
    choices = question.get("choices") or []
    if isinstance(choices, str):
        choices = [c for c in choices.splitlines() if c.strip() != ""]
    return list(choices)


def sent_when_unanswered(question, path):
    """The extra var a job gets for a question the user left as it was: {variable: value} or {}.

    ui: the 24.6.1 UI's launch form starts from the default (awx/ui/src/components/LaunchPrompt/steps/useSurveyStep.js:73-78,
    a multiselect's split on new lines) and drops "" and [] (awx/ui/src/util/prompt/getSurveyValues.js:5-10).
    api: every other launch (API, awx CLI, awx.awx.job_launch, schedule, workflow node) creates the job through
    mixins.py:154 _update_unified_job_kwargs, which adds a default only when it passes the answer validation
    (mixins.py:190-196): a multiselect default (a string, constants.py:99) never does, so it is dropped.
    """
    var, default = question["variable"], question.get("default")
    if path == "ui":
        if question["type"] == "multiselect":
            value = (default.split("\n") if isinstance(default, str) else list(default)) if default else []
        else:
            value = "" if default is None else default
        return {} if value in ("", []) else {var: value}
    if default is None or element_errors(question, {var: default}):
        return {}
    return {var: default}


def launch_errors(survey, answers, path="api"):
    """What a launch with these extra vars is refused for. An API or CLI launch validates the request's own extra vars
    against every question, required ones included: a default does not answer a required question
    (awx/api/serializers.py:4708 excludes only 'prompts' errors; mixins.py:218); so must a schedule's extra_data
    (serializers.py:4084 excludes nothing, :4194). A workflow node may leave required questions out (serializers.py:4226
    excludes 'required')."""
    errors = []
    for question in survey["spec"]:
        errors.extend(element_errors(question, answers, validate_required=(path != "workflow_node")))
    return errors


def survey_findings(doc, where="survey-spec.json"):
    """awx/api/views/__init__.py:2559 JobTemplateSurveySpec._validate_spec_data, the 24.6.1 UI's survey editor, and the
    launch paths' defaults (sent_when_unanswered)."""
    found = []
    for field, kind in (("name", str), ("description", str), ("spec", list)):  # views/__init__.py:2561
        if not isinstance(doc.get(field), kind):
            found.append("%s: field '%s' missing or not a %s" % (where, field, kind.__name__))
    if found:
        return found
    if not doc["spec"]:  # views/__init__.py:2567
        return ["%s: 'spec' doesn't contain any items" % where]
    seen = set()
    for idx, q in enumerate(doc["spec"]):
        if not isinstance(q, dict):  # views/__init__.py:2577
            found.append("%s: question %d is not a JSON object" % (where, idx))
            continue
        var = q.get("variable", "question %d" % idx)
        at = "%s: %s" % (where, var)
        bad = False
        for field in ("type", "question_name", "variable", "required"):  # views/__init__.py:2580-2597
            kind = bool if field == "required" else str
            if field not in q or not isinstance(q[field], kind):
                found.append("%s: '%s' missing or not a %s" % (at, field, "boolean" if kind is bool else "string"))
                bad = True
        if bad:
            continue
        if var in seen:  # views/__init__.py:2601
            found.append("%s: 'variable' duplicated" % at)
        seen.add(var)
        qtype = q["type"]
        if qtype not in SURVEY_TYPE_MAPPING:  # views/__init__.py:2612
            found.append("%s: type '%s' is not one of %s" % (at, qtype, ", ".join(SURVEY_TYPE_MAPPING)))
            continue
        if "default" in q and q["default"] != "" and not isinstance(q["default"], SURVEY_TYPE_MAPPING[qtype]):  # views/__init__.py:2621
            found.append("%s: default %r is not a %s (a multiselect's is a newline-separated string)" % (at, q["default"], qtype))
        for key in ("min", "max"):  # views/__init__.py:2636
            if key in q and q[key] is not None and (not isinstance(q[key], int) or isinstance(q[key], bool)):
                found.append("%s: %s must be an integer" % (at, key))
        if qtype in ("multiselect", "multiplechoice"):
            if "choices" not in q:  # views/__init__.py:2648
                found.append("%s: a %s question must specify choices" % (at, qtype))
                continue
            choices = _choices(q)
            # The UI's survey editor splits `default` (awx/ui/src/screens/Template/Survey/SurveyQuestionForm.js:126-128)
            # and the survey list a multiselect's (SurveyListItem.js:67-74): without a string `default` key they
            # throw and the question cannot be opened.
            if not isinstance(q.get("default"), str):
                found.append("%s: a %s question needs a string 'default' key (\"\" for none) or AWX's survey editor breaks on it" % (at, qtype))
            elif q["default"] != "":
                picked = [c for c in q["default"].splitlines() if c.strip() != ""]
                if qtype == "multiplechoice" and len(picked) > 1:  # views/__init__.py:2664
                    found.append("%s: a multiple choice question can only have one default" % at)
                if any(p not in choices for p in picked):  # views/__init__.py:2669
                    found.append("%s: default choice %r is not one of the choices" % (at, q["default"]))
        if isinstance(q.get("default"), str) and q["default"].startswith("$encrypted$") and qtype != "password":  # views/__init__.py:2677
            found.append("%s: $encrypted$ is reserved for password defaults" % at)
        # Unanswered, the question must give the job the same extra var on every launch path.
        ui, api = sent_when_unanswered(q, "ui"), sent_when_unanswered(q, "api")
        if ui != api:
            found.append(
                "%s: unanswered, a UI launch sends %s but API, CLI, schedule and workflow launches send %s (mixins.py:190-196 drops "
                "a default that fails the answer validation)" % (at, json.dumps(ui) or "nothing", json.dumps(api) if api else "nothing")
            )
    return found


# ------------------------------------------------------------------------------------------------ credential type


def credential_type_findings(ct, where="credential-type.json"):
    """awx/api/serializers.py:2953 CredentialTypeSerializer and awx/main/fields.py:710 CredentialTypeInputField,
    :805 CredentialTypeInjectorField."""
    found = []
    if ct.get("kind") not in ("cloud", "net"):  # serializers.py:2975
        found.append("%s: kind must be 'cloud' or 'net', not %r" % (where, ct.get("kind")))
    inputs = ct.get("inputs") or {}
    if set(inputs) - {"fields", "required"}:  # fields.py:719 additionalProperties false; :750 no 'dependencies'
        found.append("%s: inputs may hold only fields and required, not %s" % (where, sorted(set(inputs) - {"fields", "required"})))
    if not all(isinstance(r, str) for r in inputs.get("required", [])):  # fields.py:721
        found.append("%s: inputs.required must be a list of strings" % where)
    field_keys = {"type", "format", "choices", "id", "label", "help_text", "multiline", "secret", "ask_at_runtime", "default"}  # fields.py:726-741
    ids = []
    for field in inputs.get("fields", []):
        fid = field.get("id")
        at = "%s: input %s" % (where, fid)
        if set(field) - field_keys:  # fields.py:742
            found.append("%s: unknown keys %s" % (at, sorted(set(field) - field_keys)))
        for key in ("id", "label"):  # fields.py:743
            if not isinstance(field.get(key), str):
                found.append("%s: '%s' is required" % (at, key))
        if isinstance(fid, str) and not re.match(r"^[a-zA-Z_]+[a-zA-Z0-9_]*$", fid):  # fields.py:731
            found.append("%s: is an invalid variable name" % at)
        if fid == "tower":  # fields.py:762
            found.append("%s: 'tower' is a reserved field name" % at)
        if fid in ids:  # fields.py:769
            found.append("%s: field IDs must be unique" % at)
        ids.append(fid)
        ftype = field.get("type", "string")  # fields.py:777
        if ftype not in ("string", "boolean"):  # fields.py:727
            found.append("%s: type must be string or boolean" % at)
            continue
        if "format" in field and field["format"] not in ("ssh_private_key", "url"):  # fields.py:728
            found.append("%s: format must be ssh_private_key or url" % at)
        for key in ("multiline", "secret", "ask_at_runtime"):  # fields.py:735-737
            if key in field and not isinstance(field[key], bool):
                found.append("%s: %s must be a boolean" % (at, key))
        if field.get("ask_at_runtime"):  # serializers.py:2980
            found.append("%s: 'ask_at_runtime' is not supported for custom credentials" % at)
        if "default" in field and not isinstance(field["default"], {"string": str, "boolean": bool}[ftype]):  # fields.py:781-785
            found.append("%s: default is not a %s" % (at, ftype))
        for key in ("choices", "multiline", "format", "secret"):  # fields.py:787-799
            if key in field and ftype != "string":
                found.append("%s: %s not allowed for %s type" % (at, key, ftype))
    injectors = ct.get("injectors") or {}
    if set(injectors) - {"file", "env", "extra_vars"}:  # fields.py:814
        found.append("%s: injectors may hold only file, env and extra_vars" % where)
    files = injectors.get("file", {})
    for key, tmpl in files.items():
        if not re.match(r"^template(\.[a-zA-Z_]+[a-zA-Z0-9_]*)?$", key) or not isinstance(tmpl, str):  # fields.py:819
            found.append("%s: file injector %s must be template or template.<name>, a string" % (where, key))
    for key, tmpl in injectors.get("env", {}).items():
        if not re.match(r"^[a-zA-Z_]+[a-zA-Z0-9_]*$", key) or not isinstance(tmpl, str) or not re.match(r"^[\x00-\x7F]*$", tmpl):  # fields.py:831-835
            found.append("%s: env injector %s: a shell name with an ASCII string value" % (where, key))
        if key.startswith("ANSIBLE_") or key in ENV_BLOCKLIST:  # fields.py:853-865
            found.append("%s: env injector %s is not allowed in credentials" % (where, key))
    for key in injectors.get("extra_vars", {}):
        if not re.match(r"^[a-zA-Z_\{\}]+[a-zA-Z0-9_\{\}]*$", key):  # fields.py:845
            found.append("%s: extra_vars injector %s is not a variable name" % (where, key))
    # fields.py:882-939: every template renders in a sandbox with StrictUndefined over the input ids and tower.filename.
    names = [k for k in files if k.startswith("template")]
    namespace = dict((fid, "EXAMPLE") for fid in ids if isinstance(fid, str))
    if "template" in names:
        if len(names) > 1:  # fields.py:899-905
            found.append("%s: must use multi-file syntax when injecting multiple files" % where)
        namespace["tower"] = {"filename": "EXAMPLE_FILENAME"}
    else:
        namespace["tower"] = {"filename": dict((n.split(".", 1)[1], "EXAMPLE_FILENAME") for n in names)}
    sandbox = ImmutableSandboxedEnvironment(undefined=StrictUndefined)

    def render(section, key, tmpl):
        try:
            sandbox.from_string(tmpl).render(namespace)
        except (UndefinedError, SecurityError, TemplateSyntaxError) as exc:  # fields.py:915-927
            found.append("%s: %s injector %s uses an undefined field or bad template (%s)" % (where, section, key, exc))

    def walk(key, node):  # fields.py:930-939
        if isinstance(node, dict):
            for k, v in node.items():
                render("extra_vars", key or "a key", k)
                walk(k if key is None else "%s.%s" % (key, k), v)
        elif isinstance(node, list):
            for i, x in enumerate(node):
                walk("%s[%d]" % (key, i), x)
        else:
            render("extra_vars", key, node)

    for section in ("file", "env"):
        for key, tmpl in injectors.get(section, {}).items():
            if isinstance(tmpl, str):
                render(section, key, tmpl)
    walk(None, injectors.get("extra_vars", {}))
    return found


# ------------------------------------------------------------------------------------------------ inventory source


def inventory_source_findings(src, project_dir, where="inventory-source.json"):
    """awx/api/serializers.py:2349 InventorySourceOptionsSerializer, :2402 InventorySourceSerializer and the model
    awx/main/models/inventory.py:915 InventorySourceOptions."""
    found = []
    if set(src) - INVENTORY_SOURCE_FIELDS:
        found.append("%s: not a field of an inventory source: %s" % (where, sorted(set(src) - INVENTORY_SOURCE_FIELDS)))
    if not src.get("inventory"):  # serializers.py:2415 extra_kwargs inventory required
        found.append("%s: inventory is required" % where)
    source = src.get("source")
    if source not in INVENTORY_SOURCES:  # models/inventory.py:922
        found.append("%s: source %r is not one of %s" % (where, source, ", ".join(INVENTORY_SOURCES)))
    if source == "scm":
        if not src.get("source_project"):  # serializers.py:2525-2527
            found.append("%s: source_project is required for scm type sources" % where)
        path = src.get("source_path") or ""
        # An scm source reads source_path from the project's checkout (the UI's field is creatable: any path); the
        # inventory update fails when it is not there.
        if not path or not (Path(project_dir) / path).is_file():
            found.append("%s: source_path %r is not a file of the project (examples/awx/project)" % (where, path))
    else:
        for field in ("source_project", "source_path", "scm_branch"):  # serializers.py:2530-2533, models/inventory.py:1266-1268
            if src.get(field):
                found.append("%s: cannot set %s if not SCM type" % (where, field))
    if src.get("verbosity", 1) not in (0, 1, 2):  # models/inventory.py:940 INVENTORY_UPDATE_VERBOSITY_CHOICES
        found.append("%s: verbosity must be 0, 1 or 2" % where)
    for field in ("update_cache_timeout",):  # models/inventory.py:1132 PositiveIntegerField
        if field in src and (not isinstance(src[field], int) or isinstance(src[field], bool) or src[field] < 0):
            found.append("%s: %s must be a non-negative integer" % (where, field))
    if "timeout" in src and (not isinstance(src["timeout"], int) or isinstance(src["timeout"], bool)):  # models/inventory.py:1016 IntegerField
        found.append("%s: timeout must be an integer" % where)
    for field in ("overwrite", "overwrite_vars", "update_on_launch"):  # models/inventory.py:1008,1012,1128 BooleanField
        if field in src and not isinstance(src[field], bool):
            found.append("%s: %s must be a boolean" % (where, field))
    if src.get("credential") and isinstance(src["credential"], list):  # serializers.py:2350 one (deprecated) credential field
        found.append("%s: credential is one credential" % where)
    return found


# ------------------------------------------------------------------------------------------------ job template


def project_playbooks(project_dir):
    """awx/main/models/projects.py:205 Project.playbooks via awx/main/utils/ansible.py:42 could_be_playbook."""
    found = []
    for path in sorted(Path(project_dir).rglob("*")):
        if path.is_file() and path.suffix in (".yml", ".yaml"):
            if any(VALID_PLAYBOOK_RE.match(line) for line in path.read_text(errors="ignore").splitlines()):
                found.append(str(path.relative_to(project_dir)))
    return found


def job_template_findings(jt, project_dir, where="job-template.json"):
    """awx/api/serializers.py:3230 JobOptionsSerializer, :3360 JobTemplateSerializer and the model fields of
    awx/main/models/jobs.py:75 JobOptions and :195 JobTemplate."""
    found = []
    if set(jt) - JOB_TEMPLATE_FIELDS:
        found.append("%s: not an option of a job template: %s" % (where, sorted(set(jt) - JOB_TEMPLATE_FIELDS)))
    if not jt.get("project"):  # serializers.py:3442-3443
        found.append("%s: Job Templates must have a project assigned" % where)
    if not jt.get("inventory") and not jt.get("ask_inventory_on_launch"):  # serializers.py:3444-3445
        found.append("%s: inventory: set one or ask for it on launch" % where)
    playbook = jt.get("playbook")
    if not playbook:  # serializers.py:3301-3302
        found.append("%s: playbook: must select playbook for project" % where)
    elif playbook not in project_playbooks(project_dir):  # serializers.py:3295-3300
        found.append("%s: playbook %r not found for project (examples/awx/project)" % (where, playbook))
    if jt.get("job_type", "run") not in ("run", "check"):  # models/jobs.py:212 NEW_JOB_TYPE_CHOICES (models/base.py:49)
        found.append("%s: job_type must be run or check" % where)
    if jt.get("verbosity", 0) not in range(6):  # models/jobs.py:115, models/base.py:66 VERBOSITY_CHOICES
        found.append("%s: verbosity must be 0 to 5" % where)
    for field, low in (("forks", 0), ("job_slice_count", 0)):  # models/jobs.py:107, :257 PositiveIntegerField
        value = jt.get(field, low)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            found.append("%s: %s must be a non-negative integer" % (where, field))
    if "timeout" in jt and (not isinstance(jt["timeout"], int) or isinstance(jt["timeout"], bool)):  # models/jobs.py:152 IntegerField
        found.append("%s: timeout must be an integer" % where)
    for field, value in jt.items():
        if (field.startswith("ask_") or field in ("survey_enabled", "become_enabled", "diff_mode", "allow_simultaneous")) and not isinstance(value, bool):
            found.append("%s: %s must be a boolean" % (where, field))
    extra = jt.get("extra_vars", {})
    if isinstance(extra, str):  # serializers.py:3449 vars_validate_or_raise: a mapping, as JSON or YAML text
        try:
            extra = yaml.safe_load(extra) or {}
        except yaml.YAMLError:
            extra = None
    if not isinstance(extra, dict):
        found.append("%s: extra_vars must be a mapping" % where)
    return found


# ------------------------------------------------------------------------------------------------ the docs


# Claims the docs must not make, each with what AWX does instead.
DOC_CONTRADICTIONS = (
    (
        r"(?i)(integer|number)[^|\n]*(a string such as|sent as strings)|strings for numbers|survey answers as strings|every answer a string",
        "an integer answer must be an integer: AWX refuses a string with a 400 (awx/main/models/mixins.py:240)",
    ),
    (
        r"(?i)newline-separated string \(API|API (launch|clients?)[^|.\n]*newline-separated|multiselect as a newline-separated string",
        "a multiselect answer must be a list (awx/main/models/mixins.py:280)",
    ),
    (
        r"(?i)\b0\b[^|\n]{0,20}\bno limit\b",
        "a job template's timeout 0 is the global default job timeout, -1 none (awx/main/tasks/jobs.py:341-350)",
    ),
    (r"container_volume_mount", "no such setting: 'Paths to expose to isolated jobs' or a container group's pod spec (awx/main/conf.py:277)"),
    (
        r"\$AWX_HOST|\$AWX_USER|\$AWX_PASSWORD",
        "nothing sets these; the awx CLI reads CONTROLLER_HOST, CONTROLLER_USERNAME, CONTROLLER_PASSWORD (awxkit/awxkit/cli/format.py:30-49)",
    ),
    (
        r"(?i)merges? (all|the) (clusters|slices)[^.\n]*(inside|in) AWX|AWX merges the slices",
        "AWX merges a sliced job's artifacts by a top-level update: the next node sees the last-finished slice's "
        "burnin_results (awx/main/models/workflow.py:739-753)",
    ),
)
# Facts the docs must state (a user cannot find them from the examples alone).
DOC_REQUIREMENTS = (
    (r"(?i)every required question", "an API or CLI launch must answer every required question (awx/api/serializers.py:4708, mixins.py:218)"),
    (r"`-1`[^.|\n]{0,30}no timeout", "timeout -1 is no timeout, 0 the global default (awx/main/tasks/jobs.py:341-350)"),
    (r"Paths to expose to isolated jobs", "AWX's setting for host paths in jobs (awx/main/conf.py:277 AWX_ISOLATION_SHOW_PATHS)"),
    (r"(?i)last[- ]finished slice", "a workflow's next node sees the last-finished slice's artifacts (awx/main/models/workflow.py:739-753)"),
    (r"CONTROLLER_HOST", "the awx CLI's server setting (awxkit/awxkit/cli/format.py:30)"),
)


def docs_findings(texts):
    """texts: {relative path: markdown}. A `-f jq` must say it needs the optional jq package
    (awxkit/awxkit/cli/format.py:135-140, awxkit/setup.py:96 extras 'formatting')."""
    found = []
    for name, text in sorted(texts.items()):
        for pattern, fact in DOC_CONTRADICTIONS:
            for match in re.finditer(pattern, text):
                found.append("%s: %r contradicts AWX: %s" % (name, match.group(0), fact))
        for match in re.finditer(r"-f jq\b", text):
            around = text[max(0, match.start() - 300) : match.end() + 300]
            if not re.search(r"pip install jq|jq Python package|awxkit\[formatting\]", around):
                found.append("%s: '-f jq' needs the optional jq Python package (awxkit/awxkit/cli/format.py:135-140); say so" % name)
    joined = "\n".join(texts.values())
    for pattern, fact in DOC_REQUIREMENTS:
        if not re.search(pattern, joined):
            found.append("docs: missing: %s" % fact)
    return found


# ------------------------------------------------------------------------------------------------ all of examples/awx


def all_findings(awx_dir, docs=None):
    awx_dir = Path(awx_dir)
    project = awx_dir / "project"

    def load(name):
        return json.loads((awx_dir / name).read_text())

    found = survey_findings(load("survey-spec.json"))
    found += credential_type_findings(load("credential-type.json"))
    found += inventory_source_findings(load("inventory-source.json"), project)
    found += job_template_findings(load("job-template.json"), project)
    if docs is not None:
        found += docs_findings(docs)
    return found


# ------------------------------------------------------------------------------------------------ the scenario guide

# awx CLI options that name another AWX object, and that object's resource (awxkit/awxkit/cli/options.py:27
# pk_or_name: a name is looked up in that resource).
REFERENCES = {
    "inventory": "inventory",
    "project": "projects",
    "source_project": "projects",
    "credential": "credentials",
    "credential_type": "credential_types",
    "execution_environment": "execution_environments",
    "organization": "organizations",
}
# Names an example file refers to, by field, and the resource each is.
FILE_REFERENCES = {
    "inventory": "inventory",
    "project": "projects",
    "source_project": "projects",
    "credential": "credentials",
    "credentials": "credentials",
    "execution_environment": "execution_environments",
}
SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
STEP = re.compile(r"^## (\d+)\. (.*)$", re.M)


def _awx_calls(block):
    """Each `awx <resource> <action> ...` of a shell block: (resource, action, positional args, {option: value})."""
    text = block.replace("\\\n", " ")
    calls = []
    for line in text.splitlines():
        for match in re.finditer(r"(?:^|\$\(|\s)awx\s+(?=[a-z_]+\s+[a-z_]+)", line):
            lexer = shlex.shlex(line[match.end() :], posix=True, punctuation_chars="|;&()")
            lexer.whitespace_split = True
            tokens = []
            for token in lexer:
                if token and set(token) <= set("|;&()"):
                    break
                tokens.append(token)
            resource, action, rest = tokens[0], tokens[1], tokens[2:]
            args, options, i = [], {}, 0
            while i < len(rest):
                if rest[i].startswith("--"):
                    options[rest[i][2:]] = rest[i + 1] if i + 1 < len(rest) and not rest[i + 1].startswith("-") else True
                    i += 2 if options[rest[i][2:]] is not True else 1
                elif rest[i].startswith("-"):
                    i += 2
                else:
                    args.append(rest[i])
                    i += 1
            calls.append((resource, action, args, options))
    return calls


def guide_findings(guide_text, repo, where="docs/scenarios/awx.md"):
    """Follow the guide's steps in order: every AWX object a step names must have been created by then (or in that
    step, before the use), every playbook and inventory file it names must be in the example project, every file under
    examples/ must exist, and every name an example file it loads refers to must exist by the end of that step."""
    repo = Path(repo)
    project = repo / "examples" / "awx" / "project"
    playbooks = project_playbooks(project)
    created = {("organizations", "Default")}  # AWX's own
    made = set()  # directories the guide makes itself
    found = []
    steps = list(STEP.finditer(guide_text))
    if not steps:
        return ["%s: no numbered steps (## N. title)" % where]
    for index, step in enumerate(steps):
        end = steps[index + 1].start() if index + 1 < len(steps) else len(guide_text)
        body = guide_text[step.end() : end]
        at = "%s step %s (%s)" % (where, step.group(1), step.group(2))
        made.update(re.findall(r"mkdir -p (\S+)", body))
        for path in sorted(set(re.findall(r"\bexamples/[\w./-]*\w", body))):
            if not (repo / path).exists() and not any(path == m or path.startswith(m + "/") for m in made):
                found.append("%s: %s does not exist" % (at, path))
        for block in SH_BLOCK.findall(body):
            for resource, action, args, options in _awx_calls(block):
                for option, value in options.items():
                    if option in REFERENCES and value is not True and (REFERENCES[option], value) not in created:
                        found.append("%s: awx %s %s uses %s %r before the guide creates it" % (at, resource, action, option, value))
                if action == "create" and options.get("name") not in (None, True):
                    created.add((resource, options["name"]))
                elif args and (resource, args[-1]) not in created:
                    found.append("%s: awx %s %s uses %r before the guide creates it" % (at, resource, action, args[-1]))
                if "playbook" in options and options["playbook"] not in playbooks:
                    found.append("%s: playbook %r is not a playbook of the example project (examples/awx/project)" % (at, options["playbook"]))
                if "source_path" in options and not (project / str(options["source_path"])).is_file():
                    found.append("%s: source_path %r is not a file of the example project" % (at, options["source_path"]))
        for name in sorted(set(re.findall(r"\bexamples/awx/([\w-]+\.json)", body))):
            path = repo / "examples" / "awx" / name
            doc = json.loads(path.read_text()) if path.is_file() else {}
            for field, resource in FILE_REFERENCES.items():
                values = doc.get(field) or []
                for value in values if isinstance(values, list) else [values]:
                    if (resource, value) not in created:
                        found.append("%s: examples/awx/%s's %s %r is not created by this step" % (at, name, field, value))
        for playbook in sorted(set(re.findall(r"`([\w-]+\.yml)`", body))):
            if re.search(r"(?i)playbook", body) and playbook not in playbooks and not (project / playbook).is_file():
                found.append("%s: %s is not in the example project (examples/awx/project)" % (at, playbook))
    return found
