# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""examples/awx/: the survey, job template and credential type are valid AWX objects that fit the role, and the
answers as AWX sends them pass the role's argument spec and render the right objects.

AWX sends survey answers as extra vars, checked against the survey first (tests/packaging/awx_rules.py restates AWX's
rules): an integer question's answer is an integer, a multiple choice (our booleans) the string "true"/"false", a
multiselect a list. The role also takes the looser forms other sources give (numbers as strings from -e or an
inventory, a multiselect as names separated by new lines or commas): STRINGS below. The render playbook (no cluster contacted) runs the
role's own argument-spec validation (entry point `render`) and shows what the values became; the other variables are
validated against the entry point `main` with ansible.builtin.validate_argument_spec, as the role does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import socket
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from jinja2 import Environment, meta

import awx_rules
from conftest import REPO, run, run_json, run_streams

AWX = REPO / "examples" / "awx"
SPEC_FILE = REPO / "roles" / "burnin" / "meta" / "argument_specs.yml"
INVENTORY = REPO / "examples" / "inventory" / "hosts.yml"
ARGSPEC_PLAYBOOK = REPO / "tests" / "packaging" / "playbooks" / "survey_argspec.yml"

SURVEY_TYPES = ("text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect")
# Which argument-spec types can take each survey type's answer.
COMPATIBLE = {
    "text": ("str", "path", "raw", "list"),
    "textarea": ("str", "raw", "list", "dict"),
    "password": ("str", "raw"),
    "integer": ("int", "raw"),
    "float": ("float", "raw"),
    "multiplechoice": ("str", "bool", "raw"),
    "multiselect": ("list", "raw"),
}
# Options of awx.awx.job_template that a job template file may set.
JOB_TEMPLATE_FIELDS = {
    "name",
    "description",
    "job_type",
    "inventory",
    "project",
    "playbook",
    "scm_branch",
    "credentials",
    "credential",
    "execution_environment",
    "forks",
    "limit",
    "verbosity",
    "extra_vars",
    "job_tags",
    "skip_tags",
    "start_at_task",
    "timeout",
    "use_fact_cache",
    "host_config_key",
    "diff_mode",
    "allow_simultaneous",
    "job_slice_count",
    "webhook_service",
    "webhook_credential",
    "labels",
    "instance_groups",
    "prevent_instance_group_fallback",
    "survey_enabled",
    "survey_spec",
    "become_enabled",
    "ask_scm_branch_on_launch",
    "ask_diff_mode_on_launch",
    "ask_variables_on_launch",
    "ask_limit_on_launch",
    "ask_tags_on_launch",
    "ask_skip_tags_on_launch",
    "ask_job_type_on_launch",
    "ask_verbosity_on_launch",
    "ask_inventory_on_launch",
    "ask_credential_on_launch",
    "ask_execution_environment_on_launch",
    "ask_labels_on_launch",
    "ask_forks_on_launch",
    "ask_job_slice_count_on_launch",
    "ask_timeout_on_launch",
    "ask_instance_groups_on_launch",
}


def load(name):
    return json.loads((AWX / name).read_text())


def entry_point(name):
    return yaml.safe_load(SPEC_FILE.read_text())["argument_specs"][name]["options"]


SURVEY = load("survey-spec.json")["spec"]
QUESTIONS = dict((q["variable"], q) for q in SURVEY)


def spec_option(variable):
    options = entry_point("main")
    if variable not in options:
        pytest.fail("survey variable %s is not an option of the role's entry point main" % variable)
    return options[variable]


# ------------------------------------------------------------------------------------------------ survey spec


