# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""examples/awx/ and its docs pass AWX 24.6.1's own rules (tests/packaging/awx_rules.py, each rule with its AWX source
line): the survey endpoint and SurveyJobTemplateMixin, the credential-type, inventory-source and job-template
serializers, the UI's survey editor, and the launch paths' defaults. The scenario guide's steps, followed in order,
name only objects and files that exist by then.

Each finding the examples once had is planted back into a copy (PLANTED) and the rules must name it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shutil

import pytest

import awx_rules
from conftest import REPO

AWX = REPO / "examples" / "awx"
DOCS = ("docs/awx.md", "docs/scenarios/awx.md", "docs/burnin-role.md")
GUIDE = "docs/scenarios/awx.md"


def docs_of(root):
    return dict((name, (root / name).read_text()) for name in DOCS)


def findings_of(root):
    return awx_rules.all_findings(root / "examples" / "awx", docs_of(root)) + awx_rules.guide_findings((root / GUIDE).read_text(), root)


def test_the_examples_and_their_docs_pass_awxs_rules():
    assert findings_of(REPO) == []


# ------------------------------------------------------------------------------------------------ the rules themselves

SURVEY = json.loads((AWX / "survey-spec.json").read_text())
QUESTIONS = dict((q["variable"], q) for q in SURVEY["spec"])
REQUIRED = dict((v, q["default"]) for v, q in QUESTIONS.items() if q["required"])


@pytest.mark.parametrize(
    "answers, refused",
    [
        (dict(REQUIRED), None),
        (dict(REQUIRED, burnin_nodes="3"), "burnin_nodes"),  # an integer answer must be an integer
        (dict(REQUIRED, burnin_nodes=True), "burnin_nodes"),
        (dict(REQUIRED, burnin_nodes=0), "burnin_nodes"),  # below min
        (dict(REQUIRED, burnin_report_formats="json\nhtml"), "burnin_report_formats"),  # a multiselect answer is a list
        (dict(REQUIRED, burnin_report_formats=["json", "xml"]), "burnin_report_formats"),
        (dict(REQUIRED, burnin_report_formats=["json", "html"]), None),
        (dict(REQUIRED, burnin_framework="slurm"), "burnin_framework"),
        (dict(REQUIRED, burnin_namespace=""), "burnin_namespace"),  # min length 1
        (dict((k, v) for k, v in REQUIRED.items() if k != "burnin_nodes"), "burnin_nodes"),  # a default does not answer
    ],
)
def test_an_api_launch_is_checked_as_awx_checks_it(answers, refused):
    errors = awx_rules.launch_errors(SURVEY, answers)
    if refused is None:
        assert errors == []
    else:
        assert errors and all(refused in e for e in errors), errors


def test_a_workflow_node_may_leave_required_questions_out():
    assert awx_rules.launch_errors(SURVEY, {}, path="workflow_node") == []
    assert awx_rules.launch_errors(SURVEY, {}) != []


def test_a_multiselect_default_reaches_only_ui_launches():
    question = {"variable": "v", "type": "multiselect", "required": False, "choices": ["a", "b"], "default": "a\nb"}
    assert awx_rules.sent_when_unanswered(question, "ui") == {"v": ["a", "b"]}
    assert awx_rules.sent_when_unanswered(question, "api") == {}
    integer = {"variable": "n", "type": "integer", "required": True, "min": 1, "max": 4, "default": 2}
    assert awx_rules.sent_when_unanswered(integer, "ui") == awx_rules.sent_when_unanswered(integer, "api") == {"n": 2}


def test_every_unanswered_question_sends_the_same_on_every_launch_path():
    for question in SURVEY["spec"]:
        assert awx_rules.sent_when_unanswered(question, "ui") == awx_rules.sent_when_unanswered(question, "api"), question["variable"]


# ------------------------------------------------------------------------------------------------ findings planted back


