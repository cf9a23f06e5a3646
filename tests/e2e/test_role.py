# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The fleet burn-in role on the real test fleet, through its playbooks, as a user runs them.

One module-scoped sequence of ansible-playbook runs (each test reads what it needs):

1. burnin.yml over the default fleet plus three more hosts: a stopped cluster (its API server is a closed port), a
   second entry on the aws cluster whose TrainJob never ends (Timeout), and the aws cluster through the fleet's
   namespace-scoped token. Two clusters complete (aws with a warning verdict, gcp passing), the fleet fails
   azure's TrainJob (verdict fail), the mismatching, stopped and slow clusters are reported, every pod's log is
   collected through the API servers (KWOK serves them), the AWX artifact (set_stats) holds every cluster;
2. the same again with a new run id: only the new TrainJob changes (idempotence);
3. --check --diff: the servers are untouched;
4. cleanup.yml of run 1, then of run 2: nothing of the entry is left.

Everything lives in its own namespace and entry name, so other tests sharing the fleet are not disturbed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent.parent
PLAYBOOKS = REPO / "playbooks"
NAMESPACE = "role-e2e"
ENTRY = "nccl-e2e"
RUN1, RUN2, RUN_CHECK = "e2e-1", "e2e-2", "e2e-check"
STOPPED = "aws-use1-h100-stopped"
# Two more inventory hosts on the aws cluster: one whose TrainJob never ends (Timeout), one with
# the fleet's namespace-scoped token (no nodes, no namespace creation).
SLOW, RESTRICTED = "aws-use1-h100-slow", "aws-use1-h100-restricted"
# And one in check mode only, with a namespace per run: the namespace does not exist yet.
FRESH = "aws-use1-h100-fresh"
AWS, GCP, AZURE, MISMATCH = "aws-use1-h100-a", "gcp-usc1-h100-a", "azure-eus-gb200-a", "aws-use1-h100-mismatch"
# 4 nodes, one with a slow NIC: its run fails and the isolation names the node (tests/e2e/test_isolation.py).
NODES = "aws-usw2-h100-nodes"
# Its logs show NCCL's silent fall back to sockets (tests/fleet/default-fleet.yml): the verdict fails it.
SOCKET = "aws-use1-h100-socket"
HOSTS = (AWS, GCP, AZURE, MISMATCH, NODES, SOCKET, STOPPED, SLOW, RESTRICTED, FRESH)
TRAINER = "trainer.kubeflow.org/v1alpha1"
KINDS = ((TRAINER, "TrainJob"), (TRAINER, "TrainingRuntime"), ("resource.nvidia.com/v1beta1", "ComputeDomain"), ("resource.k8s.io/v1", "ResourceClaimTemplate"))
# A user override on gcp_h100 (group_vars beside the extra inventory): preCommand and mpiArgs reach the TrainJob.
GCP_OVERRIDE = {"when": {"platform": {"equals": "gcp"}}, "preCommand": ["echo burn-in starts"], "mpiArgs": ["-x", "E2E_MARK=1"]}


class Run:
    def __init__(self, rc, output, report_dir, run_id):
        self.rc, self.output, self.run_id = rc, output, run_id
        path = Path(report_dir) / run_id / "summary.json"
        self.results = json.loads(path.read_text()) if path.is_file() else {}

    def stats(self):
        """The set_stats data (AWX artifacts), from the default callback's CUSTOM STATS section."""
        for line in self.output.splitlines():
            if line.strip().startswith("RUN: {"):
                return json.loads(line.strip()[len("RUN: ") :])
        raise AssertionError("no CUSTOM STATS in the output:\n" + self.output[-3000:])

    def __repr__(self):
        return "Run(rc=%s)\n%s" % (self.rc, self.output[-6000:])