def test_survey_spec_is_a_valid_awx_survey():
    doc = load("survey-spec.json")
    assert set(doc) == {"name", "description", "spec"} and doc["name"] and doc["spec"]
    assert len(QUESTIONS) == len(SURVEY), "a variable is asked twice"
    for q in SURVEY:
        where = q.get("variable")
        assert {"question_name", "variable", "type", "required"} <= set(q), where
        assert re.match(r"^[a-zA-Z_][a-zA-Z0-9_]*$", q["variable"]), where
        assert q["type"] in SURVEY_TYPES, where
        assert isinstance(q["required"], bool), where
        if q["type"] in ("text", "textarea", "password"):
            assert isinstance(q["min"], int) and isinstance(q["max"], int) and 0 <= q["min"] <= q["max"], where
            if "default" in q:
                assert isinstance(q["default"], str) and len(q["default"]) <= q["max"], where
                assert q["default"] == "" or len(q["default"]) >= q["min"], where
        elif q["type"] in ("integer", "float"):
            kind = int if q["type"] == "integer" else (int, float)
            assert isinstance(q["min"], kind) and isinstance(q["max"], kind) and q["min"] <= q["max"], where
            if "default" in q:
                assert isinstance(q["default"], kind) and q["min"] <= q["default"] <= q["max"], where
        else:
            choices = q["choices"]
            assert isinstance(choices, list) and choices and all(isinstance(c, str) and c for c in choices), where
            assert len(set(choices)) == len(choices), where
            if q.get("default"):
                picked = q["default"].split("\n") if q["type"] == "multiselect" else [q["default"]]
                assert set(picked) <= set(choices), where
        if q["required"] and q["type"] not in ("multiselect",):
            assert "default" in q, "%s: a required question without a default blocks launches with defaults" % where


@pytest.mark.parametrize("variable", sorted(QUESTIONS))
def test_survey_variable_is_a_role_option_of_a_compatible_type(variable):
    q, option = QUESTIONS[variable], spec_option(variable)
    kind = option.get("type", "str")
    assert kind in COMPATIBLE[q["type"]], "%s: survey type %s cannot feed an option of type %s" % (variable, q["type"], kind)
    if q["type"] == "multiplechoice" and kind == "bool":
        assert set(q["choices"]) <= {"true", "false"}
    elif q["type"] in ("multiplechoice", "multiselect") and option.get("choices"):
        assert set(q["choices"]) <= set(str(c) for c in option["choices"]), variable
    if q["type"] == "integer" and "default" in option:
        assert q["min"] <= option["default"] <= q["max"], "%s: the role's default is outside the survey's range" % variable


# ------------------------------------------------------------------------------------------------ job template


def test_job_template_runs_the_collections_playbook_with_the_survey():
    jt = load("job-template.json")
    assert set(jt) <= JOB_TEMPLATE_FIELDS, sorted(set(jt) - JOB_TEMPLATE_FIELDS)
    assert jt["job_type"] in ("run", "check") and jt["survey_enabled"] is True
    assert isinstance(jt["forks"], int) and jt["forks"] >= 1
    # One job, one fleet summary and one artifact set: no slicing (docs/awx.md).
    assert jt["job_slice_count"] == 1
    assert jt["ask_limit_on_launch"] and jt["ask_job_type_on_launch"]
    options = entry_point("main")
    assert set(jt["extra_vars"]) <= set(options)
    assert not set(jt["extra_vars"]) & set(QUESTIONS), "a survey answer would override these anyway"
    playbook = yaml.safe_load((AWX / "project" / jt["playbook"]).read_text())
    imported = [play["ansible.builtin.import_playbook"] for play in playbook]
    assert imported == ["gpufleet.burnin.burnin"] and (REPO / "playbooks" / "burnin.yml").is_file()


# ------------------------------------------------------------------------------------------------ credential type


def referenced(template):
    env = Environment()
    return meta.find_undeclared_variables(env.parse(template))


def test_credential_type_injectors_reference_its_inputs():
    ct = load("credential-type.json")
    assert ct["kind"] == "cloud"
    fields = ct["inputs"]["fields"]
    ids = [f["id"] for f in fields]
    assert len(ids) == len(set(ids)) and set(ct["inputs"]["required"]) <= set(ids)
    assert all(f["type"] in ("string", "boolean") for f in fields)
    kubeconfig = [f for f in fields if f["id"] == "kubeconfig"][0]
    assert kubeconfig["secret"] is True and kubeconfig["multiline"] is True
    injectors = ct["injectors"]
    assert set(injectors) <= {"file", "env", "extra_vars"}
    files = [key.split(".", 1)[1] for key in injectors["file"]]
    assert all(key.startswith("template.") for key in injectors["file"])
    for section in injectors.values():
        for key, template in section.items():
            names = referenced(template)
            assert names <= set(ids) | {"tower"}, "%s references %s" % (key, names - set(ids))
            for ref in re.findall(r"tower\.filename\.(\w+)", template):
                assert ref in files, "%s: tower.filename.%s has no file template.%s" % (key, ref, ref)
    assert injectors["env"]["K8S_AUTH_KUBECONFIG"] == "{{ tower.filename.kubeconfig }}"
    assert set(injectors["extra_vars"]) <= set(entry_point("main"))