def _survey(edit):
    def plant(root):
        path = root / "examples" / "awx" / "survey-spec.json"
        doc = json.loads(path.read_text())
        edit(dict((q["variable"], q) for q in doc["spec"]))
        path.write_text(json.dumps(doc))

    return plant


def _json(name, edit):
    def plant(root):
        path = root / "examples" / "awx" / name
        doc = json.loads(path.read_text())
        edit(doc)
        path.write_text(json.dumps(doc))

    return plant


def _doc(names, old=None, new=""):
    """Replace `old` by `new` in the docs named (old None: append new)."""

    def plant(root):
        planted = 0
        for name in (names,) if isinstance(names, str) else names:
            path = root / name
            text = path.read_text()
            if old is None:
                text += "\n" + new + "\n"
            elif old in text:
                text = text.replace(old, new)
            else:
                continue
            path.write_text(text)
            planted += 1
        assert planted, old

    return plant


def _move_credential_step_after_the_inventory(root):
    path = root / GUIDE
    text = path.read_text()
    start, middle, end = text.index("## 3. One credential"), text.index("## 4. Project and inventory"), text.index("## 5. Job template")
    credential, inventory = text[start:middle], text[middle:end]
    path.write_text(text[:start] + inventory.replace("## 4.", "## 3.") + credential.replace("## 3.", "## 4.") + text[end:])


def _remove(relative):
    def plant(root):
        (root / relative).unlink()

    return plant


def _setdel(mapping, key):
    mapping.pop(key)


