# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Faults during a burn-in, on a fleet of its own (its API servers are killed): one run of playbooks/burnin.yml over

- aws-faults-a, whose API server is killed while the role waits for its TrainJob: it must end as Unreachable within
  burnin_unreachable_grace, not after burnin_timeout, and the others must not wait for it;
- gcp-faults-a, a healthy cluster whose TrainJob takes FINISH seconds: the run takes about that long;
- three more hosts on the gcp cluster: a garbage token (Unauthorized, naming context and server), a CA that is not the
  server's (TLS: certificate not trusted), and the namespace-scoped token in a namespace outside its rights (Forbidden,
  naming verb, resource and namespace, pointing at the RBAC manifest).

And Trainer's webhook rejecting a runtime through gpufleet.burnin.k8s_apply: the webhook's own message, classified.
No handled failure prints a Python traceback of the collection's own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import ansible_playbook

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
KILLED, HEALTHY = "aws-faults-a", "gcp-faults-a"
TOKEN, BAD_CA, FORBIDDEN = "gcp-faults-bad-token", "gcp-faults-bad-ca", "gcp-faults-forbidden"
FINISH = 40  # seconds the healthy cluster's TrainJob runs
GRACE = 5
RUN = "faults-1"
SPEC = {
    "restricted_namespace": "burnin-restricted",
    "clusters": [
        {"name": KILLED, "platform": "aws", "gpu_architecture": "h100", "kubernetes_version": "1.34", "nodes": 2},
        {"name": HEALTHY, "platform": "gcp", "gpu_architecture": "h100", "kubernetes_version": "1.37", "nodes": 2},
    ],
}


@pytest.fixture(scope="module")
def faults_fleet(own_fleet):
    return own_fleet("faults", SPEC)


def bad_kubeconfigs(state, work):
    """A garbage token and a foreign CA for the healthy cluster's context, its server named localhost (bad_server()):
    kubernetes.core's discovery cache is per server name and user, so these clients never find the cache the healthy
    host's client wrote, and each of their first contacts reads the server's discovery, as in a fresh AWX job."""
    base = yaml.safe_load(Path(state["kubeconfig"]).read_text())
    for cluster in base["clusters"]:
        cluster["cluster"]["server"] = bad_server(cluster["cluster"]["server"])
    token = json.loads(json.dumps(base))
    for user in token["users"]:
        user["user"]["token"] = "garbage-token-0123456789"
    ca = json.loads(json.dumps(base))
    pem = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "/dev/null", "-days", "1", "-subj", "/CN=not-the-fleet-ca"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=True,
    ).stdout
    import base64

    for cluster in ca["clusters"]:
        cluster["cluster"]["certificate-authority-data"] = base64.b64encode(pem).decode()
    paths = {}
    for name, cfg in (("token", token), ("ca", ca)):
        path = work / ("%s.kubeconfig" % name)
        path.write_text(yaml.safe_dump(cfg))
        path.chmod(0o600)
        paths[name] = str(path)
    return paths


def bad_server(server):
    """The bad kubeconfigs' name of SERVER (its certificate names localhost too: tests/fleet/fleet.py)."""
    return server.replace("https://127.0.0.1:", "https://localhost:")