def test_injected_kubeconfig_reaches_every_inventory_context(tmp_path):
    """Render the injectors as AWX does; kubernetes' client loads each host's burnin_context from the written file."""
    hostvars = run_json(["ansible-inventory", "-i", str(INVENTORY), "--list"])["_meta"]["hostvars"]
    contexts = dict((host, v["burnin_context"]) for host, v in hostvars.items())
    assert contexts and all(contexts.values())
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [], "current-context": sorted(contexts.values())[0]}
    for index, ctx in enumerate(sorted(set(contexts.values()))):
        kubeconfig["clusters"].append({"name": ctx, "cluster": {"server": "https://127.0.0.1:%d" % (6443 + index)}})
        kubeconfig["users"].append({"name": ctx, "user": {"token": "t%d" % index}})
        kubeconfig["contexts"].append({"name": ctx, "context": {"cluster": ctx, "user": ctx}})
    ct = load("credential-type.json")
    env = Environment()
    path = tmp_path / "kubeconfig-injected"
    tower = {"filename": {"kubeconfig": str(path)}}
    inputs = {"kubeconfig": yaml.safe_dump(kubeconfig)}
    path.write_text(env.from_string(ct["injectors"]["file"]["template.kubeconfig"]).render(inputs))
    injected_env = dict((k, env.from_string(v).render(inputs, tower=tower)) for k, v in ct["injectors"]["env"].items())
    assert injected_env["K8S_AUTH_KUBECONFIG"] == str(path)
    script = (
        "import sys, kubernetes.config as c\n"
        "for host, ctx in [a.split('=', 1) for a in sys.argv[2:]]:\n"
        "    api = c.new_client_from_config(config_file=sys.argv[1], context=ctx)\n"
        "    print(host, api.configuration.host)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, injected_env["K8S_AUTH_KUBECONFIG"]] + ["%s=%s" % item for item in sorted(contexts.items())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout
    servers = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert set(servers) == set(contexts)
    ctx_names = sorted(set(contexts.values()))
    for host, ctx in contexts.items():
        assert servers[host] == "https://127.0.0.1:%d" % (6443 + ctx_names.index(ctx))


# ------------------------------------------------------------------------------------------------ answers as AWX sends them


def defaults_payload():
    """What AWX's launch form sends with every default (awx_rules.sent_when_unanswered: "" and [] are not sent)."""
    sent = {}
    for q in SURVEY:
        sent.update(awx_rules.sent_when_unanswered(q, "ui"))
    return sent


def validate(answers, tmp_path, name, entry="main"):
    path = tmp_path / ("%s.json" % name)
    path.write_text(json.dumps({"answers": answers}))
    proc = run(
        ["ansible-playbook", "-i", "localhost,", str(ARGSPEC_PLAYBOOK), "-e", "spec_file=%s" % SPEC_FILE, "-e", "entry_point=%s" % entry, "-e", "@%s" % path],
        cwd=str(tmp_path),
    )
    msg = re.findall(r'"msg": "((?:[^"\\]|\\.)*)"', proc.stdout)
    return proc.returncode, (msg[-1] if msg else proc.stdout[-2000:])


def test_survey_defaults_pass_the_argument_spec(tmp_path):
    rc, msg = validate(defaults_payload(), tmp_path, "defaults")
    assert rc == 0, msg


STRINGS = {  # everything a string, as -e key=value and inventories give them (AWX itself refuses "3" for an integer)
    "burnin_nodes": "3",
    "burnin_timeout": "600",
    "burnin_enable_mnnvl": "true",
    "burnin_fail_on_error": "false",
    "burnin_framework": "torch",
    "burnin_env": "NCCL_DEBUG=WARN\nGPUFLEET_MARK=awx",
    "burnin_image": "registry.example/nccl:1",
    "burnin_image_pull_secrets": "regcred,mirror",
    "burnin_run_id": "awx-strings",
    "burnin_namespace": "burnin-awx",
    "burnin_report_dir": "",
    "burnin_threshold_on_missing": "fail",
    "burnin_workload": "torch-smoke",
    "burnin_report_formats": "json,junit",
    "burnin_thresholds": '[{"platform": "aws", "gpu_architecture": "h100", "collective": "all_reduce", ' '"metric": "peak", "pass": 420, "warn": 380}]',
}
TYPED = {  # current AWX: integers as numbers, multiselect as a list
    "burnin_nodes": 4,
    "burnin_timeout": 900,
    "burnin_enable_mnnvl": "false",
    "burnin_fail_on_error": "true",
    "burnin_framework": "mpi",
    "burnin_env": "",
    "burnin_image": "",
    "burnin_image_pull_secrets": "",
    "burnin_run_id": "awx-typed",
    "burnin_namespace": "gpufleet-burnin",
    "burnin_report_dir": "",
    "burnin_workload": "nccl-all-reduce",
    "burnin_report_formats": ["json", "html"],
    "burnin_workload_params": '{"min_bytes": "8", "max_bytes": "1G"}',
    "burnin_thresholds": [{"platform": "aws", "gpu_architecture": "h100", "collective": "all_reduce", "metric": "peak", "pass": 420, "warn": 380}],
}


@pytest.mark.parametrize("name,answers", [("strings", STRINGS), ("typed", TYPED)])
def test_survey_answers_pass_the_main_argument_spec(name, answers, tmp_path):
    for variable in answers:
        spec_option(variable)
    rc, msg = validate(answers, tmp_path, name)
    assert rc == 0, msg


def test_a_refused_answer_names_the_variable(tmp_path):
    rc, msg = validate({"burnin_nodes": "three"}, tmp_path, "refused")
    assert rc != 0 and "burnin_nodes" in msg


def test_multiselect_as_a_newline_separated_string_passes_the_argument_spec(tmp_path):
    spec_option("burnin_report_formats")
    rc, msg = validate({"burnin_report_formats": "json\nhtml"}, tmp_path, "multiselect")
    assert rc == 0, msg


# ------------------------------------------------------------------------------------------------ rendered values

RENDERED = {
    "strings": STRINGS,
    "typed": TYPED,
    # a threshold record the role refuses: proves the JSON text is parsed and checked before any cluster
    "bad-thresholds": dict(TYPED, burnin_run_id="awx-bad", burnin_thresholds='[{"collective": "all_to_all"}]'),
    # an empty textarea answer (a question created with an empty default)
    "empty-thresholds": dict(TYPED, burnin_run_id="awx-empty", burnin_thresholds=""),
    # a multiselect as one newline-separated string, list variables as JSON text
    "newlines": dict(
        TYPED, burnin_run_id="awx-newlines", burnin_report_formats="json\nhtml", burnin_volumes='[{"name": "awx-scratch", "emptyDir": {}}]', burnin_overrides=""
    ),
    # a report format the role does not know, and a list variable that holds no mappings
    "bad-formats": dict(TYPED, burnin_run_id="awx-bad-formats", burnin_report_formats="json\nxml"),
    "bad-volumes": dict(TYPED, burnin_run_id="awx-bad-volumes", burnin_volumes='["scratch"]'),
}
HOST = "aws-use1-h100-a"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """render.yml with each answer set, all at once, every answer passed as AWX passes it (extra vars)."""
    work = tmp_path_factory.mktemp("awx-render")

    def one(name):
        answers = RENDERED[name]
        extra = work / ("%s.json" % name)
        extra.write_text(json.dumps(dict(answers, burnin_render_dir=str(work / name))))
        proc = run(["ansible-playbook", "-i", str(INVENTORY), str(REPO / "playbooks" / "render.yml"), "--limit", HOST, "-e", "@%s" % extra], cwd=str(work))
        return name, proc

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(pool.map(one, RENDERED))
    return work, results


def objects(work, name):
    docs = list(yaml.safe_load_all((work / name / HOST / "manifests.yaml").read_text()))
    return dict((d["kind"], d) for d in docs)


def runtime_env(runtime):
    found = {}
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        for container in job["template"]["spec"]["template"]["spec"]["containers"]:
            for item in container.get("env", []):
                found[item["name"]] = item.get("value")
    return found


def test_thresholds_text_is_checked_before_any_cluster(rendered):
    _work, results = rendered
    proc = results["bad-thresholds"]
    assert proc.returncode != 0 and "burnin_thresholds" in proc.stdout, proc.stdout[-3000:]


def test_newline_multiselect_and_json_lists_render(rendered):
    work, results = rendered
    proc = results["newlines"]
    assert proc.returncode == 0, proc.stdout[-3000:]
    runtime = objects(work, "newlines")["TrainingRuntime"]
    volumes = [
        v["name"] for job in runtime["spec"]["template"]["spec"]["replicatedJobs"] for v in job["template"]["spec"]["template"]["spec"].get("volumes", [])
    ]
    assert "awx-scratch" in volumes


@pytest.mark.parametrize("name, variable", [("bad-formats", "burnin_report_formats"), ("bad-volumes", "burnin_volumes")])
def test_bad_survey_values_name_the_variable(rendered, name, variable):
    _work, results = rendered
    proc = results[name]
    assert proc.returncode != 0 and variable in proc.stdout, proc.stdout[-3000:]
    assert "must be one of json, junit, html" in proc.stdout if name == "bad-formats" else "list of mappings" in proc.stdout


def test_empty_thresholds_text_renders(rendered):
    _work, results = rendered
    proc = results["empty-thresholds"]
    assert proc.returncode == 0, proc.stdout[-3000:]


@pytest.mark.parametrize("name", ["strings", "typed"])
def test_survey_answers_render(rendered, name):
    work, results = rendered
    proc = results[name]
    assert proc.returncode == 0, proc.stdout[-4000:]
    answers = RENDERED[name]
    objs = objects(work, name)
    trainjob, runtime = objs["TrainJob"], objs["TrainingRuntime"]
    assert trainjob["metadata"]["name"].endswith("-" + answers["burnin_run_id"])
    assert trainjob["metadata"]["namespace"] == answers["burnin_namespace"]
    assert trainjob["spec"]["trainer"]["numNodes"] == int(answers["burnin_nodes"])
    env = runtime_env(runtime)
    assert env.get("NCCL_MNNVL_ENABLE") == ("1" if answers["burnin_enable_mnnvl"] == "true" else "0")
    text = json.dumps(objs)
    if answers["burnin_env"]:
        assert env.get("NCCL_DEBUG") == "WARN" and env.get("GPUFLEET_MARK") == "awx"
    if answers["burnin_image"]:
        # burnin_image is the nccl-tests workloads' image; torch-smoke keeps its PyTorch image (argument_specs.yml).
        assert (answers["burnin_image"] in text) == answers["burnin_workload"].startswith("nccl-"), answers["burnin_workload"]
    for secret in [s for s in answers["burnin_image_pull_secrets"].split(",") if s]:
        assert '{"name": "%s"}' % secret in text
    plan = yaml.safe_load((work / name / HOST / "plan.yml").read_text())
    assert plan["framework"] in (answers["burnin_framework"], "")


def test_the_workload_choices_are_the_catalog():
    """A new workload is its template plus one catalogue entry: the argument spec's choices (every entry point) and the
    survey's must follow templates/workloads/, or the spec refuses it before the catalogue is asked."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.workload_catalog import available_workloads

    catalog = sorted(available_workloads())
    specs = yaml.safe_load(SPEC_FILE.read_text())["argument_specs"]
    for entry_point, spec in specs.items():
        option = spec["options"].get("burnin_workload")
        if option:
            assert sorted(option["choices"]) == catalog, entry_point
            assert option["default"] in catalog
    question = [q for q in SURVEY if q["variable"] == "burnin_workload"][0]
    assert sorted(question["choices"]) == catalog and question["default"] in catalog


# ------------------------------------------------------------------------------------------------ inventory source

# Options of awx.awx.inventory_source that an inventory source file may set.
INVENTORY_SOURCE_FIELDS = {
    "name",
    "description",
    "inventory",
    "source",
    "source_path",
    "source_project",
    "source_vars",
    "scm_branch",
    "credential",
    "execution_environment",
    "enabled_var",
    "enabled_value",
    "host_filter",
    "overwrite",
    "overwrite_vars",
    "custom_virtualenv",
    "timeout",
    "verbosity",
    "limit",
    "update_on_launch",
    "update_cache_timeout",
    "notification_templates_started",
    "notification_templates_success",
    "notification_templates_error",
}


def plugin_options():
    """The options gpufleet.burnin.clusters documents, its fragments' (constructed, inventory_cache) included."""
    return set(run_json(["ansible-doc", "-t", "inventory", "--json", "gpufleet.burnin.clusters"])["gpufleet.burnin.clusters"]["doc"]["options"])


def test_inventory_source_reads_the_projects_plugin_file_with_the_kubeconfig_credential():
    source = load("inventory-source.json")
    assert set(source) <= INVENTORY_SOURCE_FIELDS, set(source) - INVENTORY_SOURCE_FIELDS
    template = load("job-template.json")
    # The same inventory, project and credential the job template names; the file is in the project.
    assert source["inventory"] == template["inventory"] and source["source_project"] == template["project"]
    assert source["source"] == "scm" and source["credential"] in template["credentials"]
    path = AWX / "project" / source["source_path"]
    assert path.name.endswith(("clusters.yml", "clusters.yaml")), "the plugin reads only files named *clusters.yml"
    config = yaml.safe_load(path.read_text())
    assert config["plugin"] == "gpufleet.burnin.clusters"
    assert set(config) <= plugin_options()
    # The credential's env injector gives the inventory update its kubeconfig: the file names none.
    assert not config.get("kubeconfigs") and "K8S_AUTH_KUBECONFIG" in load("credential-type.json")["injectors"]["env"]


def test_inventory_source_file_lists_the_credentials_contexts(tmp_path):
    """ansible-inventory on the project's clusters.yml with the credential's K8S_AUTH_KUBECONFIG, as an AWX inventory
    update runs it: a host per context, with its context and no kubeconfig path (the job's credential gives it); the
    contexts point at a closed port, so each is in `unreachable` with its reason."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    contexts = ["prod-aws-h100", "prod-gcp-gb200"]
    kubeconfig = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": [], "contexts": [], "current-context": contexts[0]}
    for ctx in contexts:
        kubeconfig["clusters"].append({"name": ctx, "cluster": {"server": "https://127.0.0.1:%d" % closed}})
        kubeconfig["users"].append({"name": ctx, "user": {"token": "secret-token-%s" % ctx}})
        kubeconfig["contexts"].append({"name": ctx, "context": {"cluster": ctx, "user": ctx}})
    injected = tmp_path / "kubeconfig-injected"
    injected.write_text(yaml.safe_dump(kubeconfig))
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(str(AWX / "project" / "clusters.yml"), str(project / "clusters.yml"))
    env = dict(os.environ, K8S_AUTH_KUBECONFIG=str(injected))
    env.pop("KUBECONFIG", None)
    proc = run_streams(["ansible-inventory", "-i", str(project / "clusters.yml"), "--list"], env=env, cwd=str(tmp_path))
    # Names from the kubeconfig are marked unsafe (no templating), which --list prints as {"__ansible_unsafe": ...}.
    listed = json.loads(proc.stdout, object_hook=lambda value: value.get("__ansible_unsafe", value) if list(value) == ["__ansible_unsafe"] else value)
    hostvars = listed["_meta"]["hostvars"]
    assert sorted(hostvars) == contexts
    assert sorted(listed["unreachable"]["hosts"]) == contexts
    for ctx in contexts:
        assert hostvars[ctx]["burnin_context"] == ctx and "burnin_kubeconfig" not in hostvars[ctx]
        assert str(closed) in hostvars[ctx]["burnin_cluster_reason"]
    assert "secret-token" not in proc.stdout + proc.stderr
