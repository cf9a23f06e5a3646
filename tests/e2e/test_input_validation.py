# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Bad input is refused before any API request: ansible-playbook runs the role and the plugins against a cluster
that cannot answer (a kubeconfig pointing at https://127.0.0.1:1, loopback only) and the validation message appears,
naming the user's field, while no connection error does. Needs no test fleet."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: not-a-secret}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
"""
CONNECTION_WORDS = ("connection refused", "Connection refused", "Max retries exceeded", "Failed to establish", "Unreachable", "HTTPSConnectionPool")


@pytest.fixture(scope="module")
def dead_cluster(tmp_path_factory):
    directory = tmp_path_factory.mktemp("dead")
    kubeconfig = directory / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    inventory = directory / "hosts.yml"
    inventory.write_text(
        json.dumps(
            {
                "all": {
                    "hosts": {
                        "dead-cluster": {
                            "ansible_connection": "local",
                            "ansible_python_interpreter": sys.executable,
                            "burnin_kubeconfig": str(kubeconfig),
                            "burnin_context": "dead",
                            "burnin_platform": "aws",
                            "burnin_gpu_architecture": "h100",
                        }
                    }
                }
            }
        )
    )
    return directory


def run(directory, playbook, extra=None):
    path = directory / "play.yml"
    path.write_text(playbook)
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(directory / "hosts.yml"), str(path)]
    for name, value in (extra or {}).items():
        command += ["-e", json.dumps({name: value})]
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_STDOUT_CALLBACK="default")
    done = subprocess.run(command, cwd=str(directory), env=env, capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout + done.stderr


ROLE = """
- hosts: all
  gather_facts: false
  module_defaults:
    group/kubernetes.core.k8s: {kubeconfig: "{{ burnin_kubeconfig }}", context: "{{ burnin_context }}"}
  roles:
    - role: gpufleet.burnin.burnin
"""


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({"burnin_nodes": 0}, "burnin_nodes: must be an integer from 1 to 100000"),
        ({"burnin_nodes": 1000000000}, "burnin_nodes: must be an integer from 1 to 100000"),
        ({"burnin_platform": "aws2"}, "burnin_platform: must be one of"),
        ({"burnin_nodse": 2}, "burnin_nodse: is not a variable of gpufleet.burnin.burnin; did you mean burnin_nodes?"),
        ({"burnin_trainer_version": "v9"}, "burnin_trainer_version: must be a Trainer release"),
        ({"burnin_trainer_version": 2.10}, "burnin_trainer_version: must be a string"),
        ({"burnin_overrides": [{"when": {}, "jobTemplat": {}}]}, "burnin_overrides[0]: unknown key(s) jobTemplat"),
        ({"burnin_overrides": [{"when": {"platform": {"in": "aws,gcp"}}}]}, "burnin_overrides[0].when.platform.in: must be a list of strings"),
        ({"burnin_volumes": '[{"name": 1'}, "burnin_volumes: is text but not valid JSON"),
        ({"burnin_thresholds": '{"x": 1}'}, "burnin_thresholds: must be a list"),
        ({"burnin_namespace": "Burn In"}, "burnin_namespace: must be a DNS-1123 label"),
        ({"burnin_resources": {"limits": {"hugepages-2Mi": "5GB"}}}, "burnin_resources.limits.hugepages-2Mi: must be a Kubernetes quantity"),
        ({"burnin_verified_label": "not a key"}, "burnin_verified_label: must be a qualified name"),
        ({"burnin_quarantine": "drain"}, "burnin_quarantine: must be one of none, taint, cordon"),
        ({"burnin_quarantine_taint": {"key": "gpufleet.burnin/bad", "effect": "Never"}}, "burnin_quarantine_taint.effect: must be one of NoSchedule"),
        ({"burnin_stages": ["node", "gpu-burn"]}, "burnin_stages[1]: unknown stage 'gpu-burn'; allowed: node, fleet, isolation, dcgm, gpu"),
        ({"burnin_stages": '["isolation", "fleet"]'}, "burnin_stages: isolation finds the bad nodes of the fleet stage, so fleet must come before it"),
        ({"burnin_repeats": 20}, "burnin_repeats: must be an integer from 0 to 10"),
        ({"burnin_stage_params": {"gpu": {"seconds": 0}}}, "burnin_stage_params.gpu: the gpu stage's workload gpu-burn does not render with them"),
        ({"burnin_stage_params": '{"gpu": {"secnds": 5}}'}, "burnin_stage_params.gpu.secnds: is not a parameter of workload gpu-burn; its parameters:"),
        ({"burnin_stage_params": {"fleet": {}}}, "burnin_stage_params.fleet: is not a stage that takes parameters; allowed: dcgm, gpu, node"),
    ],
)
def test_the_role_refuses_before_detect(dead_cluster, extra, expected):
    code, output = run(dead_cluster, ROLE, extra)
    assert code != 0
    assert expected in output, output[-3000:]
    assert "burnin__" not in output.split(expected)[0][-400:]
    assert not any(word in output for word in CONNECTION_WORDS), output[-3000:]
    assert "Read the cluster and check its platform and GPU" not in output  # the cluster's first contact never ran


PLUGINS = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Plan
      gpufleet.burnin.workload_plan:
        entry_name: nccl
        image: busybox
        framework: mpi
        gpus_per_node: 8
        namespace: burnin
        run_id: r1
        platform: aws
        gpu_architecture: h100
        trainer: {binary: /bin/true}
        overrides: "{{ bad_overrides | default([]) }}"
        cluster_nodes: "{{ bad_nodes | default(omit) }}"
      when: step == 'plan'

    - name: Apply
      gpufleet.burnin.k8s_apply:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
        objects: "{{ bad_objects | default([{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c', 'namespace': 'n'}}]) }}"
        field_manager: "{{ manager | default('gpufleet.burnin') }}"
      when: step == 'apply'

    - name: Remediate
      gpufleet.burnin.burnin_remediate:
        kubeconfig: "{{ burnin_kubeconfig }}"
        context: "{{ burnin_context }}"
        run_id: r1
        node_verdicts: "{{ bad_verdicts | default({'n1': {'verdict': 'pass'}}) }}"
        label_verified: true
        verified_label: "{{ label | default('gpufleet.burnin/verified') }}"
      when: step == 'remediate'
"""


@pytest.mark.parametrize(
    "extra, expected",
    [
        (
            {"step": "plan", "bad_overrides": [{"when": {}}, {"when": {}, "jobTemplatePatch": [{"op": "delete", "path": "/spec"}]}]},
            "overrides[1].jobTemplatePatch[0].op: must be one of add, remove, replace, move, copy, test",
        ),
        (
            {"step": "plan", "bad_overrides": [{"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/spec/workload"}]}]},
            "overrides[0]: leaves the job template without",
        ),
        ({"step": "plan", "bad_overrides": [{"when": {}, "jobTemplate": {"spec": None}}]}, "overrides[0].jobTemplate.spec: must be a mapping"),
        ({"step": "plan", "bad_overrides": [{"when": {}, "dependencies": ["kind: x"]}]}, "overrides[0].dependencies[0]: must be a mapping"),
        ({"step": "plan", "bad_nodes": [{"status": "garbage"}]}, "cluster_nodes[0].status: must be a mapping"),
        ({"step": "apply", "bad_objects": [{"apiVersion": "v1", "metadata": {"name": "x", "namespace": "n"}}]}, "objects[0].kind: must be a kind"),
        (
            {"step": "apply", "bad_objects": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]},
            "objects[0].metadata.namespace: ConfigMap is namespaced",
        ),
        ({"step": "apply", "manager": ""}, "field_manager: must be a non-empty printable name"),
        ({"step": "remediate", "label": "Bad Key!"}, "verified_label: must be a qualified name"),
        ({"step": "remediate", "bad_verdicts": {"n1": {"verdict": "error"}}}, "node_verdicts.n1.verdict: must be one of pass, warn, fail"),
    ],
)
def test_the_plugins_refuse_before_any_request(dead_cluster, extra, expected):
    code, output = run(dead_cluster, PLUGINS, extra)
    assert code != 0
    assert expected in output, output[-3000:]
    assert not any(word in output for word in CONNECTION_WORDS), output[-3000:]
    assert "Traceback" not in output


