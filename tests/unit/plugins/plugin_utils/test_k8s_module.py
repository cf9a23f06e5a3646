# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""k8s_in_process._k8s_module: kubernetes.core's dependency checks once per process, not once per client."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

pytest.importorskip("kubernetes")

from ansible_collections.gpufleet.burnin.plugins.plugin_utils import k8s_in_process  # noqa: E402
from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ModuleExit  # noqa: E402


class Recorder(object):
    """AnsibleK8SModule's constructor as _k8s_module calls it: the settings each module got; FAIL: the modules whose
    checks fail (kubernetes.core's requires() ends the module with fail_json)."""

    def __init__(self, fail=()):
        self.calls, self.fail = [], set(fail)

    def __call__(self, **kwargs):
        self.calls.append(dict((key, kwargs.get(key, True)) for key in ("check_k8s", "check_pyyaml")))
        if len(self.calls) in self.fail:
            raise ModuleExit({"failed": True, "msg": "kubernetes is required"})
        return object()


@pytest.fixture
def recorder(monkeypatch):
    monkeypatch.setitem(k8s_in_process._DEPENDENCIES, "checked", False)

    def use(fail=()):
        made = Recorder(fail)
        monkeypatch.setattr(k8s_in_process, "AnsibleK8SModule", made)
        return made

    return use


def test_the_first_module_of_the_process_checks_the_dependencies_the_later_ones_do_not(recorder):
    made = recorder()
    for _module in range(3):
        k8s_in_process._k8s_module(argument_spec={}, supports_check_mode=True)
    on, off = {"check_k8s": True, "check_pyyaml": True}, {"check_k8s": False, "check_pyyaml": False}
    assert made.calls == [on, off, off]


def test_until_a_check_passed_every_module_checks_again(recorder):
    made = recorder(fail=(1, 2))
    for _module in range(2):
        with pytest.raises(ModuleExit):
            k8s_in_process._k8s_module(argument_spec={})
    k8s_in_process._k8s_module(argument_spec={})
    k8s_in_process._k8s_module(argument_spec={})
    assert [call["check_k8s"] for call in made.calls] == [True, True, True, False]


class Module(object):
    """What get_api_client reads of a module: its params and whether it dry-runs on the server."""

    def __init__(self, server_side_dry_run=False, **params):
        self.params = dict({"kind": "Node", "api_version": "v1", "namespace": None}, **params)
        self.server_side_dry_run = server_side_dry_run


def test_one_client_per_authentication_and_kubeconfig_version(monkeypatch, tmp_path):
    made = []
    monkeypatch.setattr(k8s_in_process, "_CLIENTS", {})
    monkeypatch.setattr(k8s_in_process, "get_api_client", lambda module=None, **kwargs: made.append(module) or object())
    config = tmp_path / "kubeconfig"
    config.write_text("apiVersion: v1\n")
    first = k8s_in_process._one_client(Module(kubeconfig=str(config), context="a"))
    # Another kind, namespace or name of the same cluster: the same client, the kubeconfig not read again.
    assert k8s_in_process._one_client(Module(kubeconfig=str(config), context="a", kind="TrainJob", namespace="burnin")) is first
    assert len(made) == 1
    # Another context, token or dry run: a client of its own.
    for other in (
        Module(kubeconfig=str(config), context="b"),
        Module(kubeconfig=str(config), context="a", api_key="t"),
        Module(True, kubeconfig=str(config), context="a"),
    ):
        assert k8s_in_process._one_client(other) is not first
    assert len(made) == 4
    # The file changed (its size): made again.
    config.write_text("apiVersion: v1\nkind: Config\n")
    assert k8s_in_process._one_client(Module(kubeconfig=str(config), context="a")) is not first and len(made) == 5

    # A creation that fails is not kept: the next call tries again.
    def unreachable(module=None, **kwargs):
        raise ValueError("unreachable")

    monkeypatch.setattr(k8s_in_process, "get_api_client", unreachable)
    for _attempt in range(2):
        with pytest.raises(ValueError):
            k8s_in_process._one_client(Module(kubeconfig=str(config), context="c"))


REFUSED = "admission webhook denied: TrainingRuntime nccl must be created before the TrainJob"


@pytest.mark.parametrize("refusals, tries_allowed, applied", [(0, 3, ["nccl", "job", "after"]), (2, 3, ["nccl", "job", "job", "job", "after"]), (3, 3, None)])
def test_apply_with_applies_again_only_the_object_it_is_asked_to(monkeypatch, refusals, tries_allowed, applied):
    # kubernetes.core's runner object by object: a TrainJob refused until Trainer's webhook caches its runtime is
    # applied again alone, the runtime before it once; past the tries AGAIN allows, the first error is the result.
    class Module(object):
        def exit_json(self, **result):
            raise ModuleExit(result)

        def fail_json(self, **result):
            raise ModuleExit(dict(result, failed=True))

    class Service(object):
        def __init__(self, service, server_side_apply, absent_namespace):
            self.module = Module()

    done, asked = [], []

    def perform_action(service, definition, params):
        done.append(definition["metadata"]["name"])
        if definition["kind"] == "TrainJob" and done.count("job") <= refusals:
            raise RuntimeError(REFUSED)
        return {"changed": True, "method": "apply", "result": definition}

    def again(msg, tries):
        asked.append((msg, tries))
        return tries < tries_allowed

    monkeypatch.setattr(k8s_in_process, "ServerSideApply", Service)
    monkeypatch.setattr(k8s_in_process, "perform_action", perform_action)
    objects = [
        {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind, "metadata": {"name": name, "namespace": "burnin"}}
        for kind, name in (("TrainingRuntime", "nccl"), ("TrainJob", "job"), ("ConfigMap", "after"))
    ]
    params = {"resource_definition": objects, "server_side_apply": {"field_manager": "fm"}, "hidden_fields": [], "namespace": None}
    out = k8s_in_process.apply_with(object(), params, again=again)
    assert asked == [(REFUSED, tries) for tries in range(1, refusals + 1)]
    if applied is None:
        assert out["failed"] is True and out["msg"] == REFUSED and done == ["nccl"] + ["job"] * refusals
        return
    assert done == applied and out["changed"] is True
    assert [result["result"]["metadata"]["name"] for result in out["result"]["results"]] == ["nccl", "job", "after"]
