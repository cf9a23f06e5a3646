# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Session fixture `fleet`: a running multi-cluster test fleet (real Kubernetes control planes, KWOK, JobSet and Trainer on 127.0.0.1).

The suite starts tests/fleet/default-fleet.yml once per session into a temp dir and stops it at the end.
Set GPUFLEET_FLEET_DIR to the dir of a fleet already started with `tests/fleet/fleet.py start` to reuse it
(it is then left running). GPUFLEET_FLEET_SPEC picks another spec. GPUFLEET_KEEP_FLEET_DIR=1 keeps the temp
dir (logs, kubeconfigs) after the session; it is also kept when a test failed.

Fixture API (class Fleet below):
    fleet.dir, fleet.kubeconfig, fleet.restricted_kubeconfig, fleet.inventory, fleet.ca_file
    fleet.clusters               cluster names (= inventory hosts = kubeconfig contexts)
    fleet.restricted_namespace   the one namespace the restricted token may use
    fleet.cluster(name)          the cluster's record from state.json (platform, gpu_architecture, server, ...)
    fleet.context(name)          kubeconfig context of the cluster
    fleet.api_client(name, restricted=False)  kubernetes.client.ApiClient (admin or restricted token)
    fleet.dynamic(name, restricted=False)     kubernetes.dynamic.DynamicClient
`fleet_crds` is `fleet` (kept for the tests that name it: every cluster has the upstream CRDs).

`clouds_fleet` is the same for tests/fleet/clouds-fleet.yml (one cluster each of OCI, CoreWeave, Nebius and on-prem),
started only when a test asks for it; GPUFLEET_CLOUDS_FLEET_DIR reuses a clouds fleet started by hand.

