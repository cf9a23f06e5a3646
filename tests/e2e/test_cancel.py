# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A burn-in cancelled while its TrainJobs run (Ctrl-C, an AWX cancel: SIGINT to ansible-playbook, which Ansible passes
on to its worker): gpufleet.burnin.burnin_batch stops every cluster's stage at once and records what each created
(the cleanup command was printed before), and playbooks/cleanup.yml then leaves nothing behind on either cluster."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from conftest import ansible_playbook

REPO = Path(__file__).resolve().parent.parent.parent
HOSTS = ("aws-use1-h100-a", "gcp-usc1-h100-a")
RUN_ID, NAMESPACE, ENTRY = "e2e-cancel", "cancel-e2e", "nccl-cancel"
TRAINER = "trainer.kubeflow.org/v1alpha1"
LABEL = "gpufleet.burnin/run-id=%s" % RUN_ID
# The jobs would run this long: far longer than the test waits.
JOB_SECONDS = 900


def extra_vars(reports):
    return [
        "-e",
        json.dumps(
            {
                "burnin_run_id": RUN_ID,
                "burnin_namespace": NAMESPACE,
                "burnin_entry_name": ENTRY,
                "burnin_report_dir": str(reports),
                "burnin_stages": ["fleet"],
                "burnin_timeout": 1800,
                "burnin_trainjob_annotations": {"gpufleet.test/delay-seconds": str(JOB_SECONDS)},
            }
        ),
    ]


def left_on(fleet, host):
    """What the run left on HOST: its labelled TrainJobs and TrainingRuntimes, the pods in the namespace, the
    namespace."""
    from kubernetes.dynamic.exceptions import NotFoundError

    client = fleet.dynamic(host)
    left = []
    for kind in ("TrainJob", "TrainingRuntime"):
        items = (
            client.resources.get(api_version=TRAINER, kind=kind).get(namespace=NAMESPACE, label_selector="gpufleet.burnin/entry=%s" % ENTRY).to_dict()["items"]
        )
        left.extend("%s/%s" % (kind, item["metadata"]["name"]) for item in items)
    pods = client.resources.get(api_version="v1", kind="Pod").get(namespace=NAMESPACE).to_dict()["items"]
    left.extend("Pod/%s" % pod["metadata"]["name"] for pod in pods)
    try:
        client.resources.get(api_version="v1", kind="Namespace").get(name=NAMESPACE)
        left.append("Namespace/%s" % NAMESPACE)
    except NotFoundError:
        pass
    return left


def running_trainjobs(fleet, host):
    client = fleet.dynamic(host)
    return [
        item["metadata"]["name"]
        for item in client.resources.get(api_version=TRAINER, kind="TrainJob").get(namespace=NAMESPACE, label_selector=LABEL).to_dict()["items"]
    ]


def test_a_cancelled_burnin_stops_every_cluster_and_cleanup_removes_what_it_created(fleet, tmp_path):
    reports = tmp_path / "reports"
    command = ["ansible-playbook", str(REPO / "playbooks" / "burnin.yml"), "-i", fleet.inventory, "--limit", ":".join(HOSTS), "--forks", "10"]
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    proc = subprocess.Popen(command + extra_vars(reports), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    try:
        deadline = time.monotonic() + 300
        while not all(running_trainjobs(fleet, host) for host in HOSTS):
            assert proc.poll() is None, proc.communicate()[0][-4000:]
            assert time.monotonic() < deadline, "the TrainJobs never appeared"
            time.sleep(1)
        time.sleep(2)  # the waits are open
        cancelled_at = time.monotonic()
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=120)[0]
        took = time.monotonic() - cancelled_at
        assert proc.returncode != 0, output[-4000:]
        # Stopped at once, not at the jobs' end or the timeout.
        assert took < 60, took
        # Said before the cancel: once it comes, Ansible shows nothing more of its worker.
        assert "gpufleet.burnin.cleanup -e burnin_run_id=%s" % RUN_ID in output.split("User interrupted execution", maxsplit=1)[0], output[-4000:]
        # The worker records, after the main process ended, what each cluster's run created.
        path = reports / RUN_ID / "cancelled.json"
        deadline = time.monotonic() + 30
        while not path.is_file() and time.monotonic() < deadline:
            time.sleep(0.5)
        record = json.loads(path.read_text())
        assert record["cancelled"] is True and record["run_ids"] == [RUN_ID] and sorted(record["clusters"]) == sorted(HOSTS), record
        for host in HOSTS:
            created = record["clusters"][host]
            assert created["namespace"] == NAMESPACE and "TrainJob/%s-%s" % (ENTRY, RUN_ID) in created["applied"], created
            assert "cancelled" in created["msg"], created
            # The cancel stops the burn-in, not the jobs: they are what cleanup removes.
            assert running_trainjobs(fleet, host) == ["%s-%s" % (ENTRY, RUN_ID)]
    finally:
        if proc.poll() is None:
            proc.kill()
        # Whatever failed above, what the run created goes: its 900 s jobs would hold the shared fleet's nodes.
        cleanup = ansible_playbook(REPO / "playbooks" / "cleanup.yml", "-i", fleet.inventory, "--limit", ":".join(HOSTS), *extra_vars(reports))
    assert cleanup.returncode == 0, cleanup.stdout[-4000:]
    deadline = time.monotonic() + 120
    left = dict((host, left_on(fleet, host)) for host in HOSTS)
    while any(left.values()) and time.monotonic() < deadline:
        time.sleep(2)
        left = dict((host, left_on(fleet, host)) for host in HOSTS)
    assert not any(left.values()), left
