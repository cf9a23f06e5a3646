# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Per-node findings: what each stage of a burn-in found on each node, and each node's verdict.

A finding is {node, stage, verdict (pass, warn or fail), reason, evidence}: the fleet stage adds one per node it
could judge (from the verdict's attribution), other stages add theirs (a node's own all_reduce, a pair of the
isolation, a GPU of a DCGM diagnostic). A node's verdict is the worst of its findings; a node without findings is
not judged. The cluster's result keeps both (``node_findings``, ``node_verdicts``): the answer to "which node is bad,
and why".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

NODE_VERDICTS = ("pass", "warn", "fail")
_SEVERITY = dict((name, rank) for rank, name in enumerate(NODE_VERDICTS))


def finding(node, stage, verdict, reason, evidence=None):
    """One finding; refuses a verdict other than pass, warn or fail (a node is never 'error': no result is no finding)."""
    if verdict not in NODE_VERDICTS:
        raise ConfigError("verdict", "must be one of %s, got %r" % (", ".join(NODE_VERDICTS), verdict))
    if not node:
        raise ConfigError("node", "must name a node")
    return {"node": str(node), "stage": str(stage), "verdict": verdict, "reason": str(reason), "evidence": dict(evidence or {})}


def _peak_evidence(verdict):
    """{busbw, size} of the verdict's peak check (the busbw the whole run reached at that size), or {} without one."""
    for check in verdict.get("checks") or []:
        value, size = check.get("value"), check.get("size")
        if check.get("name") == "peak" and isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(size, int) and size > 0:
            return {"busbw": float(value), "size": size}
    return {}


def from_verdict(verdict, stage="fleet"):
    """The fleet stage's findings from a verdict (plugins/module_utils/judging/verdict.py): its failed nodes fail with
    their pods' reasons; when the verdict passed or warned, its succeeded nodes take that verdict. A node that only took
    part in a failing job is not judged: the job's result alone does not say which node made it fail.

    A succeeded node's evidence is the busbw (GB/s) and size (bytes) of the verdict's peak check: the node took part in
    a run of that busbw. It is the whole run's figure, the same for every node of the run, not the node's own: history
    (plugins/module_utils/reporting/history.py) compares it per node, so a drop of the fleet run shows on each of its
    nodes, while the node and isolation stages' figures tell the nodes apart."""
    verdict = verdict or {}
    reasons = {}
    for pod in verdict.get("pods") or []:
        if pod.get("node") and pod.get("status") == "failed":
            reasons.setdefault(pod["node"], []).extend("%s: %s" % (pod.get("name"), why) for why in pod.get("reasons") or ["failed"])
    found = [
        finding(node, stage, "fail", "; ".join(reasons.get(node) or ["its pod failed"]), {"pods": reasons.get(node) or []})
        for node in verdict.get("failed_nodes") or []
    ]
    if verdict.get("verdict") in ("pass", "warn"):
        evidence = _peak_evidence(verdict)
        found.extend(
            finding(node, stage, verdict["verdict"], "took part in the %s run: %s" % (stage, verdict.get("reason") or verdict["verdict"]), evidence)
            for node in verdict.get("succeeded_nodes") or []
        )
    return found


def summarize(findings):
    """{node: {verdict, reasons ("<stage>: <reason>" of its worst findings first), stages, severity, action,
    action_rule, action_why (judging/actions.py over all its findings)}} over FINDINGS, by node name."""
    nodes = {}
    for item in findings or []:
        entry = nodes.setdefault(item["node"], {"verdict": "pass", "findings": []})
        entry["findings"].append(item)
        if _SEVERITY[item["verdict"]] > _SEVERITY[entry["verdict"]]:
            entry["verdict"] = item["verdict"]
    summary = {}
    for node in sorted(nodes):
        ordered = sorted(nodes[node]["findings"], key=lambda item: -_SEVERITY[item["verdict"]])
        summary[node] = {
            "verdict": nodes[node]["verdict"],
            "reasons": ["%s: %s" % (item["stage"], item["reason"]) for item in ordered if item["verdict"] != "pass"],
            "stages": sorted(set(item["stage"] for item in ordered)),
        }
        summary[node].update(actions.of_findings(ordered))
    return summary


def with_findings(result, findings):
    """The fields of a cluster's RESULT after a stage adds FINDINGS: node_findings (every finding so far, a stage's
    earlier findings replaced when it reports again, e.g. a repeated attempt) and node_verdicts (summarize())."""
    stages = set(item["stage"] for item in findings or [])
    kept = [item for item in (result or {}).get("node_findings") or [] if item["stage"] not in stages]
    merged = kept + list(findings or [])
    return {"node_findings": merged, "node_verdicts": summarize(merged)}


def nodes_with(summary, verdict):
    """The nodes of SUMMARY (summarize()) whose verdict is VERDICT, by name."""
    return [node for node, entry in sorted((summary or {}).items()) if entry["verdict"] == verdict]
