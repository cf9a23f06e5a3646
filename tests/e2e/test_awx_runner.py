# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The burn-in as AWX runs it: examples/awx/ through ansible-runner (AWX's job engine) on the test fleet.

Each job gets a private data directory laid out, and ansible-runner called, as AWX 24.6.1's job code does
(awx/main/tasks/jobs.py: BaseTask.run, RunJob.build_args, build_private_data_files; docs/awx.md, "What the tests
show"):

    project/burnin.yml         examples/awx/project/burnin.yml
    inventory/hosts            an executable script printing the inventory as JSON (AWX's inventory script), passed
                               as runner's `inventory`; the hosts carry no kubeconfig path, so every cluster is reached
                               through the credential
    env/extravars              job template extra_vars, AWX's meta vars (awx_*, tower_*), the survey answers as an API
                               launch gives them (answers of AWX's types, defaults that pass AWX's answer check);
                               everything but the template's own values tagged !unsafe, as AWX does
    env/cmdline                AWX's ansible-playbook arguments: --check, -u root, --forks, -l <limit>, -v..., and the
                               credential's -e @env/tmp* (its extra_vars injector)
    env/settings               job_timeout and suppress_ansible_output, as AWX writes them
    env/tmp*                   the credential's file (the kubeconfig, mode 0600) and its extra_vars file
The environment (the credential's env injectors) is runner's `envvars` parameter with suppress_env_files, and a
machine credential's key is runner's `ssh_key` parameter (ansible-runner hands it to ssh-agent through a FIFO): AWX
writes neither env/envvars nor env/ssh_key.

Jobs: one over the whole fleet plus an unreachable cluster at -vvv; a check-mode job with a limit; the inventory sliced
in two (job slicing) run concurrently with a run id the user set; two one-cluster jobs pin known issues as strict
expected failures (docs/awx.md). Every cluster's TrainJob ends on its own (fleet spec), each job has its own
namespace (the slices share one on disjoint clusters), and the namespaces are deleted at the end.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import importlib.util
import json
import os
import re
import stat
import subprocess
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

ansible_runner = pytest.importorskip("ansible_runner")

# AWX's own survey rules (tests/packaging/awx_rules.py): how an API launch checks answers and fills in defaults.
_RULES = importlib.util.spec_from_file_location("awx_rules", str(Path(__file__).resolve().parent.parent / "packaging" / "awx_rules.py"))
awx_rules = importlib.util.module_from_spec(_RULES)
_RULES.loader.exec_module(awx_rules)

REPO = Path(__file__).resolve().parent.parent.parent
AWX = REPO / "examples" / "awx"
SPEC_FILE = REPO / "roles" / "burnin" / "meta" / "argument_specs.yml"
AWS, GCP, AZURE, MISMATCH = "aws-use1-h100-a", "gcp-usc1-h100-a", "azure-eus-gb200-a", "aws-use1-h100-mismatch"
# In group aws_h100; its kubeconfig context points at a port nothing listens on (loopback only).
UNREACHABLE = "aws-use1-h100-unreachable"
# Its logs show NCCL's silent fall back to sockets (tests/fleet/default-fleet.yml): its verdict fails.
SOCKET = "aws-use1-h100-socket"
FLEET_HOSTS = {AWS, GCP, AZURE, MISMATCH, UNREACHABLE, SOCKET}
NS_MAIN, NS_CHECK, NS_SLICES = "awx-main", "awx-check", "awx-slices"
# A stage's bound, far above its jobs' 10-20 s: three jobs run at once beside the fleet on two cores (CI saw one pass 60 s).
JOB_TIMEOUT = 240
PULL_SECRET = "awx-regcred"
# A threshold of the user's own, as JSON text: moves aws (262.4 GB/s, warn with the published thresholds) to pass.
THRESHOLDS = [{"platform": "aws", "gpu_architecture": "h100", "collective": "all_reduce", "metric": "peak", "pass": 250, "warn": 200}]


def load(name):
    return json.loads((AWX / name).read_text())


SURVEY = load("survey-spec.json")["spec"]
JOB_TEMPLATE = load("job-template.json")
CREDENTIAL_TYPE = load("credential-type.json")


# ------------------------------------------------------------------------------------------------ AWX's side


class SafeStringDumper(yaml.SafeDumper):
    """AWX's extra vars file: every string (keys included) tagged !unsafe, as AWX writes it."""

    def represent_data(self, data):
        if isinstance(data, str):
            return self.represent_scalar("!unsafe", data)
        return super(SafeStringDumper, self).represent_data(data)


def safe_dump(variables, safe_dict=None):
    """Top-level values equal to the job template's own stay plain (trusted); the rest is !unsafe."""
    safe_dict = safe_dict or {}
    parts = []
    for key, value in variables.items():
        dumper = yaml.SafeDumper if key in safe_dict and safe_dict[key] == value else SafeStringDumper
        parts.append(yaml.dump_all([{key: value}], None, Dumper=dumper, default_flow_style=False))
    return "".join(parts)


def survey_answers(**answers):
    """An API launch as AWX takes it: the caller answers every required question (the survey's default as the answer
    unless given), in AWX's types (integers, a multiselect as a list); AWX checks the answers and adds the defaults
    that pass its check to the unanswered optional questions (awx_rules.sent_when_unanswered, "api")."""
    asked = dict((q["variable"], q) for q in SURVEY)
    assert not set(answers) - set(asked), "not survey questions: %s" % sorted(set(answers) - set(asked))
    launch = dict((v, q["default"]) for v, q in asked.items() if q["required"])
    launch.update((k, str(v) if isinstance(v, Path) else v) for k, v in answers.items())
    errors = awx_rules.launch_errors({"spec": SURVEY}, launch)
    assert not errors, "AWX would refuse this launch: %s" % errors
    sent = {}
    for v, q in asked.items():
        sent.update(awx_rules.sent_when_unanswered(q, "api") if v not in launch else {v: launch[v]})
    return sent


def awx_inventory(fleet_inventory, hosts, unreachable_context):
    """AWX's inventory script data for the fleet's groups and the given hosts (a slice), plus the unreachable host.
    burnin_kubeconfig is dropped from the hosts: the credential is the only way to the clusters."""
    doc = yaml.safe_load(Path(fleet_inventory).read_text())["all"]
    data = {"_meta": {"hostvars": {}}}

    def walk(name, group):
        entry = {"hosts": [], "children": sorted(group.get("children") or {}), "vars": dict(group.get("vars") or {})}
        members = dict(group.get("hosts") or {})
        if name == "aws_h100":
            members[UNREACHABLE] = {
                "ansible_connection": "local",
                "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                "burnin_context": unreachable_context,
            }
        for host, hostvars in members.items():
            if host in hosts:
                entry["hosts"].append(host)
                data["_meta"]["hostvars"][host] = dict(
                    (k, v) for k, v in (hostvars or {}).items() if k not in ("burnin_kubeconfig", "gpufleet_test_restricted_kubeconfig")
                )
        data[name] = entry
        for child, sub in (group.get("children") or {}).items():
            if child not in data or sub:
                walk(child, sub or {})

    walk("all", doc)
    return data


def awx_slices(hosts, count):
    """AWX job slicing: the inventory's hosts by name, slice n (1-based) holds every count-th from n-1."""
    ordered = sorted(hosts)
    return [set(ordered[n::count]) for n in range(count)]


def write_private(path, text):
    path.write_text(text)
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)


class AwxJob:
    """One AWX job: its private data directory, its ansible-runner run and what it left there."""

    def __init__(self, root, ident, inventory, extra_vars, kubeconfig, ssh_key):
        self.ident = ident
        self.pdd = root / ident
        env = self.pdd / "env"
        (self.pdd / "project").mkdir(parents=True)
        (self.pdd / "inventory").mkdir()
        env.mkdir()
        for name in ("burnin.yml", "render.yml"):
            (self.pdd / "project" / name).write_text((AWX / "project" / name).read_text())
        script = self.pdd / "inventory" / "hosts"
        script.write_text("#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint(%r)\n" % json.dumps(inventory))
        script.chmod(stat.S_IRWXU)
        # The credential type's injectors, rendered as AWX renders them (sandboxed Jinja2, files under env/).
        jinja = ImmutableSandboxedEnvironment()
        inputs = {"kubeconfig": kubeconfig}
        handle, self.credential_file = tempfile.mkstemp(dir=str(env))
        os.close(handle)
        write_private(Path(self.credential_file), jinja.from_string(CREDENTIAL_TYPE["injectors"]["file"]["template.kubeconfig"]).render(inputs))
        tower = {"filename": {"kubeconfig": self.credential_file}}
        envvars = dict((k, jinja.from_string(v).render(inputs, tower=tower)) for k, v in CREDENTIAL_TYPE["injectors"]["env"].items())
        cred_vars = dict((k, jinja.from_string(v).render(inputs, tower=tower)) for k, v in CREDENTIAL_TYPE["injectors"]["extra_vars"].items())
        handle, self.credential_vars = tempfile.mkstemp(dir=str(env))
        os.close(handle)
        write_private(Path(self.credential_vars), safe_dump(cred_vars))
        self.envvars = envvars
        write_private(env / "extravars", safe_dump(extra_vars, JOB_TEMPLATE["extra_vars"]))
        self.ssh_key = ssh_key
        self.inputs = {Path(self.credential_file)}
        self.runner = None

    def args(self, limit="", verbosity=0, check=False, forks=None):
        """RunJob.build_args (awx/main/tasks/jobs.py:950-1021) for a job without a machine credential, then the
        credential's extra_vars file (CredentialType.inject_credential appends -e @file)."""
        args = (["--check"] if check else []) + ["-u", "root"]
        forks = JOB_TEMPLATE["forks"] if forks is None else forks
        if forks:
            args.append("--forks=%d" % forks)
        if limit:
            args.extend(["-l", limit])
        if verbosity:
            args.append("-" + "v" * min(5, verbosity))
        return args + ["-e", "@" + self.credential_vars]

    def run(self, limit="", verbosity=0, check=False, forks=None):
        env = self.pdd / "env"
        # BaseTask.write_args_file: env/cmdline, ansible-runner's args2cmdline quoting.
        (env / "cmdline").write_text(ansible_runner.utils.args2cmdline(*self.args(limit, verbosity, check, forks)))
        # BaseTask.run's env/settings; job_timeout stands for an administrator's Default Job Timeout (the template's 0).
        # suppress_output_file stays False here (AWX sets it): the test reads artifacts/<ident>/stdout.
        (env / "settings").write_text(json.dumps({"job_timeout": 600, "suppress_ansible_output": True, "suppress_output_file": False}))
        t0 = time.time()
        self.runner = ansible_runner.run(
            private_data_dir=str(self.pdd),
            ident=self.ident,
            playbook="burnin.yml",
            inventory=str(self.pdd / "inventory" / "hosts"),
            envvars=self.envvars,
            suppress_env_files=True,
            ssh_key=self.ssh_key,
            quiet=True,
        )
        self.seconds = time.time() - t0
        return self

    @property
    def artifacts(self):
        return self.pdd / "artifacts" / self.ident

    def stats_event(self):
        found = [e for e in self.runner.events if e.get("event") == "playbook_on_stats"]
        assert len(found) == 1, self
        return found[0]["event_data"]

    def results(self):
        return self.stats_event()["artifact_data"]["burnin_results"]

    def stdout(self):
        return (self.artifacts / "stdout").read_text()

    def __repr__(self):
        tail = self.stdout()[-6000:] if self.runner else ""
        status, rc = getattr(self.runner, "status", None), getattr(self.runner, "rc", None)
        return "AwxJob(%s, status=%s, rc=%s)\n%s" % (self.ident, status, rc, tail)


class AwxFleet:
    def __init__(self, fleet, root):
        self.fleet, self.root = fleet, root
        kubeconfig = yaml.safe_load(Path(fleet.kubeconfig).read_text())
        # The credential's one kubeconfig: every fleet context plus the unreachable cluster's (a closed port, a token
        # of its own that must not leak either).
        self.unreachable_token = uuid.uuid4().hex
        kubeconfig["clusters"].append({"name": UNREACHABLE, "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}})
        kubeconfig["users"].append({"name": UNREACHABLE, "user": {"token": self.unreachable_token}})
        kubeconfig["contexts"].append({"name": UNREACHABLE, "context": {"cluster": UNREACHABLE, "user": UNREACHABLE}})
        self.kubeconfig = yaml.safe_dump(kubeconfig)
        key = root / "machine_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "awx-test", "-f", str(key)], check=True)
        self.ssh_key = key.read_text()
        key.unlink()
        self.pull_password = uuid.uuid4().hex
        self.dockerconfig = base64.b64encode(
            json.dumps(
                {
                    "auths": {
                        "registry.example": {
                            "username": "awx",
                            "password": self.pull_password,
                            "auth": base64.b64encode(("awx:" + self.pull_password).encode()).decode(),
                        }
                    }
                }
            ).encode()
        ).decode()
        self.jobs = []
        self.namespaces = set()

    def secrets(self):
        """Every credential the jobs hold: tokens, the kubeconfig's key material, the SSH key, the pull secret."""
        found = {"unreachable token": self.unreachable_token, "pull secret password": self.pull_password, "pull secret": self.dockerconfig}
        for name in self.fleet.clusters:
            cluster = self.fleet.cluster(name)
            for field in ("admin_token", "restricted_token", "components_token"):
                if cluster.get(field):
                    found["%s %s" % (name, field)] = cluster[field]
        for line in self.ssh_key.splitlines():
            if line and not line.startswith("-----"):
                found["ssh key line"] = line
        for line in self.kubeconfig.splitlines():
            if "-data:" in line or "token:" in line:
                found["kubeconfig line " + line.split(":")[0].strip()] = line.split(":", 1)[1].strip()
        found["kubeconfig"] = self.kubeconfig.strip()
        return found

    def pull_secret(self, namespace):
        """A registry Secret in the job's namespace, as a user's cluster has one: nothing of it may reach the job."""
        client = self.fleet
        for name in self.fleet.clusters:
            core = client.dynamic(name).resources.get(api_version="v1", kind="Namespace")
            core.server_side_apply(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}, field_manager="awx-test")
            secrets = client.dynamic(name).resources.get(api_version="v1", kind="Secret")
            secrets.server_side_apply(
                namespace=namespace,
                field_manager="awx-test",
                body={
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "type": "kubernetes.io/dockerconfigjson",
                    "metadata": {"name": PULL_SECRET, "namespace": namespace},
                    "data": {".dockerconfigjson": self.dockerconfig},
                },
            )
        self.namespaces.add(namespace)

    def job(self, ident, answers, hosts=None, workflow=None, launch_vars=None):
        extra = dict(JOB_TEMPLATE["extra_vars"])
        job_id = 100 + len(self.jobs)
        meta = {
            "job_id": job_id,
            "job_launch_type": "workflow" if workflow else "manual",
            "job_template_name": JOB_TEMPLATE["name"],
            "inventory_name": JOB_TEMPLATE["inventory"],
            "user_name": "admin",
            "execution_node": "localhost",
        }
        if workflow:
            meta.update(workflow_job_id=workflow, workflow_job_name=JOB_TEMPLATE["name"])
        for key, value in meta.items():
            extra["awx_" + key] = extra["tower_" + key] = value
        extra.update(answers)
        # Launch-time extra vars (ask_variables_on_launch): a short poll keeps the test quick.
        extra.update(launch_vars or {"burnin_poll_interval": "2"})
        job = AwxJob(self.root, ident, awx_inventory(self.fleet.inventory, hosts or FLEET_HOSTS, UNREACHABLE), extra, self.kubeconfig, self.ssh_key)
        self.jobs.append(job)
        self.namespaces.add(answers["burnin_namespace"])
        return job

    def namespace_exists(self, cluster, namespace):
        from kubernetes.dynamic.exceptions import NotFoundError

        try:
            self.fleet.dynamic(cluster).resources.get(api_version="v1", kind="Namespace").get(name=namespace)
            return True
        except NotFoundError:
            return False

    def cleanup(self):
        """Delete every namespace a job used (and so its TrainJobs), and wait until they are gone."""
        from kubernetes.dynamic.exceptions import NotFoundError

        pending = []
        for name in self.fleet.clusters:
            ns = self.fleet.dynamic(name).resources.get(api_version="v1", kind="Namespace")
            for namespace in self.namespaces:
                try:
                    ns.delete(name=namespace, body={"propagationPolicy": "Foreground"})
                    pending.append((name, namespace))
                except NotFoundError:
                    pass
        deadline = time.time() + 90
        while pending and time.time() < deadline:
            pending = [p for p in pending if self.namespace_exists(*p)]
            time.sleep(1)
        return pending


def run_ids(results):
    return set(r["run_id"] for r in results.values())


def verdict(result):
    return (result.get("verdict") or {}).get("verdict")


# ------------------------------------------------------------------------------------------------ the jobs


@pytest.fixture(scope="module")
def awx(fleet, tmp_path_factory):
    env = AwxFleet(fleet, tmp_path_factory.mktemp("awx-runner"))
    yield env
    left = env.cleanup()
    assert not left, "namespaces not deleted: %s" % left


@pytest.fixture(scope="module")
def main_job(awx):
    """The whole fleet and the unreachable cluster, answers in AWX's types (the multiselect a list), at -vvv."""
    awx.pull_secret(NS_MAIN)
    answers = survey_answers(
        burnin_namespace=NS_MAIN,
        burnin_nodes=2,
        burnin_timeout=JOB_TIMEOUT,
        burnin_env="NCCL_DEBUG=WARN\nGPUFLEET_AWX=main",
        burnin_thresholds=json.dumps(THRESHOLDS),
        burnin_report_formats=["json", "junit", "html"],
        burnin_fail_on_error="true",
        # Reports inside the private data directory: the secret scan reads them too.
        burnin_report_dir=awx.root / "main" / "reports",
    )
    return awx.job("main", answers).run(verbosity=3)


@pytest.fixture(scope="module")
def concurrent_jobs(awx, main_job):
    """Job slicing in two (disjoint clusters, so no two jobs compete for a cluster's GPUs), run id set by the user,
    and beside them a check-mode job limited to two clusters (a server dry run: no pods)."""
    run_id = "wf-" + uuid.uuid4().hex[:8]
    slices = awx_slices(FLEET_HOSTS, 2)
    sliced = [
        awx.job("slice%d" % (n + 1), survey_answers(burnin_namespace=NS_SLICES, burnin_run_id=run_id, burnin_timeout=JOB_TIMEOUT), hosts=hosts, workflow=900)
        for n, hosts in enumerate(slices)
    ]
    check = awx.job("check", survey_answers(burnin_namespace=NS_CHECK, burnin_timeout=JOB_TIMEOUT))
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = [
            pool.submit(sliced[0].run, verbosity=0),
            pool.submit(sliced[1].run, verbosity=2),
            pool.submit(check.run, verbosity=1, check=True, limit="gpu_h100:!%s:!%s" % (MISMATCH, UNREACHABLE)),
        ]
        for future in runs:
            future.result()
    return {"run_id": run_id, "slices": slices, "sliced": sliced, "check": check}


def test_failed_cluster_fails_the_job_and_the_others_finish(main_job):
    runner = main_job.runner
    assert (runner.status, runner.rc) == ("failed", 2), main_job
    assert (main_job.artifacts / "status").read_text().strip() == "failed"
    results = main_job.results()
    assert set(results) == FLEET_HOSTS, main_job
    outcomes = dict((host, r["outcome"]) for host, r in results.items())
    assert outcomes == {AWS: "Complete", GCP: "Complete", AZURE: "Failed", MISMATCH: "Mismatch", UNREACHABLE: "Unreachable", SOCKET: "Complete"}, results
    # The survey's thresholds (JSON text) moved aws from warn to pass; no threshold passes a fall back to sockets.
    assert (verdict(results[AWS]), verdict(results[GCP]), verdict(results[AZURE]), verdict(results[SOCKET])) == ("pass", "pass", "fail", "fail"), results
    stats = main_job.stats_event()
    assert set(stats["failures"]) == {AZURE, MISMATCH, UNREACHABLE, SOCKET}, stats
    assert not stats["dark"] and {AWS, GCP} <= set(stats["ok"])


def test_private_data_dir_is_laid_out_as_awx_lays_it_out(main_job, concurrent_jobs):
    """awx/main/tasks/jobs.py: the environment is a runner parameter (no env/envvars), the key too (no env/ssh_key),
    and limit, forks, verbosity and --check are on the command line (env/cmdline)."""
    check = concurrent_jobs["check"]
    for job in (main_job, check):
        env = job.pdd / "env"
        assert not (env / "envvars").exists() and not (env / "ssh_key").exists(), sorted(env.iterdir())
        assert json.loads((env / "settings").read_text())["suppress_ansible_output"] is True
    main_args = (main_job.pdd / "env" / "cmdline").read_text()
    assert main_args == "-u root --forks=%d -vvv -e @%s" % (JOB_TEMPLATE["forks"], main_job.credential_vars), main_args
    check_args = (check.pdd / "env" / "cmdline").read_text()
    assert check_args.startswith("--check -u root --forks=%d -l " % JOB_TEMPLATE["forks"]) and " -v -e @" in check_args, check_args
    # The credential's environment reached the job all the same: every cluster was reached through its kubeconfig.
    assert main_job.results()[AWS]["outcome"] == "Complete"


def test_a_job_is_laid_out_as_awx_lays_it_out_without_any_cluster(tmp_path):
    """The same layout checks as above on a job with no host (no fleet needed): AWX's env/cmdline, env/settings, no
    env/envvars or env/ssh_key, the credential's environment a runner parameter, answers AWX would refuse refused."""
    key = tmp_path / "machine_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "awx-test", "-f", str(key)], check=True)
    inventory = {"_meta": {"hostvars": {}}, "all": {"hosts": [], "children": []}}
    answers = survey_answers(burnin_namespace="awx-layout", burnin_report_formats=["json"])
    job = AwxJob(tmp_path, "layout", inventory, dict(JOB_TEMPLATE["extra_vars"], **answers), "apiVersion: v1\nkind: Config\n", key.read_text())
    job.run(limit="gpu_h100", verbosity=2, check=True)
    assert (job.runner.status, job.runner.rc) == ("successful", 0), job
    env = job.pdd / "env"
    assert sorted(p.name for p in env.iterdir() if not p.name.startswith("tmp")) == ["cmdline", "extravars", "settings"]
    assert (env / "cmdline").read_text() == "--check -u root --forks=%d -l gpu_h100 -vv -e @%s" % (JOB_TEMPLATE["forks"], job.credential_vars)
    assert job.envvars["K8S_AUTH_KUBECONFIG"] == job.credential_file
    # A survey answer AWX would refuse never reaches a job.
    with pytest.raises(AssertionError, match="expected to be an integer"):
        survey_answers(burnin_nodes="3")
    with pytest.raises(AssertionError, match="expected to be a list"):
        survey_answers(burnin_report_formats="json\nhtml")


def test_unreachable_cluster_is_reported_as_such(main_job):
    result = main_job.results()[UNREACHABLE]
    assert result["stage"] == "detect" and "127.0.0.1:1" in result["reason"], result
    failed = [e for e in main_job.runner.events if e.get("event") == "runner_on_failed" and e["event_data"].get("host") == UNREACHABLE]
    assert failed and "Unreachable" in failed[-1]["event_data"]["res"]["msg"], failed


def test_survey_answers_reach_the_clusters(main_job, awx):
    results = main_job.results()
    assert len(run_ids(results)) == 1 and re.match(r"^\d{8}-\d{6}$", run_ids(results).pop()), results
    assert set(r["namespace"] for r in results.values()) == {NS_MAIN}
    runtimes = awx.fleet.dynamic(GCP).resources.get(api_version="trainer.kubeflow.org/v1alpha1", kind="TrainingRuntime")
    text = json.dumps([item.to_dict() for item in runtimes.get(namespace=NS_MAIN).items])
    assert '"name": "GPUFLEET_AWX", "value": "main"' in text
    # The multiselect's list answer: all three reports.
    report = main_job.pdd / "reports" / run_ids(results).pop()
    assert {"summary.json"} < set(p.name for p in report.iterdir()), sorted(report.iterdir())
    assert {p.suffix for p in report.iterdir()} >= {".json", ".xml", ".html"}, sorted(report.iterdir())


def test_check_mode_job_with_a_limit_succeeds_and_stores_nothing(concurrent_jobs, awx):
    check = concurrent_jobs["check"]
    assert (check.runner.status, check.runner.rc) == ("successful", 0), check
    results = check.results()
    assert set(results) == {AWS, GCP, SOCKET}, results
    assert all(r["outcome"] == "Checked" and r["check_mode"] for r in results.values()), results
    assert not any(awx.namespace_exists(c, NS_CHECK) for c in (AWS, GCP, SOCKET))


def test_sliced_jobs_merge_into_every_cluster_once_with_one_run_id(concurrent_jobs):
    slices, sliced = concurrent_jobs["slices"], concurrent_jobs["sliced"]
    assert not slices[0] & slices[1] and slices[0] | slices[1] == FLEET_HOSTS
    merged = {}
    for hosts, job in zip(slices, sliced):
        results = job.results()
        # Each slice knows only its own clusters, and a slice with a failed cluster fails.
        assert set(results) == hosts, job
        assert (job.runner.status, job.runner.rc) == ("failed", 2), job
        assert not set(merged) & set(results)
        merged.update(results)
    assert set(merged) == FLEET_HOSTS
    assert run_ids(merged) == {concurrent_jobs["run_id"]}
    # What a workflow's next node gets instead (awx/main/models/workflow.py:739-753 get_effective_artifacts): the
    # slices' artifacts applied one over the other in the order they finished, so only the last one's clusters.
    for order in (sliced, sliced[::-1]):
        delivered = {}
        for job in order:
            delivered.update({"burnin_results": job.results()})
        assert set(delivered["burnin_results"]) == set(order[-1].results()) != FLEET_HOSTS
    verdicts = dict((host, verdict(r)) for host, r in merged.items())
    # The published thresholds this time: aws warns (and passes).
    assert verdicts == {AWS: "warn", GCP: "pass", AZURE: "fail", MISMATCH: None, UNREACHABLE: None, SOCKET: "fail"}, merged


def test_an_empty_text_answer_is_an_unanswered_question(awx, concurrent_jobs):
    """An API client (or a question with an empty default) sends "" for an optional text question; ansible-core 2.19+
    reads AWX's !unsafe '' as null, which the role takes as unset (docs/awx.md)."""
    job = awx.job("empty", survey_answers(burnin_namespace=NS_CHECK, burnin_run_id=""))
    job.run(check=True, limit=GCP)
    assert (job.runner.status, job.results()[GCP]["outcome"]) == ("successful", "Checked"), job


def test_image_pull_secrets_answer_runs(awx, concurrent_jobs):
    """A real run (a check-mode dry run does not show it), on one cluster, after the other jobs."""
    awx.pull_secret("awx-pull")
    job = awx.job("pull-secrets", survey_answers(burnin_namespace="awx-pull", burnin_image_pull_secrets=PULL_SECRET, burnin_timeout=JOB_TIMEOUT))
    job.run(limit=GCP)
    assert (job.runner.status, job.results()[GCP]["outcome"]) == ("successful", "Complete"), job


def test_no_secret_in_any_file_of_any_job(awx, main_job, concurrent_jobs):
    secrets = awx.secrets()
    assert len(awx.jobs) >= 4 and all(job.runner for job in awx.jobs)
    scanned = 0
    for job in awx.jobs:
        assert any(job.artifacts.joinpath("job_events").iterdir())
        for path in job.pdd.rglob("*"):
            # The credential's inputs as AWX writes them (and ansible-runner's key FIFO) are the secrets themselves.
            if path in job.inputs or not path.is_file() or stat.S_ISFIFO(path.lstat().st_mode):
                continue
            text = path.read_text(errors="replace")
            scanned += 1
            for what, value in secrets.items():
                assert value not in text, "%s found in %s" % (what, path)
        for event in job.runner.events:  # what AWX stores in its database
            text = json.dumps(event)
            assert not [what for what, value in secrets.items() if value in text], event.get("uuid")
    assert scanned > 10 * len(awx.jobs)


# ------------------------------------------------------------------------------------------------ examples in step


def spec_options():
    return yaml.safe_load(SPEC_FILE.read_text())["argument_specs"]["main"]["options"]


# Survey defaults that differ from the role's on purpose, and why.
DELIBERATE = {}


def as_role_value(question, answer, option):
    """An answer as the role reads it (gpufleet.burnin.burnin_start): lists from text, booleans from strings."""
    kind = option.get("type", "str")
    if question["type"] == "multiselect" or (kind in ("list", "raw") and isinstance(option.get("default"), list)):
        return [x for x in re.split(r"[\n,]", answer) if x]
    if kind == "bool":
        return answer == "true"
    if kind == "int":
        return int(answer)
    return answer


@pytest.mark.parametrize("question", SURVEY, ids=[q["variable"] for q in SURVEY])
def test_survey_question_is_in_step_with_the_argument_spec(question):
    option = spec_options()[question["variable"]]
    if option.get("choices") and question["type"] in ("multiplechoice", "multiselect"):
        # The role's "" (unset) is the unanswered question: AWX then sends nothing.
        assert sorted(question["choices"]) == sorted(str(c) for c in option["choices"] if c != ""), question["variable"]
    # An empty default is no default: no launch path sends it (tests/packaging/awx_rules.py sent_when_unanswered).
    if question.get("default", "") != "" and question["variable"] not in DELIBERATE:
        assert as_role_value(question, str(question["default"]), option) == option.get("default", ""), question["variable"]
    if option.get("required"):
        assert question["required"], question["variable"]


def test_job_template_extra_vars_are_role_options_of_their_type():
    options = spec_options()
    for name, value in JOB_TEMPLATE["extra_vars"].items():
        kind = options[name].get("type", "str")
        assert isinstance(value, {"int": int, "bool": bool, "str": str}.get(kind, object)), name
    assert set(DELIBERATE) <= set(q["variable"] for q in SURVEY)