PLANTED = {
    # the UI's survey editor splits `default`: two multiple-choice questions had none
    "framework-without-default": (_survey(lambda q: _setdel(q["burnin_framework"], "default")), "burnin_framework: a multiplechoice question needs"),
    "mnnvl-without-default": (_survey(lambda q: _setdel(q["burnin_enable_mnnvl"], "default")), "burnin_enable_mnnvl: a multiplechoice question needs"),
    # a multiselect default reaches UI launches only
    "multiselect-default": (_survey(lambda q: q["burnin_report_formats"].update(default="json\nhtml")), "burnin_report_formats: unanswered, a UI launch sends"),
    "multiselect-default-as-list": (_survey(lambda q: q["burnin_report_formats"].update(default=["json"])), "burnin_report_formats: default"),
    "integer-default-as-string": (_survey(lambda q: q["burnin_nodes"].update(default="2")), "burnin_nodes: default '2' is not a integer"),
    "default-not-a-choice": (_survey(lambda q: q["burnin_workload"].update(default="nccl-alltoall")), "burnin_workload: default choice"),
    "duplicate-variable": (_survey(lambda q: q["burnin_image"].update(variable="burnin_workload")), "burnin_workload: 'variable' duplicated"),
    "unknown-question-type": (_survey(lambda q: q["burnin_image"].update(type="string")), "burnin_image: type 'string'"),
    # credential type, inventory source, job template
    "credential-kind": (_json("credential-type.json", lambda d: d.update(kind="kubernetes")), "kind must be 'cloud' or 'net'"),
    "credential-undefined-field": (
        _json("credential-type.json", lambda d: d["injectors"]["env"].update(K8S_AUTH_CONTEXT="{{ context }}")),
        "env injector K8S_AUTH_CONTEXT uses an undefined field",
    ),
    "credential-blocked-env": (
        _json("credential-type.json", lambda d: d["injectors"]["env"].update(ANSIBLE_CONFIG="{{ tower.filename.kubeconfig }}")),
        "ANSIBLE_CONFIG is not allowed",
    ),
    "credential-unknown-file": (
        _json("credential-type.json", lambda d: d["injectors"]["env"].update(KUBECONFIG="{{ tower.filename.config }}")),
        "env injector KUBECONFIG uses an undefined field",
    ),
    "inventory-source-missing-file": (
        _json("inventory-source.json", lambda d: d.update(source_path="inventory/hosts.yml")),
        "source_path 'inventory/hosts.yml'",
    ),
    "inventory-source-verbosity": (_json("inventory-source.json", lambda d: d.update(verbosity=3)), "verbosity must be 0, 1 or 2"),
    "job-template-playbook": (_json("job-template.json", lambda d: d.update(playbook="site.yml")), "playbook 'site.yml' not found"),
    "job-template-job-type": (_json("job-template.json", lambda d: d.update(job_type="scan")), "job_type must be run or check"),
    "job-template-field": (_json("job-template.json", lambda d: d.update(container_volume_mount="/reports")), "container_volume_mount"),
    # the docs' contradictions of AWX
    "docs-integer-as-string": (
        _doc("docs/awx.md", None, '| integer (`burnin_nodes`) | a number, or a string such as `"3"` from API clients | int | yes |'),
        "mixins.py:240",
    ),
    "docs-multiselect-newlines": (
        _doc("docs/awx.md", None, "| multiselect | a list (launch form); one newline-separated string (API launch with the default, older AWX) |"),
        "mixins.py:280",
    ),
    "docs-timeout-zero": (_doc("docs/awx.md", None, "| `timeout` | - | Must exceed `burnin_timeout` (the example's 0 is no limit). |"), "jobs.py:341-350"),
    "docs-container-volume-mount": (_doc("docs/awx.md", None, "mount a volume there (container group `container_volume_mount`)"), "conf.py:277"),
    "docs-awx-host": (_doc(GUIDE, None, 'curl -u "$AWX_USER:$AWX_PASSWORD" "$AWX_HOST/api/v2/"'), "CONTROLLER_HOST, CONTROLLER_USERNAME"),
    "docs-cli-env-unsaid": (_doc(GUIDE, "CONTROLLER_HOST", "AWX_SERVER"), "missing: the awx CLI's server setting"),
    "docs-f-jq": (_doc(GUIDE, "(that format needs the optional jq Python package, `pip install jq`)", ""), "'-f jq' needs the optional jq"),
    "docs-f-jq-used": (
        _doc(GUIDE, None, '```sh\nJT=$(awx job_templates get "GPU fleet burn-in" -f jq --filter .id)\n```'),
        "'-f jq' needs the optional jq",
    ),
    "docs-slices-merged": (_doc(DOCS, "last-finished slice", "merged slices"), "missing: a workflow's next node sees the last-finished slice"),
    "docs-required-questions-unsaid": (_doc(DOCS, "every required question", "the questions"), "missing: an API or CLI launch must answer every required"),
    "docs-timeout-minus-one-unsaid": (_doc("docs/awx.md", "`-1`", "`never`"), "missing: timeout -1"),
    "docs-isolated-paths-unsaid": (_doc(DOCS[:1], "Paths to expose to isolated jobs", "a volume"), "missing: AWX's setting for host paths"),
    # the guide: a credential two steps late, a clean-up playbook the project lacks
    "guide-credential-after-inventory-source": (
        _move_credential_step_after_the_inventory,
        "uses credential 'GPU fleet kubeconfig' before the guide creates it",
    ),
    "guide-cleanup-playbook-missing": (_remove("examples/awx/project/cleanup.yml"), "playbook 'cleanup.yml' is not a playbook of the example project"),
    "guide-inventory-file-missing": (_remove("examples/awx/project/clusters.yml"), "source_path 'clusters.yml'"),
}


@pytest.fixture
def copy(tmp_path):
    """The examples and the docs the rules read, in a tree shaped like the repository."""
    root = tmp_path / "repo"
    shutil.copytree(str(AWX), str(root / "examples" / "awx"))
    for name in DOCS:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(REPO / name), str(root / name))
    # the guide names files outside examples/awx; they are as in the repository
    for path in ("examples/execution-environment",):
        shutil.copytree(str(REPO / path), str(root / path))
    assert findings_of(root) == []
    return root


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_each_finding_planted_back_is_named(copy, name):
    plant, expected = PLANTED[name]
    plant(copy)
    found = findings_of(copy)
    assert any(expected in f for f in found), "%s planted back, the rules say:\n%s" % (name, "\n".join(found))
