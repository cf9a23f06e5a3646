# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""docs/verdict-schema.json: a valid draft 2020-12 schema whose vocabulary is _lib/actions.yaml's, which the reports
built from real verdicts (published NCCL and DCGM output through the collection's judges and cluster_result.py), the
AWX artifact and each node's entry satisfy, and which refuses what breaks the contract (tests/e2e/test_verdict_fleet.py
validates every report the e2e fleet writes)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib.util
import json
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin import cluster_result
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.dcgm import dcgm_verdict
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import html_view, junit
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import report as rp

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
SCHEMA_FILE = os.path.join(ROOT, "docs", "verdict-schema.json")
_SPEC = importlib.util.spec_from_file_location("synthetic_fleet", os.path.join(HERE, "synthetic_fleet.py"))
synthetic_fleet = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(synthetic_fleet)
_SPEC = importlib.util.spec_from_file_location("test_actions_helpers", os.path.join(HERE, "test_actions.py"))
helpers = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(helpers)


def schema():
    with open(SCHEMA_FILE, encoding="utf-8") as handle:
        return json.load(handle)


def validator(definition=None):
    """A validator of the whole report, or of one of the schema's $defs (node, awx_artifact, ...)."""
    document = schema()
    if definition is None:
        return jsonschema.Draft202012Validator(document)
    registry = referencing.Registry().with_resource(document["$id"], referencing.Resource.from_contents(document))
    return jsonschema.Draft202012Validator({"$ref": "%s#/$defs/%s" % (document["$id"], definition)}, registry=registry)


def errors(instance, definition=None):
    return ["%s: %s" % ("/".join(str(part) for part in error.absolute_path), error.message) for error in validator(definition).iter_errors(instance)]


def test_the_schema_is_draft_2020_12_versioned_with_the_tables_vocabulary():
    document = schema()
    jsonschema.Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"].endswith(":" + rp.SCHEMA_VERSION)
    assert document["$defs"]["action"]["enum"] == actions.table()["actions"]
    assert document["$defs"]["severity"]["enum"] == actions.table()["severities"]
    assert document["$defs"]["verdict"]["enum"] == ["pass", "warn", "fail", "error"]


def _start(cluster, platform, gpu):
    variables = {"burnin_platform": platform, "burnin_gpu_architecture": gpu, "burnin_workload": "nccl-all-reduce"}
    return cluster_result.started_record(variables, cluster, "schema-1", "burnin", "nccl-schema-1", "nccl", started="2026-12-03T10:00:00Z")


def _judged(result, stage, verdict, outcome="Complete"):
    result = dict(result, outcome=outcome)
    result.update(cluster_result.recorded_attempt(result, stage, "nccl-schema-1-%s" % stage, verdict, outcome=outcome))
    if stage == "fleet":
        result.update(cluster_result.judged_record(result, verdict)["record"])
    result.update(cluster_result.final_record(result))
    return dict(result, finished="2026-12-03T10:05:00Z")


def real_results():
    """Cluster results as the role builds them, from published output through the collection's judges."""
    results = {}
    aws = _judged(_start("aws-socket", "aws", "h100"), "fleet", helpers.judged_replay("socket-fallback"))
    results["aws-socket"] = aws
    gcp = _judged(_start("gcp-crash", "gcp", "h100"), "fleet", helpers.judged_replay("crash", "gcp", "h100"))
    pod = {
        "metadata": {"name": "dcgm-1-node-0-0-x1y2z", "labels": {"jobset.sigs.k8s.io/replicatedjob-name": "node"}},
        "spec": {"nodeName": "gpu-node-0", "hostname": "dcgm-1-node-0-0"},
        "status": {"phase": "Succeeded", "containerStatuses": [{"name": "node", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
    }
    text = helpers.read("dcgm", "dcgm-3.3.8-level3-table-cuda-init-fail-8gpu.txt")
    results["gcp-crash"] = _judged(
        gcp, "dcgm", dcgm_verdict([{"item": pod, "log": text}], job={"outcome": "Complete", "pods": [pod]}, judging={"workload": "dcgm-diag"})
    )
    config = helpers.read("dcgm", "dcgm-4.2.3-level1-gb10-persistence-config.json")
    results["gb10-config"] = _judged(
        _start("gb10-config", "onprem", "gb10"),
        "dcgm",
        dcgm_verdict([{"item": pod, "log": config}], job={"outcome": "Complete", "pods": [pod]}, judging={"workload": "dcgm-diag"}),
    )
    mismatch = _start("aws-mismatch", "aws", "h100")
    mismatch.update(outcome="Mismatch", reason="platform mismatch: the group declares aws but the nodes are gcp (2)")
    mismatch.update(cluster_result.failure_of(mismatch, {"name": "Stop"}, {"msg": "mismatch"})["record"])
    results["aws-mismatch"] = mismatch
    return results


def test_reports_built_from_published_output_satisfy_the_schema():
    results = real_results()
    report = json.loads(rp.render_json(rp.build_report(results, run_id="schema-1", generated="2026-12-03T10:06:00Z")))
    assert errors(report) == []
    assert report["schema_version"] == rp.SCHEMA_VERSION
    by_name = dict((cluster["cluster"], cluster) for cluster in report["clusters"])
    # The fall back to sockets: a configuration fault, retested; the crash's nodes are retested, the DCGM table's
    # failure too; persistence mode off is DCGM's CONFIG severity; the mismatch is the inventory's.
    assert (by_name["aws-socket"]["severity"], by_name["aws-socket"]["action"]) == ("warning", "retest")
    assert [(node["node"], node["action"]) for node in by_name["gcp-crash"]["nodes"]] == [("gpu-node-0", "retest"), ("gpu-node-1", "retest")]
    assert by_name["gcp-crash"]["stages"][-1]["action_rule"] == "dcgm_fail"
    assert [(node["severity"], node["action_rule"]) for node in by_name["gb10-config"]["nodes"]] == [("warning", "dcgm_config")]
    assert by_name["aws-mismatch"]["action_rule"] == "mismatch"
    assert report["severity"] == "critical" and report["action"] == "retest"
    for cluster in report["clusters"]:
        for node in cluster["nodes"]:
            assert errors(node, "node") == [], node
            assert node["evidence_anchor"] in [item["id"] for item in node["evidence"]]


def test_the_awx_artifact_satisfies_the_schema():
    artifact = json.loads(json.dumps({"burnin_results": real_results()}))
    assert errors(artifact, "awx_artifact") == []
    node_verdicts = artifact["burnin_results"]["gcp-crash"]["node_verdicts"]
    assert set(node_verdicts["gpu-node-0"]) >= set(["verdict", "reasons", "stages", "severity", "action"])


def test_a_synthetic_fleet_at_scale_satisfies_the_schema():
    report = json.loads(rp.render_json(rp.build_report(synthetic_fleet.synthetic_results(60), generated="2026-12-03T10:06:00Z")))
    assert errors(report) == []
    actions_seen = set(cluster["action"] for cluster in report["clusters"])
    assert actions_seen == set(["none", "monitor", "retest"]), actions_seen


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("clusters", 3, "nodes", 0, "action"), "reimage", "is not one of"),
        (("clusters", 0, "severity"), "fatal", "is not one of"),
        (("schema_version",), "2.0.0", "does not match"),
        (("clusters", 3, "nodes", 0, "evidence", 0, "verdict"), "error", "is not one of"),
    ],
)
def test_the_schema_refuses_what_breaks_the_contract(path, value, message):
    report = json.loads(rp.render_json(rp.build_report(real_results(), generated="2026-12-03T10:06:00Z")))
    broken = copy.deepcopy(report)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    found = errors(broken)
    assert found and message in found[0], found