def test_a_valid_apply_does_reach_for_the_dead_cluster(dead_cluster):
    """The control: with valid input k8s_apply does try the cluster, so the tests above prove the check came first."""
    code, output = run(dead_cluster, PLUGINS, {"step": "apply"})
    assert code != 0 and any(word in output for word in CONNECTION_WORDS), output[-3000:]


def test_with_valid_variables_the_role_does_reach_for_the_dead_cluster(dead_cluster):
    """The control of the role cases: valid variables pass the check and cluster_detect tries the cluster."""
    code, output = run(dead_cluster, ROLE, {"burnin_nodes": 2})
    assert code != 0 and "Read the cluster and check its platform and GPU" in output, output[-3000:]
    assert "Unreachable" in output or any(word in output for word in CONNECTION_WORDS), output[-3000:]


def test_bad_workload_params_are_refused_before_detect(dead_cluster):
    code, output = run(dead_cluster, ROLE, {"burnin_workload_params": {"timeout": 0}})
    assert code != 0 and "burnin_workload_params (the trainer of workload nccl-all-reduce).timeout" in output, output[-3000:]
    assert "Read the cluster and check its platform and GPU" not in output


RENDER = """
- hosts: all
  gather_facts: false
  tasks:
    - name: Render
      ansible.builtin.include_role:
        name: gpufleet.burnin.burnin
        tasks_from: render
"""


def test_template_looking_survey_text_stays_literal(tmp_path):
    """AWX passes survey answers as unsafe text: JSON text holding a template is parsed and its strings stay literal
    in the rendered objects (nothing is looked up)."""
    (tmp_path / "hosts.yml").write_text("""all:
  hosts:
    render-only:
      ansible_connection: local
      ansible_python_interpreter: %s
      burnin_platform: aws
      burnin_gpu_architecture: h100
      burnin_run_id: r1
      burnin_render_dir: %s
      burnin_env: !unsafe 'MARK={{ 6 * 7 }}'
      burnin_volumes: !unsafe '[{"name": "data", "hostPath": {"path": "/{{ lookup(''ansible.builtin.env'', ''HOME'') }}"}}]'
""" % (sys.executable, tmp_path / "out"))
    code, output = run(tmp_path, RENDER)
    assert code == 0 and "render-only" in output, output[-3000:]
    manifests = (tmp_path / "out" / "render-only" / "manifests.yaml").read_text()
    marks = [
        item["value"]
        for doc in yaml.safe_load_all(manifests)
        if doc and doc["kind"] == "TrainingRuntime"
        for job in doc["spec"]["template"]["spec"]["replicatedJobs"]
        for container in job["template"]["spec"]["template"]["spec"]["containers"]
        for item in container.get("env", [])
        if item["name"] == "MARK"
    ]
    assert marks and set(marks) == {"{{ 6 * 7 }}"}
    assert "lookup('ansible.builtin.env', 'HOME')" in manifests
