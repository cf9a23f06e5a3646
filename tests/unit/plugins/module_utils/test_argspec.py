# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""validation/argspec.py against the documentation of each plugin (plugins/modules/<name>.py's DOCUMENTATION): every
option the spec has is documented with the same type, default, required, choices and elements, and every documented
option is in the spec. ansible-test's validate-modules checks the same in the sanity step; this is the unit suite's
check, so that `make mutate` (docs/mutation.md) sees a changed default or choice."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

import pytest

yaml = pytest.importorskip("yaml")

from ansible_collections.gpufleet.burnin.plugins.module_utils.validation import argspec  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import report_argument_spec  # noqa: E402

MODULES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(argspec.__file__))), "modules")

# plugin -> (its whole spec, the options its own documentation lists: the rest come from kubernetes.core's fragment)
SPECS = {
    "burnin_plan": (argspec.burnin_plan_spec, None),
    "burnin_write": (argspec.burnin_write_spec, None),
    "platform_overrides": (argspec.platform_overrides_spec, None),
    "training_runtime": (argspec.training_runtime_spec, None),
    "workload_plan": (argspec.workload_plan_spec, None),
    "burnin_report": (report_argument_spec, None),
    "k8s_apply": (argspec.k8s_apply_spec, argspec.K8S_APPLY_OWN),
    "trainjob_wait": (argspec.trainjob_wait_spec, argspec.TRAINJOB_WAIT_OWN),
    "trainjob_logs": (argspec.trainjob_logs_spec, argspec.TRAINJOB_LOGS_OWN),
    "burnin_cleanup": (argspec.burnin_cleanup_spec, argspec.BURNIN_CLEANUP_OWN),
    "burnin_remediate": (argspec.burnin_remediate_spec, argspec.BURNIN_REMEDIATE_OWN),
    "cluster_detect": (argspec.cluster_detect_spec, argspec.CLUSTER_DETECT_OWN),
    "burnin_isolate": (argspec.burnin_isolate_spec, argspec.BURNIN_ISOLATE_OWN),
}
KEYS = ("type", "default", "required", "choices", "elements", "aliases")


def _string(path, names):
    """The string assigned to NAMES (a path of class and variable names) in the Python file PATH, read from its text."""
    with open(path) as handle:
        body = ast.parse(handle.read()).body
    for name in names[:-1]:
        body = [node for node in body if isinstance(node, ast.ClassDef) and node.name == name][0].body
    for node in body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [names[-1]]:
            return node.value.value
    raise AssertionError("%s has no %s" % (path, ".".join(names)))


def documented(name):
    """The options of plugins/modules/NAME.py's DOCUMENTATION with those of the collection's own documentation
    fragments (plugins/doc_fragments/) it extends, read from the files' text (not imported)."""
    doc = yaml.safe_load(_string(os.path.join(MODULES, name + ".py"), ["DOCUMENTATION"]))
    options = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        parts = fragment.split(".")
        if parts[:2] != ["gpufleet", "burnin"]:
            continue  # kubernetes.core's: the authentication options, compared as a whole below
        path = os.path.join(os.path.dirname(MODULES), "doc_fragments", parts[2] + ".py")
        variable = parts[3].upper() if len(parts) > 3 else "DOCUMENTATION"
        options.update(yaml.safe_load(_string(path, ["ModuleDocFragment", variable])).get("options") or {})
    options.update(doc.get("options") or {})
    return options


def normal(option):
    """The keys both sides state, with ansible's defaults made explicit."""
    out = dict((key, option.get(key)) for key in KEYS)
    out["type"] = out["type"] or "str"
    out["required"] = bool(out["required"])
    out["aliases"] = sorted(out["aliases"] or [])
    if out["type"] == "path" and out["default"] is None:
        out["default"] = None
    return out


def compare(name, spec, docs, where=""):
    assert sorted(spec) == sorted(docs), "%s%s: the spec's options %s, the documentation's %s" % (name, where, sorted(spec), sorted(docs))
    for option in sorted(spec):
        got, want = normal(spec[option]), normal(docs[option])
        assert got == want, "%s: option %s%s: spec %s, documentation %s" % (name, where, option, got, want)
        if spec[option].get("options") or docs[option].get("suboptions"):
            compare(name, spec[option].get("options") or {}, docs[option].get("suboptions") or {}, where="%s%s." % (where, option))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_spec_is_the_documented_one(name):
    whole, own = SPECS[name]
    spec = whole()
    docs = documented(name)
    compare(name, own if own is not None else spec, docs)
    if own is not None:
        # the plugin's own options win over kubernetes.core's, and the authentication options are all there
        from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC

        assert sorted(spec) == sorted(set(AUTH_ARG_SPEC) | set(own))
        assert all(spec[key] == own[key] for key in own)


def test_the_specs_are_copies_a_caller_may_change():
    for whole, _own in SPECS.values():
        first = whole()
        for option in first.values():
            option["default"] = "changed"
        assert all(option.get("default") != "changed" for option in whole().values())


def test_a_documentation_stub_refuses_to_run_on_a_host_also_in_check_mode(monkeypatch, capsys):
    import json

    from ansible.module_utils import basic

    # a module that did not support check mode would exit "skipped" in check mode instead of saying why it cannot run
    args = {"ANSIBLE_MODULE_ARGS": {"directory": "/tmp/x", "files": [], "_ansible_check_mode": True}}
    monkeypatch.setattr(basic, "_ANSIBLE_ARGS", json.dumps(args).encode("utf-8"))
    monkeypatch.setattr(basic, "_ANSIBLE_PROFILE", "legacy", raising=False)
    with pytest.raises(SystemExit):
        argspec.refuse_on_host(argspec.burnin_write_spec(), "gpufleet.burnin.burnin_write", "writes on the controller")
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] is True and not out.get("skipped"), out
    assert out["msg"] == "gpufleet.burnin.burnin_write writes on the controller through its action plugin; it cannot run as a module on a host"


def test_the_names_of_pull_secrets_are_not_hidden():
    # they name Secrets, they are none: with no_log, Ansible would print VALUE_SPECIFIED_IN_NO_LOG_PARAMETER wherever
    # such a name shows in a result (the runtime, the plan), and validate-modules wants the choice stated
    for spec in (argspec.training_runtime_spec(), argspec.workload_plan_spec()):
        assert spec["image_pull_secrets"]["no_log"] is False