def kill_when_waiting(state, namespace):
    """Kill the API server of KILLED once its TrainJob exists (the role is then waiting for it). The returned dict gets
    ``trainjob`` (the name the API server listed), ``seen`` and ``at`` (monotonic times) only when it did: a kill
    without a TrainJob would test the apply, not the wait."""
    from kubernetes import config
    from kubernetes.dynamic import DynamicClient

    cluster = state["clusters"][KILLED]
    dyn = DynamicClient(config.new_client_from_config(config_file=state["kubeconfig"], context=KILLED))
    trainjobs = dyn.resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainJob")
    killed = {}

    def run():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                items = trainjobs.get(namespace=namespace).to_dict()["items"]
            except Exception as exc:  # noqa: BLE001 - the namespace may not exist yet
                killed["last_error"] = str(exc)[:300]
                items = []
            if items:
                killed.update(trainjob=items[0]["metadata"]["name"], seen=time.monotonic())
                break
            time.sleep(0.5)
        if "trainjob" not in killed:
            return
        time.sleep(2)
        os.kill(cluster["processes"]["kube-apiserver"]["pid"], signal.SIGKILL)
        killed["at"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, killed


def run_playbook(name, state, work, *options):
    """playbooks/NAME over the faults fleet and the extra hosts: (the process, its wall time, the run's summary.json)."""
    start = time.monotonic()
    proc = ansible_playbook(
        PLAYBOOKS / name, *options, "-i", state["inventory"], "-i", str(work / "extra" / "hosts.yml"), "-e", "burnin_run_id=%s" % RUN, "--forks", "10"
    )
    wall = time.monotonic() - start
    return proc, wall, json.loads((work / "reports" / RUN / "summary.json").read_text())


@pytest.fixture(scope="module")
def faults_run(faults_fleet):
    state, work = faults_fleet
    namespace = "faults"
    kubeconfigs = bad_kubeconfigs(state, work)
    common = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
    hosts = {
        TOKEN: dict(common, burnin_kubeconfig=kubeconfigs["token"], burnin_context=HEALTHY),
        BAD_CA: dict(common, burnin_kubeconfig=kubeconfigs["ca"], burnin_context=HEALTHY),
        FORBIDDEN: dict(
            common, burnin_kubeconfig=state["restricted_kubeconfig"], burnin_context=HEALTHY, burnin_namespace="other-ns", burnin_create_namespace=False
        ),
    }
    extra = work / "extra"
    (extra / "group_vars").mkdir(parents=True)
    (extra / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gcp_h100": {"hosts": hosts}}}}))
    (extra / "group_vars" / "all.yml").write_text(
        yaml.safe_dump(
            {
                "burnin_namespace": namespace,
                "burnin_report_dir": str(work / "reports"),
                "burnin_poll_interval": 2,
                "burnin_timeout": 300,
                "burnin_unreachable_grace": GRACE,
                "burnin_trainjob_annotations": {"gpufleet.test/delay-seconds": str(FINISH)},
                # One TrainJob per cluster (the fleet stage), so the run lasts about one FINISH: with the default
                # stages the healthy cluster ran two of them back to back and the bound below measured the stages.
                "burnin_stages": ["fleet"],
            }
        )
    )
    thread, killed = kill_when_waiting(state, namespace)
    start = time.monotonic()
    proc, wall, results = run_playbook("burnin.yml", state, work)
    Path(os.environ.get("GPUFLEET_FAULTS_OUTPUT", "/dev/null")).write_text(proc.stdout)
    thread.join(5)
    return {
        "rc": proc.returncode,
        "output": proc.stdout,
        "results": results,
        "wall": wall,
        "start": start,
        "killed": killed.get("at"),
        "kill": dict(killed),
        "state": state,
        "work": work,
    }


def test_a_cluster_killed_mid_wait_gives_up_fast_and_the_others_finish(faults_run):
    results = faults_run["results"]
    kill = faults_run["kill"]
    assert kill.get("trainjob"), "no TrainJob of %s appeared in 120 s, its API server was not killed: %s %s" % (KILLED, kill, faults_run["output"][-3000:])
    assert faults_run["killed"], "the API server was not killed: %s" % faults_run["output"][-3000:]
    killed = results[KILLED]
    assert killed["outcome"] == "Unreachable" and killed["stage"] == "wait", killed
    # the TrainJob the role waited for is the one the thread saw before it killed the API server
    assert ("Gave up waiting for TrainJob %s after " % kill["trainjob"]) in killed["reason"], (kill, killed)
    assert "Cannot reach https://127.0.0.1:" in killed["reason"], killed
    # Lower bounds: the wait did not give up at its first failed poll. Its reason states how long every poll failed
    # (the first failed poll starts that count at 0 s, so a value >= GRACE took at least two failed polls), and the
    # whole run, which ends after the killed host's wait, lasted at least the grace after the kill.
    unanswered = float(re.search(r"after ([0-9.]+) s without an answer", killed["reason"]).group(1))
    assert unanswered >= GRACE, killed["reason"]
    assert faults_run["start"] + faults_run["wall"] >= faults_run["killed"] + GRACE, faults_run
    assert results[HEALTHY]["outcome"] == "Complete", results[HEALTHY]
    # The run lasts about as long as the healthy cluster's TrainJob, not burnin_timeout (300 s): the killed cluster
    # costs its grace plus a poll, and nobody waits for it. And not less: the healthy cluster's TrainJob ran FINISH s.
    assert FINISH <= faults_run["wall"] < FINISH + 60, faults_run["wall"]
    assert unanswered < GRACE + 10, killed["reason"]  # the grace plus one poll interval (2 s) and a slow poll
    assert faults_run["rc"] == 2  # failed clusters fail their hosts


def test_errors_are_classified_and_readable(faults_run):
    results = faults_run["results"]
    server = bad_server(faults_run["state"]["clusters"][HEALTHY]["server"])
    token = results[TOKEN]
    assert token["outcome"] == "Error" and token["error_class"] == "Unauthorized", token
    assert ("The API server %s (context %s) refused the credential" % (server, HEALTHY)) in token["reason"]
    ca = results[BAD_CA]
    assert ca["outcome"] == "Unreachable" and ca["error_class"] == "TLS", ca
    assert "its TLS certificate is not trusted" in ca["reason"]
    forbidden = results[FORBIDDEN]
    assert forbidden["outcome"] == "Error" and forbidden["error_class"] == "Forbidden", forbidden
    assert 'user "burnin-restricted" may not' in forbidden["reason"] and 'in namespace "other-ns"' in forbidden["reason"]
    assert "extras/rbac/burnin-rbac.yaml" in forbidden["reason"] and '"kind":"Status"' not in forbidden["reason"]
    for name in (TOKEN, BAD_CA, FORBIDDEN, KILLED):
        assert len(results[name]["reason"]) < 600, results[name]["reason"]


def test_handled_failures_print_no_python_traceback(faults_run, faults_cleanup):
    # ansible-core 2.19+ prints an ignored kubernetes.core failure's msg as an [ERROR] line, with the client's
    # "Original traceback" in it: the role's reads (cluster_detect, trainjob_wait, trainjob_logs) run in-process and
    # classify their errors, a client's first discovery of its server included (bad_kubeconfigs), so nothing of that
    # reaches the output.
    assert "Traceback (most recent call last)" not in faults_run["output"]
    for output in (faults_run["output"], faults_cleanup["output"]):
        assert "Traceback (most recent call last)" not in output
        assert "Original traceback" not in output and "...ignoring" not in output


@pytest.fixture(scope="module")
def faults_cleanup(faults_run):
    """playbooks/cleanup.yml at -v over the same hosts after the run: the killed cluster is dead by then."""
    work = faults_run["work"]
    proc, wall, results = run_playbook("cleanup.yml", faults_run["state"], work, "-v")
    return {"rc": proc.returncode, "output": proc.stdout, "results": results, "wall": wall}


def test_cleanup_gives_up_on_a_dead_cluster_after_the_grace_and_cleans_the_others(faults_run, faults_cleanup):
    results = faults_cleanup["results"]
    assert results[HEALTHY]["outcome"] == "Cleaned", results[HEALTHY]
    assert "Namespace/faults" in results[HEALTHY]["deleted"], results[HEALTHY]
    dead = results[KILLED]
    assert dead["outcome"] == "Unreachable" and dead["stage"] == "cleanup" and dead["error_class"] == "Unreachable", dead
    assert "Cannot reach https://127.0.0.1:" in dead["reason"], dead
    # Retried for the grace (burnin_unreachable_grace), not kubernetes.core's wait_timeout; and at least the grace:
    # the playbook ends after the dead cluster's host, which gives up only once every call failed for GRACE s.
    assert GRACE <= faults_cleanup["wall"] < 60, faults_cleanup["wall"]
    assert faults_cleanup["rc"] == 2


def test_the_api_servers_own_words_only_at_higher_verbosity(faults_run, faults_cleanup):
    # The reason is the classifier's sentence; the server's message ("... is forbidden: User ...") is printed at -v.
    forbidden = faults_cleanup["results"][FORBIDDEN]
    assert forbidden["error_class"] == "Forbidden" and "is forbidden: User" not in forbidden["reason"], forbidden
    assert "is forbidden: User" not in faults_run["output"]
    assert "Show the API server's own words" in faults_cleanup["output"]
    assert "is forbidden: User" in faults_cleanup["output"]


def test_a_webhook_rejection_is_reported_with_the_webhooks_message(faults_fleet, tmp_path):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.runtime import build_runtime

    state, _work = faults_fleet
    runtime = build_runtime("torch", {"entry_name": "rejected", "image": "img", "nodes": 2, "gpus_per_node": 8})
    runtime["metadata"]["namespace"] = "default"
    runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2
    playbook = tmp_path / "apply.yml"
    out = tmp_path / "classified.json"
    playbook.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "name": "Apply a runtime Trainer refuses",
                            "gpufleet.burnin.k8s_apply": {"objects": [runtime], "kubeconfig": state["kubeconfig"], "context": HEALTHY},
                            "register": "applied",
                            "failed_when": False,
                        },
                        {"name": "Classify", "ansible.builtin.copy": {"content": "{{ applied.error | to_json }}", "dest": str(out), "mode": "0644"}},
                    ],
                }
            ]
        )
    )
    proc = ansible_playbook(playbook, "-i", "localhost,", "-c", "local")
    assert proc.returncode == 0, proc.stdout
    classified = json.loads(out.read_text())
    assert classified["category"] == "Invalid", classified
    assert classified["message"].startswith("The admission webhook validator.trainingruntime.trainer.kubeflow.org")
    assert "spec.template.spec.replicatedJobs[0].replicas" in classified["message"]
    # The task's message is that sentence; the raw Status body (error.detail) only at -v.
    assert "detail" not in classified and '"kind":"Status"' not in proc.stdout, proc.stdout
