# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugins/plugin_utils/cluster_stages.py detect_cluster: the batch's first contact with a cluster reads it with the
host's checked variables and turns detect()'s answer (plugin_utils/cluster_detection.py, tested with its action) into
the stage protocol of module_utils/burnin/batch_run.py. detect() is a stand-in here."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpufleet.burnin.plugins.plugin_utils import cluster_stages

NAME = "gpufleet.burnin.burnin_batch"
RECORDED = {"stage": "detect", "platform": "aws", "gpu_architecture": "h100", "detected": {"gpu_nodes": 2}, "warnings": []}


def args(**variables):
    given = {"burnin_platform": "aws", "burnin_gpu_architecture": "h100", "burnin_check_nodes": True, "burnin_create_namespace": True}
    given.update(variables)
    return {"variables": given, "namespace": "burnin", "host": "a", "result": {"cluster": "a", "run_id": "r1"}}


@pytest.fixture(name="detected")
def fixture_detected(monkeypatch):
    calls, answers = [], []

    def detect(auth, name, platform, gpu_architecture, check_nodes=True, namespace=""):
        calls.append((auth, name, platform, gpu_architecture, check_nodes, namespace))
        return answers[0]

    monkeypatch.setattr(cluster_stages, "detect", detect)
    return calls, answers


@pytest.mark.parametrize("create_namespace, check_nodes, namespace", [(True, True, "burnin"), (False, False, "")])
def test_the_cluster_is_read_with_the_hosts_checked_variables(detected, create_namespace, check_nodes, namespace):
    calls, answers = detected
    answers.append({"outcome": "Detected", "reason": "", "recorded": RECORDED, "kubernetes_version": "v1.34.4", "nodes": [{"name": "n1"}]})
    lines = []
    out = cluster_stages.detect_cluster(
        {"context": "ctx"}, NAME, args(burnin_create_namespace=create_namespace, burnin_check_nodes=check_nodes), progress=lines.append
    )
    # the namespace is looked up only for the apply that would create it
    assert calls == [({"context": "ctx"}, NAME, "aws", "h100", check_nodes, namespace)]
    assert not out.get("failed") and out["cluster"] is answers[0]
    assert out["record"] == dict({"cluster": "a", "run_id": "r1"}, **RECORDED)
    assert lines == ["a: read: Kubernetes v1.34.4, aws/h100, 2 GPU node(s)"] and out["lines"] == []


@pytest.mark.parametrize("outcome", ["Mismatch", "Unreachable", "Error"])
def test_a_cluster_not_detected_fails_with_its_outcome_and_reason_recorded(detected, outcome):
    calls, answers = detected
    recorded = {"stage": "detect", "outcome": outcome, "reason": "why", "error_class": "" if outcome == "Mismatch" else outcome}
    error = None if outcome == "Mismatch" else {"category": outcome, "message": "why"}
    answers.append({"outcome": outcome, "reason": "why", "recorded": recorded, "error": error})
    lines = []
    out = cluster_stages.detect_cluster({}, NAME, args(), progress=lines.append)
    assert out["failed"] and out["msg"] == "%s: why" % outcome and out["error"] == error
    assert out["record"]["outcome"] == outcome and out["record"]["reason"] == "why" and out["record"]["run_id"] == "r1"
    # the batch tells the failure (cluster_batch.drive_batch), not a progress line here as well
    assert lines == [] and out["lines"] == []


def test_a_declared_value_detection_refuses_fails_with_its_message_and_the_result_as_it_was(detected):
    calls, answers = detected
    answers.append({"changed": False, "failed": True, "msg": "%s: burnin_platform: unknown" % NAME})
    out = cluster_stages.detect_cluster({}, NAME, args())
    assert out["failed"] and out["msg"] == "%s: burnin_platform: unknown" % NAME and out["record"] == {"cluster": "a", "run_id": "r1"}


class _Module(object):
    params = {"state": "present"}
    check_mode = False


class _Client(object):
    dry_run = False

    def __init__(self):
        self.gets = []

    def get(self, resource, **params):
        self.gets.append(params)
        return {"metadata": params}


class _Service(object):
    def __init__(self):
        self.client, self.module = _Client(), _Module()


def test_the_first_apply_reads_neither_a_namespace_just_found_missing_nor_its_objects():
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils.k8s_in_process import ServerSideApply

    service = _Service()
    apply = ServerSideApply(service, {"field_manager": "f", "force_conflicts": False}, "burnin")
    # kubernetes.core's retrieve answers None for an object not found: the same, without the request
    for definition in ({"kind": "Namespace", "metadata": {"name": "burnin"}}, {"kind": "TrainJob", "metadata": {"name": "j", "namespace": "burnin"}}):
        assert apply.retrieve("r", definition) is None
    assert service.client.gets == []
    # another namespace, an object of another namespace, a cluster-scoped object of the same name: read as
    # kubernetes.core reads them
    others = [
        {"kind": "Namespace", "metadata": {"name": "other"}},
        {"kind": "ConfigMap", "metadata": {"name": "burnin", "namespace": "other"}},
        {"kind": "PriorityClass", "metadata": {"name": "burnin"}},
    ]
    for definition in others:
        assert apply.retrieve("r", definition) is not None
    assert [get.get("name") for get in service.client.gets] == ["other", "burnin", "burnin"]
    # without a namespace found missing, everything is read
    service = _Service()
    ServerSideApply(service, {"field_manager": "f", "force_conflicts": False}).retrieve("r", {"kind": "Namespace", "metadata": {"name": "burnin"}})
    assert len(service.client.gets) == 1


@pytest.mark.parametrize(
    "cluster, result, absent",
    [
        ({"namespace_exists": False}, {}, "burnin"),
        # an earlier stage created it: its objects may be there
        ({"namespace_exists": False}, {"namespace_created": True}, None),
        ({"namespace_exists": True}, {}, None),
        # not looked up (burnin_create_namespace false)
        ({}, {}, None),
    ],
)
def test_a_stage_tells_its_cluster_the_namespace_detection_found_missing(monkeypatch, cluster, result, absent):
    made = []

    class Cluster(object):
        def __init__(self, auth, name, namespace, **options):
            made.append(options["absent_namespace"])

        def connect(self, kind, api_version):
            raise RuntimeError("stop here")

    monkeypatch.setattr(cluster_stages, "Cluster", Cluster)
    monkeypatch.setattr(cluster_stages, "checked_variables", lambda given: dict((name, 1) for name in cluster_stages.USED))
    stage_args = {"stage": "fleet", "variables": {}, "run_id": "r1", "namespace": "burnin", "cluster": cluster, "host": "a", "result": result}
    with pytest.raises(RuntimeError):
        cluster_stages.run_cluster_stage({}, NAME, stage_args)
    assert made == [absent]
