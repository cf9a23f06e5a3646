# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""gpufleet.burnin.k8s_apply on a real API server of the test fleet: apply, no-op, check mode, diff, module_defaults
from kubernetes.core's group and from the collection's own, K8S_AUTH_* from the task environment, secrets redacted,
clear errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest

CLUSTER = "gcp-usc1-h100-a"


def configmap(namespace, name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": {"value": value}}


def play(tmp_path, fleet, tasks, defaults_group="kubernetes.core.k8s", extra=(), env=None):
    """Run one play on localhost whose tasks are given as YAML text; return (rc, output, registered results)."""
    out = tmp_path / "results.json"
    playbook = tmp_path / "play.yml"
    defaults = ""
    if defaults_group:
        defaults = textwrap.dedent("""\
          module_defaults:
            group/%s:
              kubeconfig: %s
              context: %s
        """) % (defaults_group, fleet.kubeconfig, CLUSTER)
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n"
        + textwrap.indent(defaults, "  ")
        + "  tasks:\n"
        + textwrap.indent(textwrap.dedent(tasks), "    ")
        + textwrap.indent(
            textwrap.dedent("""\
                          - name: Save the results
                            ansible.builtin.copy:
                              content: "{{ {'first': first | default(none), 'second': second | default(none)} | to_json }}"
                              dest: %s
                            check_mode: false
                          """ % out),
            "    ",
        )
    )
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        "ansible_python_interpreter=%s" % sys.executable,
        str(playbook),
    ] + list(extra)
    proc = subprocess.run(
        command,
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", **(env or {})),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        check=False,
    )
    results = json.loads(out.read_text()) if out.is_file() else {}
    return proc.returncode, proc.stdout, results


@pytest.fixture()
def namespace(fleet):
    name = "k8s-apply-" + uuid.uuid4().hex[:8]
    yield name
    api = fleet.dynamic(CLUSTER).resources.get(api_version="v1", kind="Namespace")
    try:
        api.delete(name=name)
    except Exception:  # pylint: disable=broad-except
        pass


def get_configmap(fleet, namespace, name):
    api = fleet.dynamic(CLUSTER).resources.get(api_version="v1", kind="ConfigMap")
    try:
        return api.get(name=name, namespace=namespace).to_dict()
    except Exception:  # pylint: disable=broad-except
        return None


def test_apply_then_noop_with_kubernetes_core_module_defaults(fleet, tmp_path, namespace):
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, configmap(namespace, "one", "1")]
    tasks = """\
        - name: Apply
          gpufleet.burnin.k8s_apply:
            objects: %s
            field_manager: e2e-manager
          register: first
        - name: Apply again
          gpufleet.burnin.k8s_apply:
            objects: %s
            field_manager: e2e-manager
          register: second
        """ % (json.dumps(objects), json.dumps(objects))
    rc, output, results = play(tmp_path, fleet, tasks)
    assert rc == 0, output[-3000:]
    first, second = results["first"], results["second"]
    assert first["changed"] is True and second["changed"] is False, (first, second)
    assert [r["result"]["metadata"]["name"] for r in first["result"]["results"]] == [namespace, "one"]
    # Each object comes back as its reference only (the caller has what it applied).
    assert [sorted(r["result"]["metadata"]) for r in first["result"]["results"]] == [
        ["name", "resourceVersion", "uid"],
        ["name", "namespace", "resourceVersion", "uid"],
    ]
    assert all("data" not in r["result"] and "spec" not in r["result"] for r in first["result"]["results"])
    stored = get_configmap(fleet, namespace, "one")
    assert stored["data"] == {"value": "1"}
    assert [m["manager"] for m in stored["metadata"]["managedFields"] if m["operation"] == "Apply"] == ["e2e-manager"]


def test_check_mode_is_a_server_dry_run_with_a_diff(fleet, tmp_path, namespace):
    setup = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, configmap(namespace, "two", "old")]
    rc, output, dummy = play(
        tmp_path,
        fleet,
        """\
        - name: Set up
          gpufleet.burnin.k8s_apply:
            objects: %s
        """ % json.dumps(setup),
    )
    assert rc == 0, output[-3000:]
    rc, output, results = play(
        tmp_path,
        fleet,
        """\
        - name: Change in check mode
          gpufleet.burnin.k8s_apply:
            objects: %s
          register: first
        """ % json.dumps([configmap(namespace, "two", "new"), configmap(namespace, "three", "3")]),
        extra=["--check", "--diff"],
    )
    assert rc == 0, output[-3000:]
    first = results["first"]
    assert first["changed"] is True
    changed, created = [item["diff"] for item in first["result"]["results"]]
    assert changed["before"]["data"] == {"value": "old"} and changed["after"]["data"] == {"value": "new"}
    assert created["after"]["data"] == {"value": "3"}
    # Several objects: one list of diffs, each headed by its object, which the callback prints one by one.
    assert [(d["before_header"], d["after"]["data"]) for d in first["diff"]] == [("ConfigMap/two", {"value": "new"}), ("ConfigMap/three", {"value": "3"})]
    assert "+++ after: ConfigMap/two" in output and "+++ after: ConfigMap/three" in output, output[-3000:]
    assert get_configmap(fleet, namespace, "two")["data"] == {"value": "old"}
    assert get_configmap(fleet, namespace, "three") is None