class RoleFleet:
    def __init__(self, fleet, work):
        self.fleet, self.work = fleet, work
        self.reports = work / "reports"
        self.extra = work / "extra"
        (self.extra / "group_vars").mkdir(parents=True)
        # A stopped cluster: a copy of a context whose server is a closed port on loopback.
        kubeconfig = yaml.safe_load(Path(fleet.kubeconfig).read_text())
        for cluster in kubeconfig["clusters"]:
            cluster["cluster"]["server"] = "https://127.0.0.1:%d" % closed_port()
        dead = work / "stopped.kubeconfig"
        dead.write_text(yaml.safe_dump(kubeconfig))
        dead.chmod(0o600)
        common = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}
        hosts = {
            STOPPED: dict(common, burnin_kubeconfig=str(dead), burnin_context=AWS),
            # More GPUs per node than the nodes have: its pods stay Pending, so it never ends and never takes the GPUs
            # the other burn-ins of this cluster need (the scheduler is real).
            SLOW: dict(
                common,
                burnin_kubeconfig=fleet.kubeconfig,
                burnin_context=AWS,
                burnin_entry_name=ENTRY + "-slow",
                burnin_timeout=3,
                burnin_gpus_per_node=16,
                burnin_trainjob_annotations={"gpufleet.test/outcome": "none"},
            ),
            RESTRICTED: dict(
                common,
                burnin_kubeconfig=fleet.restricted_kubeconfig,
                burnin_context=AWS,
                burnin_namespace=fleet.restricted_namespace,
                burnin_create_namespace=False,
            ),
            FRESH: dict(common, burnin_kubeconfig=fleet.kubeconfig, burnin_context=AWS, burnin_entry_name=ENTRY + "-fresh", burnin_namespace_per_run=True),
        }
        (self.extra / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"aws_h100": {"hosts": hosts}}}}))
        # Settings of every host as group_vars, so that the hosts above can override them (extra vars could not).
        (self.extra / "group_vars" / "all.yml").write_text(
            yaml.safe_dump(
                {
                    "burnin_namespace": NAMESPACE,
                    "burnin_entry_name": ENTRY,
                    "burnin_report_dir": str(self.reports),
                    "burnin_poll_interval": 1,
                    "burnin_timeout": 90,
                }
            )
        )
        (self.extra / "group_vars" / "azure_gb200.yml").write_text(yaml.safe_dump({"burnin_enable_mnnvl": True}))
        (self.extra / "group_vars" / "gcp_h100.yml").write_text(yaml.safe_dump({"burnin_overrides": [GCP_OVERRIDE]}))

    def playbook(self, name, run_id, *args, exclude=(FRESH,), extra_env=None):
        inventories = ["-i", self.fleet.inventory, "-i", str(self.extra / "hosts.yml")]
        # This test's hosts only: the fleet may have clusters of other tests.
        inventories += ["--limit", ":".join(host for host in HOSTS if host not in exclude)]
        command = ["ansible-playbook", str(PLAYBOOKS / name)] + inventories + ["-e", "burnin_run_id=%s" % run_id, "--forks", "10"] + list(args)
        env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1", ANSIBLE_SHOW_CUSTOM_STATS="1", **(extra_env or {}))
        proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=900)
        return Run(proc.returncode, proc.stdout, self.reports, run_id)

    def get(self, cluster, kind, name, api_version=TRAINER):
        resource = self.fleet.dynamic(cluster).resources.get(api_version=api_version, kind=kind)
        return resource.get(name=name, namespace=NAMESPACE).to_dict()

    def terminating(self, cluster):
        """How many pods of the namespace are being deleted (a deletionTimestamp, their grace period not over)."""
        client = self.fleet.dynamic(cluster)
        pods = client.resources.get(api_version="v1", kind="Pod").get(namespace=NAMESPACE)
        return sum(1 for pod in pods.items if pod.metadata.deletionTimestamp)

    def snapshot(self, cluster):
        """(kind, name, what a writer left) of every object of the entry in the namespace, plus the namespace.

        What a writer left is the object's uid, generation, deletion, labels, annotations and the fields applied
        (server-side apply's managedFields entries): whatever an apply, a create or a delete by the role would change.
        Not the resourceVersion: the controllers move it with each status write (a failed TrainJob's status follows
        its JobSet long after its pods ended), with nobody applying anything."""
        from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

        client = self.fleet.dynamic(cluster)
        found = set()
        try:
            ns = client.resources.get(api_version="v1", kind="Namespace").get(name=NAMESPACE)
            found.add(("Namespace", NAMESPACE, written(ns.to_dict())))
        except NotFoundError:
            return found
        for api_version, kind in KINDS:
            try:
                resource = client.resources.get(api_version=api_version, kind=kind)
            except ResourceNotFoundError:
                continue
            for item in resource.get(namespace=NAMESPACE, label_selector="gpufleet.burnin/entry=%s" % ENTRY).items:
                found.add((kind, item.metadata.name, written(item.to_dict())))
        return found