`burnin_playbook(fleet, reports, run_id, hosts, *args, namespace=..., entry=..., timeout=90)` runs playbooks/burnin.yml
as a user does (the fleet's inventory, --limit HOSTS, forks 10, polling every second, custom stats shown) and returns
a BurninRun: rc, output, run_id, dir (the run's report dir), results (its summary.json), stats(), recap().

`ansible_playbook(playbook, *args, check=False, timeout=600, **env)` runs ansible-playbook without colours, its stderr in
its stdout, and returns the process (check: assert it exited 0); test modules import it (`from conftest import ...`).

`pass_and_fail_spec(good, bad)` is the spec of a two-cluster fleet whose BAD cluster fails its TrainJobs; `Nodes(state,
cluster)` reads and patches a cluster's nodes as its admin.

`own_fleet(name, spec, reuse_variable=None)` starts a module's fleet of its own from a spec (a dict) and returns
(state, work dir); the fleet stops when the module's tests are done. The env variable REUSE_VARIABLE, when set, names
a running fleet to use instead (left running).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

FLEET_TOOLS = Path(__file__).resolve().parent.parent / "fleet"
BURNIN_PLAYBOOK = FLEET_TOOLS.parent.parent / "playbooks" / "burnin.yml"


def _load_fleetlib():
    """tests/fleet/fleet.py, under a name that cannot clash with other modules."""
    name = "gpufleet_test_fleet"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, FLEET_TOOLS / "fleet.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


fleetlib = _load_fleetlib()


class Fleet:
    def __init__(self, state):
        self.state = state
        self.dir = Path(state["dir"])
        self.kubeconfig = state["kubeconfig"]
        self.restricted_kubeconfig = state["restricted_kubeconfig"]
        self.inventory = state["inventory"]
        self.ca_file = state["ca_file"]
        self.restricted_namespace = state["restricted_namespace"]
        self.clusters = list(state["clusters"])
        self._clients = {}

    def cluster(self, name):
        return self.state["clusters"][name]

    def context(self, name):
        return self.state["clusters"][name]["context"]

    def api_client(self, name, restricted=False):
        key = ("api", name, restricted)
        if key not in self._clients:
            from kubernetes import config

            self._clients[key] = config.new_client_from_config(
                config_file=self.restricted_kubeconfig if restricted else self.kubeconfig, context=self.context(name)
            )
        return self._clients[key]

    def dynamic(self, name, restricted=False):
        key = ("dyn", name, restricted)
        if key not in self._clients:
            from kubernetes.dynamic import DynamicClient

            self._clients[key] = DynamicClient(self.api_client(name, restricted))
        return self._clients[key]

    def apply(self, name, body, namespace, field_manager, force_conflicts=False, timeout=30.0):
        """Server-side apply `body` on cluster `name`, as the resource it is, retried while Trainer's webhook has not
        seen its runtime (until_runtime_seen); any other error is raised."""
        resource = self.dynamic(name).resources.get(api_version=body["apiVersion"], kind=body["kind"])
        applied = self.until_runtime_seen(
            lambda: self.dynamic(name).server_side_apply(
                resource, body=body, namespace=namespace, field_manager=field_manager, force_conflicts=force_conflicts
            ),
            timeout,
        )
        return resource, applied

    @staticmethod
    def until_runtime_seen(call, timeout=30.0):
        """CALL(), again while it is refused because it is a TrainJob whose runtime was applied a moment before: Trainer's
        webhook refuses it until its cache has seen the runtime, the refusal k8s_apply retries on
        (plugins/module_utils/cluster/k8s_errors.py). Any other error, or that one after TIMEOUT seconds, is raised."""
        import time

        from kubernetes.client.exceptions import ApiException

        from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.k8s_errors import runtime_not_cached

        deadline = time.monotonic() + timeout
        while True:
            try:
                return call()
            except ApiException as err:
                if not runtime_not_cached(err.body) or time.monotonic() > deadline:
                    raise
            time.sleep(1.0)

    def close(self):
        for key, c in self._clients.items():
            if key[0] == "api":
                try:
                    c.close()
                except Exception:  # noqa: BLE001 - best effort at teardown
                    pass
        self._clients.clear()


def _session_fleet(request, default_spec, dir_variable, spec_variable=None):
    """Start a fleet from `default_spec` (or the spec named by `spec_variable`) into a temp dir, yield a Fleet, stop
    it at the end; or reuse the running fleet whose dir `dir_variable` names (left running)."""
    reuse = os.environ.get(dir_variable)
    if reuse:
        st = fleetlib.status(reuse)
        if st is None or not st["running"]:
            pytest.fail(f"{dir_variable}={reuse} holds no running fleet (start it with " f"{FLEET_TOOLS / 'fleet.py'} start --dir {reuse})", pytrace=False)
        f = Fleet(fleetlib.read_state(reuse))
        yield f
        f.close()
        return

    problem = None
    try:
        fleetlib.find_binaries(fleetlib.KUBERNETES_VERSIONS)
    except fleetlib.FleetError as e:
        problem = f"test fleet cannot start: {e}"
    if problem:
        pytest.fail(problem, pytrace=False)
    spec = (os.environ.get(spec_variable) if spec_variable else None) or str(FLEET_TOOLS / default_spec)
    d = tempfile.mkdtemp(prefix="gpufleet-fleet-")
    # A SIGTERM (a CI time-out, `timeout`) becomes KeyboardInterrupt: a start in progress cleans up after itself,
    # and a running session ends through pytest's teardown, which stops the fleet.
    previous = signal.signal(signal.SIGTERM, fleetlib.raise_keyboard_interrupt)
    keep = os.environ.get("GPUFLEET_KEEP_FLEET_DIR") == "1"
    try:
        try:
            state = fleetlib.start(spec, d)
        except fleetlib.FleetError as e:
            problem = f"test fleet did not start (logs kept in {d}/logs): {e}"
        if problem:
            keep = True
            pytest.fail(problem, pytrace=False)
        f = Fleet(state)
        try:
            yield f
        finally:
            f.close()
            fleetlib.stop(d)
        keep = keep or bool(request.session.testsfailed)
    finally:
        signal.signal(signal.SIGTERM, previous)
        if keep:
            sys.stderr.write(f"\n[fleet] kept fleet dir {d}\n")
        else:
            shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def fleet(request):
    yield from _session_fleet(request, "default-fleet.yml", "GPUFLEET_FLEET_DIR", "GPUFLEET_FLEET_SPEC")


@pytest.fixture(scope="session")
def clouds_fleet(request):
    """The second fleet, tests/fleet/clouds-fleet.yml (OCI, CoreWeave, Nebius, on-prem): started on first use, once
    per session, beside the default fleet; GPUFLEET_CLOUDS_FLEET_DIR reuses one started by hand."""
    yield from _session_fleet(request, "clouds-fleet.yml", "GPUFLEET_CLOUDS_FLEET_DIR")


@pytest.fixture(scope="session")
def fleet_crds(fleet):
    """`fleet`, for tests that need the upstream CRDs (every fleet cluster has them, from the Go modules)."""
    return fleet


@pytest.fixture(scope="module")
def own_fleet(tmp_path_factory):
    started = []

    def start(name, spec, reuse_variable=None):
        work = tmp_path_factory.mktemp(name)
        reuse = os.environ.get(reuse_variable) if reuse_variable else None
        if reuse:
            return fleetlib.read_state(reuse), work
        path = work / "spec.yml"
        path.write_text(yaml.safe_dump(spec))
        d = str(work / "fleet")
        state = fleetlib.start(str(path), d)
        started.append(d)
        return state, work

    try:
        yield start
    finally:
        for d in started:
            fleetlib.stop(d)


def pass_and_fail_spec(good, bad):
    """The spec of a fleet of two clusters of 2 GPU nodes (test_node_marks.py, test_remediation.py): GOOD, GCP H100,
    whose TrainJobs complete; BAD, Azure GB200, whose TrainJobs fail with nccl-tests' output cut short and the killed
    rank's node named."""
    return {
        "restricted_namespace": "burnin-restricted",
        "clusters": [
            {"name": good, "platform": "gcp", "gpu_architecture": "h100", "kubernetes_version": "1.37", "nodes": 2, "trainjob_outcome": "Complete"},
            {
                "name": bad,
                "platform": "azure",
                "gpu_architecture": "gb200",
                "kubernetes_version": "1.37",
                "nodes": 2,
                "trainjob_outcome": "Failed",
                "nccl_log": "truncated",
            },
        ],
    }


class Nodes:
    """The nodes of one cluster of STATE (own_fleet's), read and patched with the admin's kubeconfig."""

    def __init__(self, state, cluster):
        from kubernetes import client, config

        self.api = client.CoreV1Api(config.new_client_from_config(config_file=state["kubeconfig"], context=cluster))

    def all(self):
        return dict((node.metadata.name, node) for node in self.api.list_node().items)

    def gpu(self):
        return sorted(name for name, node in self.all().items() if (node.metadata.labels or {}).get("gpufleet.test/fake-node") and "system" not in name)

    def system(self):
        return sorted(name for name in self.all() if "system" in name)

    def selected(self, selector):
        return sorted(node.metadata.name for node in self.api.list_node(label_selector=selector).items)

    def read(self, name):
        """What the collection's marks and an admin's touch: labels, annotations, conditions (type: status), taints
        (their set fields) and the cordon."""
        node = self.api.read_node(name)
        return {
            "labels": dict(node.metadata.labels or {}),
            "annotations": dict(node.metadata.annotations or {}),
            "conditions": dict((c.type, c.status) for c in node.status.conditions or []),
            "taints": [dict((k, v) for k, v in (("key", t.key), ("value", t.value), ("effect", t.effect)) if v) for t in node.spec.taints or []],
            "unschedulable": bool(node.spec.unschedulable),
        }

    def patch(self, name, body):
        self.api.patch_node(name, body)


SCHEMA_FILE = FLEET_TOOLS.parent.parent / "docs" / "verdict-schema.json"


def schema_validator(definition=None):
    """A validator of docs/verdict-schema.json (draft 2020-12), of the whole report or one of its $defs."""
    import jsonschema
    import referencing

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    if definition is None:
        return jsonschema.Draft202012Validator(schema)
    registry = referencing.Registry().with_resource(schema["$id"], referencing.Resource.from_contents(schema))
    return jsonschema.Draft202012Validator({"$ref": "%s#/$defs/%s" % (schema["$id"], definition)}, registry=registry)


def schema_problems(document, definition=None):
    """The verdict schema's complaints about DOCUMENT, as 'path: message' lines."""
    return ["%s: %s" % ("/".join(str(part) for part in error.absolute_path), error.message) for error in schema_validator(definition).iter_errors(document)]


class BurninRun:
    def __init__(self, proc, report_dir, run_id):
        self.rc, self.output, self.run_id = proc.returncode, proc.stdout, run_id
        self.dir = Path(report_dir) / run_id
        summary = self.dir / "summary.json"
        self.results = json.loads(summary.read_text()) if summary.is_file() else {}

    def stats(self):
        for line in self.output.splitlines():
            if line.strip().startswith("RUN: {"):
                return json.loads(line.strip()[len("RUN: ") :])["burnin_results"]
        raise AssertionError("no CUSTOM STATS in the output:\n" + self.output[-3000:])

    def recap(self):
        """{host: failed count} from the PLAY RECAP."""
        out = {}
        for line in self.output.splitlines():
            m = re.match(r"^(\S+)\s+: ok=\d+\s+changed=\d+\s+unreachable=\d+\s+failed=(\d+)", line)
            if m:
                out[m.group(1)] = int(m.group(2))
        return out

    def __repr__(self):
        return "BurninRun(rc=%s)\n%s" % (self.rc, self.output[-6000:])


def ansible_playbook(playbook, *args, check=False, timeout=600, **env):
    """ansible-playbook PLAYBOOK ARGS without colours, its stderr in its stdout, ENV added to the environment: the
    finished process (text). CHECK asserts that it exited 0, showing the end of its output."""
    proc = subprocess.run(
        ["ansible-playbook", str(playbook), *args],
        env=dict(os.environ, ANSIBLE_NOCOLOR="1", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        universal_newlines=True,
        check=False,
        timeout=timeout,
    )
    if check:
        assert proc.returncode == 0, proc.stdout[-4000:]
    return proc


def _burnin_playbook(fleet, reports, run_id, hosts, *args, namespace, entry, timeout=90):
    command = ["-i", fleet.inventory, *args, "--limit", ":".join(hosts), "--forks", "10"]
    for variable in (
        "burnin_run_id=%s" % run_id,
        "burnin_namespace=%s" % namespace,
        "burnin_entry_name=%s" % entry,
        "burnin_report_dir=%s" % reports,
        "burnin_poll_interval=1",
        "burnin_timeout=%d" % timeout,
    ):
        command += ["-e", variable]
    proc = ansible_playbook(BURNIN_PLAYBOOK, *command, timeout=900, ANSIBLE_FORCE_COLOR="0", ANSIBLE_SHOW_CUSTOM_STATS="1")
    return BurninRun(proc, reports, run_id)


@pytest.fixture(scope="session")
def verdict_schema():
    """schema_validator: a validator of docs/verdict-schema.json or one of its $defs."""
    return schema_validator


@pytest.fixture(scope="session")
def burnin_playbook():
    return _burnin_playbook


def _skip_guard():
    """tests/skip_guard.py: under CI=true an unexpected skip fails the run (tests/expected-skips.yml)."""
    name = "gpufleet_skip_guard"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "skip_guard.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def pytest_configure(config):
    _skip_guard().register(config)


_SCHEMA_FAILURES = []


def pytest_sessionfinish(session, exitstatus):
    """Every JSON report any e2e test wrote (under pytest's temporary directory, whatever ran the playbook) follows
    docs/verdict-schema.json: the report, and the summary.json beside it. A report that does not fails the run."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return
    for report in sorted(factory.getbasetemp().rglob("burnin-report.json")):
        for path, definition in ((report, None), (report.parent / "summary.json", "fleet_results")):
            if path.is_file():
                problems = schema_problems(json.loads(path.read_text()), definition)
                if problems:
                    _SCHEMA_FAILURES.append("%s: %s" % (path, "; ".join(problems[:5])))
    if _SCHEMA_FAILURES and exitstatus in (0, 5):
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if _SCHEMA_FAILURES:
        terminalreporter.section("reports that do not follow docs/verdict-schema.json", red=True)
        for line in _SCHEMA_FAILURES:
            terminalreporter.line(line)