def test_a_node_entry_without_severity_or_action_is_refused():
    report = json.loads(rp.render_json(rp.build_report(real_results(), generated="2026-12-03T10:06:00Z")))
    node = [cluster for cluster in report["clusters"] if cluster["nodes"]][0]["nodes"][0]
    for key in ("severity", "action", "evidence"):
        broken = dict((name, value) for name, value in node.items() if name != key)
        assert any(("'%s' is a required property" % key) in text for text in errors(broken, "node")), key


def test_the_html_links_each_nodes_severity_and_action_to_its_evidence():
    import re

    report = rp.build_report(real_results(), generated="2026-12-03T10:06:00Z")
    html = html_view.render_html(report)
    ids = set(re.findall(r'id="([^"]+)"', html))
    actions_links = re.findall(r'<td class="act act-([a-z-]+)"><a href="#([^"]+)" title="([^"]*)">([a-z-]+)</a></td>', html)
    severity_links = re.findall(r'<td class="sev sev-([a-z]+)"><a href="#([^"]+)">', html)
    nodes = [node for cluster in report["clusters"] for node in cluster["nodes"]]
    assert len(actions_links) == len(nodes) == len(severity_links) == 3, actions_links
    ordered = [node for cluster in sorted(report["clusters"], key=html_view._order_key) for node in cluster["nodes"]]
    for (action, href, why, text), node in zip(actions_links, ordered):
        assert action == text == node["action"] and href in ids, (href, node)
        # The action links to the evidence entry that decided it, and says why in its title.
        assert href.endswith(node["evidence_anchor"]) and why.startswith(node["action_why"][:40].replace("'", "&#39;")[:20]), (href, why)
    for severity, href in severity_links:
        assert href in ids and href.endswith("-evidence")
    # The evidence of gcp-crash's nodes names the DCGM test behind their dcgm_fail.
    assert "DCGM: GPU Memory: GPU 0 Error using CUDA API cuInit" in html
    assert len(ids) == html.count(' id="'), "an anchor id is used twice"


def test_the_junit_report_carries_each_clusters_and_nodes_severity_and_action():
    import xml.etree.ElementTree as ET

    root = ET.fromstring(junit.render_junit(rp.build_report(real_results(), generated="2026-12-03T10:06:00Z")).split("\n", 1)[1])
    suites = dict((suite.get("name"), suite) for suite in root.iter("testsuite"))
    props = dict((prop.get("name"), prop.get("value")) for prop in suites["aws-socket"].iter("property"))
    assert (props["severity"], props["action"]) == ("warning", "retest")
    nodes = [case for case in suites["gcp-crash"].iter("testcase") if case.get("classname").endswith(".nodes")]
    assert nodes and all("\nseverity: critical\naction: retest (" in case.find("system-out").text for case in nodes)


def test_summary_json_with_a_cluster_that_never_started_satisfies_the_schema():
    # roles/burnin/tasks/summary.yml's stand-in for a cluster without a result.
    never = {"cluster": "c9", "outcome": "Error", "reason": "no result: the cluster failed before its burn-in started", "platform": "", "gpu_architecture": ""}
    results = json.loads(json.dumps(dict(real_results(), c9=never)))
    assert errors(results, "fleet_results") == []
    assert errors(dict(results, c9=dict(never, outcome=None)), "fleet_results") != []