def test_collection_group_and_task_environment_reach_the_client(fleet, tmp_path, namespace):
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
    rc, output, results = play(
        tmp_path,
        fleet,
        """\
        - name: Apply through group/gpufleet.burnin.k8s
          gpufleet.burnin.k8s_apply:
            objects: %s
          register: first
        """ % json.dumps(objects),
        defaults_group="gpufleet.burnin.k8s",
    )
    assert rc == 0 and results["first"]["changed"] is True, output[-3000:]
    rc, output, results = play(
        tmp_path,
        fleet,
        """\
        - name: Apply with K8S_AUTH_* in the task environment
          gpufleet.burnin.k8s_apply:
            objects: %s
          environment:
            K8S_AUTH_KUBECONFIG: %s
            K8S_AUTH_CONTEXT: %s
          register: first
        """ % (json.dumps([configmap(namespace, "env", "x")]), fleet.kubeconfig, CLUSTER),
        defaults_group=None,
    )
    assert rc == 0 and results["first"]["changed"] is True, output[-3000:]
    assert get_configmap(fleet, namespace, "env")["data"] == {"value": "x"}


def test_secrets_are_redacted_and_bad_input_is_a_clear_error(fleet, tmp_path):
    secret = "s3cr3t-" + uuid.uuid4().hex
    rc, output, dummy = play(
        tmp_path,
        fleet,
        """\
        - name: Wrong token
          gpufleet.burnin.k8s_apply:
            objects: [{apiVersion: v1, kind: ConfigMap, metadata: {name: x, namespace: default}, data: {a: "%s"}}]
            api_key: "%s"
            host: https://127.0.0.1:1
          register: first
          ignore_errors: true
        - name: Objects is not a list of mappings
          gpufleet.burnin.k8s_apply:
            objects: [just-a-string]
          register: second
          ignore_errors: true
        """ % (secret, secret),
        defaults_group=None,
        extra=["-vvv"],
    )
    assert rc == 0, output[-3000:]
    assert secret not in output
    assert "ignored=2" in output
    assert "objects" in output and "dict" in output


def test_a_connected_cluster_applies_as_kubernetes_cores_runner_does(fleet, namespace):
    """plugin_utils/cluster.py applies with its connected client (k8s_in_process.apply_with, one request less per
    object than kubernetes.core's runner) outside check and diff mode: the same results, object by object, as the
    runner gives on a real API server: created, unchanged, one of two changed, hidden fields hidden, errors failed."""
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.trainjobs import ClusterCallFailed
    from ansible_collections.gpufleet.burnin.plugins.plugin_utils.cluster import Cluster

    cluster = Cluster({"kubeconfig": fleet.kubeconfig, "context": CLUSTER}, "test", namespace).connect()
    runner = Cluster({"kubeconfig": fleet.kubeconfig, "context": CLUSTER}, "test", namespace)  # not connected: the runner

    def applied(which, objects):
        outcome = which.apply(objects)
        return [(item["method"], item["changed"], item["result"]["metadata"]["name"]) for item in outcome["result"]["results"]], outcome

    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}])
    first, outcome = applied(cluster, [configmap(namespace, "a", "1"), configmap(namespace, "b", "1")])
    assert first == [("apply", True, "a"), ("apply", True, "b")] and outcome["changed"] is True
    assert all("managedFields" not in item["result"]["metadata"] for item in outcome["result"]["results"])
    again, outcome = applied(cluster, [configmap(namespace, "a", "1"), configmap(namespace, "b", "1")])
    assert again == [("apply", False, "a"), ("apply", False, "b")] and outcome["changed"] is False
    by_runner, runner_outcome = applied(runner, [configmap(namespace, "a", "1"), configmap(namespace, "b", "1")])
    assert by_runner == again and sorted(runner_outcome["result"]["results"][0]) == sorted(outcome["result"]["results"][0])
    one, outcome = applied(cluster, [configmap(namespace, "a", "2"), configmap(namespace, "b", "1")])
    assert one == [("apply", True, "a"), ("apply", False, "b")] and get_configmap(fleet, namespace, "a")["data"] == {"value": "2"}
    # One object alone: its result, not a list (as kubernetes.core.k8s returns it).
    single = cluster.apply([configmap(namespace, "c", "1")])
    assert single["changed"] is True and single["method"] == "apply" and single["result"]["metadata"]["name"] == "c"
    # An object the API server refuses: failed with kubernetes.core's message, the objects before it applied.
    with pytest.raises(ClusterCallFailed) as refused:
        cluster.apply([configmap(namespace, "d", "1"), configmap(namespace, "Not_A_Name", "1")])
    assert refused.value.outcome["failed"] is True and refused.value.outcome["msg"].startswith("Failed to apply object")
    assert get_configmap(fleet, namespace, "d")["data"] == {"value": "1"}
    with pytest.raises(ClusterCallFailed) as by_runner_refused:
        runner.apply([configmap(namespace, "Not_A_Name", "1")])
    assert by_runner_refused.value.error["category"] == refused.value.error["category"]