def written(obj):
    """What a writer left on OBJ, as one string: see Role.snapshot."""
    meta = obj["metadata"]
    applied = sorted((f["manager"], json.dumps(f.get("fieldsV1"), sort_keys=True)) for f in meta.get("managedFields") or () if f.get("operation") == "Apply")
    left = (meta.get("uid"), meta.get("generation"), meta.get("deletionTimestamp"), meta.get("labels"), meta.get("annotations"), applied)
    return json.dumps(left, sort_keys=True)


def closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def env_of(container):
    return dict((item["name"], item.get("value")) for item in container.get("env") or [])


def worker(runtime):
    job = [j for j in runtime["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "node"][0]
    return job["template"]["spec"]["template"]["spec"]


@pytest.fixture(scope="module")
def role(fleet_crds, tmp_path_factory):
    return RoleFleet(fleet_crds, tmp_path_factory.mktemp("role-e2e"))


@pytest.fixture(scope="module")
def first(role):
    return role.playbook("burnin.yml", RUN1)


@pytest.fixture(scope="module")
def second(role, first):
    return role.playbook("burnin.yml", RUN2, exclude=(STOPPED, SLOW, RESTRICTED, FRESH))


def settled(role, quiet=5.0, timeout=90.0, clock=time.monotonic, sleep=time.sleep):
    """Every cluster's snapshot once it stopped changing for QUIET seconds and no pod of the namespace is being deleted:
    the controllers still end the pods of the runs before (JobSet deletes a failed job's workers; they end within
    their grace period, 30 s, long after the last change, and the TrainJob's status follows). The snapshots leave the
    controllers' status writes out; a check run racing those ends would still prove less. Fails when the snapshots still change, or pods are still
    being deleted, after TIMEOUT seconds: the --check run compared against a moving "before" would prove nothing.
    (CLOCK and SLEEP are injectable for tests/unit/test_e2e_settled.py.)"""
    start = clock()
    last, since = None, start
    while True:
        now = dict((c, role.snapshot(c)) for c in role.fleet.clusters)
        at = clock()
        deleting = sorted(c for c in role.fleet.clusters if role.terminating(c))
        if now != last:
            changed = sorted(c for c in now if last is None or now[c] != last.get(c))
            last, since = now, at
        elif at - since >= quiet and not deleting:
            return now
        if at - start >= timeout:
            why = "pods still being deleted in %s" % ", ".join(deleting) if deleting and at - since >= quiet else "%s still changed" % ", ".join(changed)
            pytest.fail("the clusters did not settle: %s after %s s (no %s quiet seconds)" % (why, timeout, quiet))
        sleep(1)


@pytest.fixture(scope="module")
def checked(role, second):
    before = settled(role)
    run = role.playbook("burnin.yml", RUN_CHECK, "--check", "--diff", exclude=(STOPPED, SLOW, RESTRICTED))
    after = dict((c, role.snapshot(c)) for c in role.fleet.clusters)
    return run, before, after


@pytest.fixture(scope="module")
def cleaned(role, checked):
    one = role.playbook("cleanup.yml", RUN1)
    between = dict((c, role.snapshot(c)) for c in role.fleet.clusters)
    two = role.playbook("cleanup.yml", RUN2, exclude=(STOPPED, SLOW, RESTRICTED, FRESH))
    return one, between, two


def test_outcome_per_cluster_and_the_fleet_goes_on(first):
    outcomes = dict((name, result["outcome"]) for name, result in first.results.items())
    assert outcomes == {
        AWS: "Complete",
        GCP: "Complete",
        AZURE: "Failed",
        MISMATCH: "Mismatch",
        NODES: "Complete",
        STOPPED: "Unreachable",
        SLOW: "Timeout",
        RESTRICTED: "Complete",
        SOCKET: "Complete",
    }, first
    # Failed clusters fail their host, after the summary: ansible-playbook exits 2.
    assert first.rc == 2, first
    assert "FailedJobs" in first.results[AZURE]["reason"]
    assert "Unreachable: Cannot reach https://127.0.0.1:" in first.results[STOPPED]["reason"]
    assert first.results[STOPPED]["stage"] == "detect"
    assert "no Complete or Failed condition after 3 s" in first.results[SLOW]["reason"]
    # The default stages: node, then fleet (isolation does nothing yet). The slow host's node stage never ended, so
    # its fleet stage was skipped; the others ran both.
    assert [(s["stage"], s["verdict"]) for s in first.results[SLOW]["stages"]] == [("node", "error")]
    assert first.results[SLOW]["reason"].startswith("node stage error: ")
    for name in (AWS, GCP, AZURE, RESTRICTED):
        assert [s["stage"] for s in first.results[name]["stages"]] == ["node", "fleet"], name


def test_summary_names_every_failed_cluster_and_why(first):
    header = "burn-in %s: 3 of 9 clusters passed, 6 failed: %s, %s, %s, %s, %s, %s; 2 with warnings: %s, %s" % (
        RUN1,
        MISMATCH,
        SLOW,
        SOCKET,
        STOPPED,
        NODES,
        AZURE,
        AWS,
        RESTRICTED,
    )
    assert header in first.output, first
    # outcome, verdict (- when the burn-in never ran), why
    for name, outcome, why in (
        (AZURE, "Failed      fail ", "verdict fail: TrainJob Failed: FailedJobs"),
        (MISMATCH, "Mismatch    -    ", "platform mismatch"),
        (STOPPED, "Unreachable -    ", "Cannot reach"),
        (SLOW, "Timeout     ", "no Complete or Failed condition after 3 s"),
        (SOCKET, "Complete    fail ", "inter-node transport is not the expected one: expected EFA through aws-ofi-nccl"),
    ):
        assert any(line.strip().strip('",').startswith("FAIL %-28s" % name) and outcome in line and why in line for line in first.output.splitlines()), name
    assert any(line.strip().strip('",').startswith("ok   %-28s" % AWS) and "Complete    warn " in line for line in first.output.splitlines())


def test_a_socket_fall_back_fails_naming_the_expected_transport(first):
    """Issue 13's Done-when: the socket fall back failed with a reason naming the expected transport."""
    verdict = first.results[SOCKET]["verdict"]
    proof = [check for check in verdict["checks"] if check["name"] == "transport"][0]
    assert verdict["verdict"] == "fail" and proof["verdict"] == "fail" and (proof["expected"], proof["seen"]) == ("efa", "socket")
    assert "expected EFA through aws-ofi-nccl (the OFI net plugin) for aws/h100 (p5.48xlarge)" in proof["reason"], proof
    assert "seen plain TCP sockets" in proof["reason"] or "Socket" in proof["reason"], proof
    assert proof["reason"] in verdict["reason"] and proof["reason"] in first.results[SOCKET]["reason"]
    # ~3 GB/s also misses the peak and every size of the range threshold (the check names each size).
    ranged = [check for check in verdict["checks"] if check["name"] == "range"][0]
    assert ranged["verdict"] == "fail" and ranged["threshold"] == "aws-h100-all-reduce-sizes"
    assert [row["size"] for row in ranged["rows"]] == [1 << 30, 2 << 30, 4 << 30, 8 << 30, 16 << 30] and "at 1G 3.1, 2G 3.1" in ranged["reason"]


def test_mismatch_is_clear_and_applies_nothing(role, first):
    result = first.results[MISMATCH]
    assert "platform mismatch: the group declares aws but the nodes are gcp" in result["reason"]
    assert "GPU mismatch: the group declares h100 but the GPU nodes are gb200" in result["reason"]
    assert result["detected"]["platform"] == "gcp" and result["detected"]["gpu_architecture"] == "gb200"
    assert role.snapshot(MISMATCH) == set()


def test_results_are_awx_artifacts_keyed_by_cluster(first):
    stats = first.stats()["burnin_results"]
    assert sorted(stats) == sorted([AWS, GCP, AZURE, MISMATCH, NODES, STOPPED, SLOW, RESTRICTED, SOCKET])
    assert stats[AWS]["trainjob"] == "%s-%s" % (ENTRY, RUN1) and stats[AWS]["outcome"] == "Complete"
    assert stats[AWS]["matched_overrides"][0]["when"] == {"platform": {"equals": "aws"}, "gpuArchitecture": {"equals": "h100"}}


def test_secrets_are_never_printed(role, first):
    kubeconfig = yaml.safe_load(Path(role.fleet.kubeconfig).read_text())
    secrets = [user["user"][key] for user in kubeconfig["users"] for key in ("token", "client-key-data") if key in user["user"]]
    assert secrets
    for secret in secrets:
        assert secret not in first.output


def test_logs_of_every_pod_are_collected_and_judged(first):
    """Trainer, JobSet and the Job controller make the launcher and worker pods, KWOK serves their logs: the role reads
    them through the API servers (the namespace-scoped token too) and judges them. Pods removed once the job ended
    (JobSet ends the MPI workers when the launcher is done) are counted and named."""
    for name in (AWS, GCP, AZURE, RESTRICTED):
        logs = first.results[name]["logs"]
        # The wait may not see a pod that came and went between two looks (a failed launcher): 2 or 3 pods.
        assert 2 <= logs["pods"] <= 3 and 1 <= logs["collected"] <= 3, (name, logs)
        assert logs["note"].startswith("logs of %d of %d pods collected" % (logs["collected"], logs["pods"])), (name, logs)
        # A removed pod whose log was never read is named, never silently dropped.
        assert logs["pods"] == logs["collected"] + len(logs["lost"]) + len(logs["errors"]), (name, logs)
    verdicts = dict((name, (r.get("verdict") or {}).get("verdict")) for name, r in first.results.items())
    assert verdicts[AWS] == verdicts[RESTRICTED] == "warn" and verdicts[GCP] == "pass" and verdicts[AZURE] == verdicts[NODES] == "fail"
    # The 4-node run's isolation names its slow node; a warned 2-node run has no pair to try but itself: no job.
    assert first.results[NODES]["isolation"]["culprits"] == ["%s-gpu-2" % NODES]
    # Its dcgm stage (inventory_vars in tests/fleet/default-fleet.yml) names the failing GPU's node; each stage its node.
    dcgm = [stage for stage in first.results[NODES]["stages"] if stage["stage"] == "dcgm"][0]
    assert dcgm["verdict"] == "fail" and "GPU 5" in dcgm["reason"] and "%s-gpu-3" % NODES in dcgm["reason"], dcgm
    assert first.results[NODES]["node_verdicts"]["%s-gpu-3" % NODES]["verdict"] == "fail"
    assert any(reason.startswith("isolation: ") for reason in first.results[NODES]["node_verdicts"]["%s-gpu-2" % NODES]["reasons"])
    assert first.results[AWS]["isolation"]["outcome"] == "undetermined" and first.results[AWS]["isolation"]["jobs"] == 0
    assert verdicts[SOCKET] == "fail"
    # Clusters that never ran their TrainJob have no verdict; the slow one's node stage ran out of time, and its fleet
    # stage never ran.
    assert verdicts[MISMATCH] is None and verdicts[STOPPED] is None and verdicts[SLOW] is None
    assert first.results[SLOW]["stages"][0]["verdict"] == "error" and first.results[SLOW]["outcome"] == "Timeout"


def test_aws_h100_objects(role, first):
    runtime = role.get(AWS, "TrainingRuntime", "%s-runtime" % ENTRY)
    container = worker(runtime)["containers"][0]
    assert str(container["resources"]["limits"]["vpc.amazonaws.com/efa"]) == "32"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "8"
    env = env_of(container)
    assert env["NCCL_DEBUG"] == "INFO" and env["NCCL_MNNVL_ENABLE"] == "0"
    assert runtime["metadata"]["labels"]["gpufleet.burnin/entry"] == ENTRY
    assert "gpufleet.burnin/run-id" not in runtime["metadata"]["labels"]
    trainjob = role.get(AWS, "TrainJob", "%s-%s" % (ENTRY, RUN1))
    assert trainjob["metadata"]["labels"]["gpufleet.burnin/run-id"] == RUN1
    assert trainjob["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": "%s-runtime" % ENTRY}
    trainer = trainjob["spec"]["trainer"]
    # The default workload, nccl-all-reduce of the catalog: its timeout, the image's mpirun (_lib/images.yaml), binary and sweep.
    assert trainer["command"] == ["timeout", "1800", "/opt/amazon/openmpi/bin/mpirun"]
    assert trainer["args"][:3] == ["-N", "8", "--allow-run-as-root"]
    # AWS's iterations as its EKS recipe runs them (_lib/workloads/nccl-tests-recipes.yaml: -n 100).
    assert trainer["args"][-15:] == ["/opt/nccl-tests/build/all_reduce_perf", "-b", "1K", "-e", "16G", "-f", "2", "-g", "1", "-n", "100", "-w", "5", "-c", "1"]
    assert first.results[AWS]["workload"] == "nccl-all-reduce" and first.results[AWS]["collective"] == "all_reduce"
    assert trainer["numNodes"] == 2 and trainer["numProcPerNode"] == 8
    assert [c["type"] for c in trainjob["status"]["conditions"] if c["status"] == "True"] == ["Complete"]


def test_gcp_h100_env_and_user_override_commands(role, first):
    trainjob = role.get(GCP, "TrainJob", "%s-%s" % (ENTRY, RUN1))
    trainer = trainjob["spec"]["trainer"]
    env = env_of(trainer)
    assert env["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    # The user override's preCommand wraps the command; its mpiArgs come right after the -x NCCL_MNNVL_ENABLE pair.
    assert trainer["command"] == ["/bin/bash", "-c"]
    script = trainer["args"][0]
    # GCP's default image (_lib/images.yaml): NGC PyTorch as NVIDIA AICR's GKE runtime runs it.
    assert script.startswith("echo burn-in starts\nexec timeout 1800 /usr/local/mpi/bin/mpirun -N 8 --allow-run-as-root ")
    assert " -x NCCL_MNNVL_ENABLE=0 -x E2E_MARK=1 -x " in script
    assert script.endswith(" /usr/local/bin/all_reduce_perf_mpi -b 1K -e 16G -f 2 -g 1 -n 20 -w 5 -c 1")
    # The fleet's launcher output follows that command: the wrapped script's sweep reached the verdict.
    assert first.results[GCP]["verdict"]["metrics"]["largest_size"] == 16 * 2**30
    assert first.results[GCP]["matched_overrides"][-1]["origin"] == "user"
    assert first.results[GCP]["instance_type"] == "a3-megagpu-8g"


def test_azure_gb200_claims_compute_domain_and_topology(role, first):
    domain = role.get(AZURE, "ComputeDomain", "%s-compute-domain" % ENTRY, api_version="resource.nvidia.com/v1beta1")
    assert domain["spec"]["channel"]["resourceClaimTemplate"]["name"] == "%s-channel" % ENTRY
    runtime = role.get(AZURE, "TrainingRuntime", "%s-runtime" % ENTRY)
    pod = worker(runtime)
    assert pod["resourceClaims"] == [{"name": "compute-domain", "resourceClaimTemplateName": "%s-channel" % ENTRY}]
    container = pod["containers"][0]
    assert container["resources"]["claims"] == [{"name": "compute-domain"}]
    # The platform layer found the nodes' shared RDMA device and requests it instead of the original's mlnxnics.
    assert str(container["resources"]["limits"]["rdma/rdma_shared_device_a"]) == "1"
    assert first.results[AZURE]["platform_data"]["nic_source"] == "nodes"
    assert first.results[AZURE]["instance_type"] == "Standard_ND128isr_NDR_GB200_v6"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert env_of(container)["NCCL_MNNVL_ENABLE"] == "1"
    trainjob = role.get(AZURE, "TrainJob", "%s-%s" % (ENTRY, RUN1))
    assert trainjob["metadata"]["annotations"]["gpufleet.burnin/topology-key"] == "kubernetes.azure.com/ppg"
    assert "NCCL_MNNVL_ENABLE=1" in trainjob["spec"]["trainer"]["args"]
    assert [c["type"] for c in trainjob["status"]["conditions"] if c["status"] == "True"] == ["Failed"]
    # Dependencies first, then the runtime, then the TrainJob: the node stage's own (GPUs only: no ComputeDomain,
    # rendering/node_local.py), then the fleet stage's.
    assert [name for name in first.results[AZURE]["applied"] if not name.startswith("Namespace/")] == [
        "TrainingRuntime/%s-node-runtime" % ENTRY,
        "TrainJob/%s-%s-node" % (ENTRY, RUN1),
        "ComputeDomain/%s-compute-domain" % ENTRY,
        "TrainingRuntime/%s-runtime" % ENTRY,
        "TrainJob/%s-%s" % (ENTRY, RUN1),
    ]


def test_second_run_only_adds_its_trainjob(second):
    assert second.rc == 2, second
    for name in (AWS, GCP, AZURE):
        # Each stage's TrainJob: the node stage's, then the fleet stage's; the runtimes are unchanged.
        assert second.results[name]["changed_objects"] == ["TrainJob/%s-%s-node" % (ENTRY, RUN2), "TrainJob/%s-%s" % (ENTRY, RUN2)], (name, second)
    assert second.results[AWS]["outcome"] == "Complete" and second.results[AZURE]["outcome"] == "Failed"


def test_second_run_is_compared_with_the_first(role, second):
    """burnin_baseline is empty: the second run's report finds the first run's under the same burnin_report_dir."""
    report = json.loads((Path(role.reports) / RUN2 / "burnin-report.json").read_text())
    assert report["baseline"]["run_id"] == RUN1, report["baseline"]
    assert report["baseline"]["file"] == str(Path(role.reports) / RUN1 / "burnin-report.json")
    compared = dict((cluster["cluster"], cluster["baseline"]) for cluster in report["clusters"])
    assert compared[AWS]["run_id"] == RUN1 and compared[AWS]["regression_percent"] == 10.0
    # Per node: the node and fleet stages' findings carry their peak busbw (both sweep to 16G); each node is compared
    # with itself in the same stage of run 1.
    nodes = compared[AWS]["nodes"]
    assert sorted(item["node"] for item in nodes) == sorted(first_nodes(role, AWS)) and compared[AWS]["regressed_nodes"] == [], compared[AWS]
    assert set(item["stage"] for item in nodes) == {"node", "fleet"}, nodes
    assert all(item["size"] == 16 << 30 and abs(item["change_percent"]) < 5 for item in nodes), nodes
    page = (Path(role.reports) / RUN2 / "burnin-report.html").read_text()
    assert '<table class="node-history"><caption>nodes vs baseline run %s</caption>' % RUN1 in page
    assert "; vs baseline run %s: " % RUN1 in second.output, second


def first_nodes(role, cluster):
    """The nodes run 1's verdict names for CLUSTER (those its fleet stage's findings are about)."""
    report = json.loads((Path(role.reports) / RUN1 / "burnin-report.json").read_text())
    found = [cluster_ for cluster_ in report["clusters"] if cluster_["cluster"] == cluster][0]["node_findings"]
    assert found and all(item["evidence"].get("busbw") for item in found), found
    return [item["node"] for item in found]


def test_check_mode_leaves_the_servers_untouched(checked):
    run, before, after = checked
    assert before == after
    assert all(("TrainJob", "%s-%s" % (ENTRY, RUN_CHECK)) not in set((k, n) for k, n, version in objects) for objects in after.values())
    assert run.results[AWS]["outcome"] == "Checked" and run.results[AWS]["check_mode"] is True
    # The dry run of the existing runtimes is a no-op; only the stages' TrainJobs would be created.
    assert run.results[AZURE]["changed_objects"] == ["TrainJob/%s-%s-node" % (ENTRY, RUN_CHECK), "TrainJob/%s-%s" % (ENTRY, RUN_CHECK)]
    assert "burn-in %s (check mode): 6 of 7 clusters passed, 1 failed: %s" % (RUN_CHECK, MISMATCH) in run.output, run
    # --diff shows each object's diff, headed by its cluster and the object, in the batch's one task.
    assert "+++ after: %s: TrainJob/%s-%s" % (AZURE, ENTRY, RUN_CHECK) in run.output and '"name": "%s-%s"' % (ENTRY, RUN_CHECK) in run.output


def test_check_mode_in_a_missing_namespace_creates_nothing(role, checked):
    run = checked[0]
    assert "namespace %s-%s does not exist yet: only it was dry-run" % (NAMESPACE, RUN_CHECK) in run.results[FRESH]["reason"]
    assert run.results[FRESH]["changed_objects"] == ["Namespace/%s-%s" % (NAMESPACE, RUN_CHECK)]
    namespaces = role.fleet.dynamic(AWS).resources.get(api_version="v1", kind="Namespace").get().items
    assert "%s-%s" % (NAMESPACE, RUN_CHECK) not in [ns.metadata.name for ns in namespaces]


def test_cleanup_removes_the_run_then_everything(role, cleaned):
    one, between, two = cleaned
    # The stopped cluster cannot be cleaned: exit 2, the others are.
    assert one.rc == 2 and two.rc == 0, (one, two)
    assert one.results[STOPPED]["outcome"] == "Unreachable"
    assert [name for name, r in one.results.items() if r["outcome"] != "Cleaned"] == [STOPPED]
    # The slow entry (only its node stage ran) and the namespace-scoped host cleaned their own objects.
    assert "%s: TrainJob/%s-slow-%s-node" % (NAMESPACE, ENTRY, RUN1) in one.results[SLOW]["deleted"]
    assert "%s: TrainingRuntime/%s-slow-node-runtime" % (NAMESPACE, ENTRY) in one.results[SLOW]["deleted"]
    assert sorted(n.split(": ")[-1] for n in one.results[RESTRICTED]["deleted"]) == [
        "TrainJob/%s-%s" % (ENTRY, RUN1),
        "TrainJob/%s-%s-node" % (ENTRY, RUN1),
        "TrainingRuntime/%s-node-runtime" % ENTRY,
        "TrainingRuntime/%s-runtime" % ENTRY,
    ]
    for name in (AWS, GCP, AZURE):
        names = set((kind, obj) for kind, obj, version in between[name])
        assert ("TrainJob", "%s-%s" % (ENTRY, RUN1)) not in names
        # Run 2 still uses the shared objects.
        assert ("TrainJob", "%s-%s" % (ENTRY, RUN2)) in names and ("TrainingRuntime", "%s-runtime" % ENTRY) in names
    assert ("ComputeDomain", "%s-compute-domain" % ENTRY) in set((k, n) for k, n, version in between[AZURE])
    deadline = time.time() + 60
    while time.time() < deadline and any(role.snapshot(c) for c in role.fleet.clusters):
        time.sleep(1)
    assert dict((c, role.snapshot(c)) for c in role.fleet.clusters) == dict((c, set()) for c in role.fleet.clusters)
    assert "Namespace/%s" % NAMESPACE in two.results[AZURE]["deleted"]


def test_render_writes_every_object_without_contacting_a_cluster(role, tmp_path):
    run = role.playbook("render.yml", "e2e-render", "-e", "burnin_render_dir=%s" % tmp_path, "-e", "burnin_kubeconfig=/nonexistent", exclude=())
    assert run.rc == 0, run
    # Even the stopped cluster renders: nothing is contacted.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([AWS, GCP, AZURE, MISMATCH, NODES, STOPPED, SLOW, RESTRICTED, FRESH, SOCKET])
    docs = list(yaml.safe_load_all((tmp_path / AZURE / "manifests.yaml").read_text()))
    assert [d["kind"] for d in docs] == ["Namespace", "ComputeDomain", "TrainingRuntime", "TrainJob"]
    plan = yaml.safe_load((tmp_path / AZURE / "plan.yml").read_text())
    # mlnx_per_node 0: planned without nodes, Azure takes the catalogue's rdma/ib (README deviation 14).
    assert plan["topology_key"] == "kubernetes.azure.com/ppg" and plan["gpus_per_node"] == 4 and plan["mlnx_per_node"] == 0


def test_namespace_scoped_token(first):
    result = first.results[RESTRICTED]
    assert result["outcome"] == "Complete" and result["namespace"] == "burnin-restricted"
    assert any("could not be listed" in warning for warning in result["warnings"])
    assert "Namespace/burnin-restricted" not in result["applied"]


def test_kubeconfig_mapping_is_redacted_even_at_vvv(role, tmp_path, cleaned):
    """A kubeconfig given as a mapping (a vaulted host var in real life) works and its token never shows."""
    kubeconfig = yaml.safe_load(Path(role.fleet.kubeconfig).read_text())
    tokens = [user["user"]["token"] for user in kubeconfig["users"] if "token" in user["user"]]
    assert tokens
    extra = tmp_path / "kubeconfig-as-var.json"
    extra.write_text(json.dumps({"burnin_kubeconfig": kubeconfig}))
    run = role.playbook(
        "burnin.yml",
        "e2e-dict",
        "-vvv",
        "--limit",
        AWS,
        "-e",
        "@%s" % extra,
        "-e",
        "burnin_wait=false",
        "-e",
        "burnin_collect_logs=false",
        "-e",
        "burnin_namespace=%s-dict" % NAMESPACE,
        "-e",
        "burnin_namespace_per_run=false",
    )
    assert run.rc == 0 and run.results[AWS]["outcome"] == "Applied", run
    for token in tokens:
        assert token not in run.output
    cleanup = role.playbook("cleanup.yml", "e2e-dict", "--limit", AWS, "-e", "@%s" % extra, "-e", "burnin_namespace=%s-dict" % NAMESPACE)
    assert cleanup.rc == 0 and "Namespace/%s-dict" % NAMESPACE in cleanup.results[AWS]["deleted"], cleanup
