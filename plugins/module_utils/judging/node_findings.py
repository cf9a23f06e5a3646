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


# A node entry is bounded: an annotation (the node marks) holds it whole. At most this many items per list.
MAX_EVIDENCE = 20
MAX_TEXT = 2000
_VERDICT_RANK = {"pass": 0, "warn": 1, "fail": 2, "error": 3}


def _slug(text):
    out = "".join(char if char.isalnum() or char in "-_." else "-" for char in str(text))
    return out.strip("-") or "node"


def _figures(evidence):
    """The finding's figures: busbw (GB/s) at its size against its threshold (id, pass), where it has them."""
    if evidence.get("busbw") is None:
        return []
    figure = {"name": "busbw", "value": evidence["busbw"], "unit": "GB/s"}
    if evidence.get("size") is not None:
        figure["size"] = evidence["size"]
    if evidence.get("threshold"):
        figure.update(threshold=evidence["threshold"], source="_lib/thresholds.yaml or burnin_thresholds, record %s" % evidence["threshold"])
    if evidence.get("pass_busbw") is not None:
        figure["pass"] = evidence["pass_busbw"]
    return [figure]


def evidence_item(item, index):
    """One finding as the report's evidence entry (docs/verdict-schema.json $defs/evidence), with its anchor id."""
    evidence = item.get("evidence") or {}
    entry = {
        "id": "ev-%s-%s-%d" % (_slug(item["node"]), _slug(item["stage"]), index),
        "stage": item["stage"],
        "verdict": item["verdict"],
        "reason": str(item.get("reason") or "")[:MAX_TEXT],
    }
    entry.update(actions.of_finding(item))
    figures = _figures(evidence)
    if figures:
        entry["figures"] = figures
    tests = [
        dict(
            (key, failure[key][:MAX_TEXT] if isinstance(failure[key], str) else failure[key])
            for key in ("gpu", "test", "category", "message", "severity")
            if key in failure
        )
        for failure in evidence.get("failures") or []
        if isinstance(failure, dict)
    ]
    if tests:
        entry["dcgm_tests"] = tests[:MAX_EVIDENCE]
    xids = []
    for found in actions.finding_xids(item):
        known = actions.table()["xids"].get(found["xid"]) or {}
        xids.append(dict(found, mnemonic=known.get("mnemonic") or "", bucket=known.get("bucket") or "unknown"))
    if xids:
        entry["xids"] = xids
    for key in ("pods", "log_lines"):
        lines = [str(line)[:500] for line in evidence.get(key) or [] if isinstance(line, str)]
        if lines:
            entry["log_lines"] = (entry.get("log_lines") or []) + lines[:MAX_EVIDENCE]
    if evidence.get("pairs"):
        entry["pairs"] = [dict(pair) for pair in evidence["pairs"][:MAX_EVIDENCE] if isinstance(pair, dict)]
    return entry


def _gpus(items):
    """Per GPU (where a DCGM result named one): index, result, reason, from the node's evidence entries."""
    gpus = {}
    for entry in items:
        for test in entry.get("dcgm_tests") or []:
            if not isinstance(test.get("gpu"), int):
                continue
            gpu = gpus.setdefault(test["gpu"], {"index": test["gpu"], "result": "pass", "reasons": []})
            if _VERDICT_RANK[entry["verdict"]] > _VERDICT_RANK[gpu["result"]]:
                gpu["result"] = entry["verdict"]
            gpu["reasons"].append("%s%s" % (test.get("test") or "test", (": %s" % test["message"]) if test.get("message") else ""))
    out = []
    for index in sorted(gpus):
        gpu = gpus[index]
        out.append({"index": index, "result": gpu["result"], "reason": "; ".join(gpu["reasons"])[:1000]})
    return out


def node_entries(node_verdicts, findings):
    """The per-node entries of the JSON report (docs/verdict-schema.json ``$defs/node``), worst first: node, verdict,
    reason, reasons, stages, severity, action, action_rule, action_why, evidence (each finding, with an anchor id;
    ``evidence_anchor`` names the one that decided the action) and, where a DCGM result named them, gpus.
    NODE_VERDICTS: summarize()'s; FINDINGS: the cluster's node_findings."""
    by_node = {}
    for item in findings or []:
        if isinstance(item, dict) and item.get("node") and item.get("verdict") in NODE_VERDICTS:
            by_node.setdefault(str(item["node"]), []).append(item)
    rows = []
    for node in sorted(node_verdicts or {}):
        summary = node_verdicts[node] if isinstance(node_verdicts[node], dict) else {}
        verdict = summary.get("verdict") if summary.get("verdict") in _VERDICT_RANK else "error"
        mine = sorted(by_node.get(str(node)) or [], key=lambda item: -_SEVERITY[item["verdict"]])
        items = [evidence_item(item, index) for index, item in enumerate(mine[:MAX_EVIDENCE])]
        reasons = [str(reason) for reason in summary.get("reasons") or []]
        row = {"node": str(node), "verdict": verdict, "reason": reasons[0] if reasons else "", "reasons": reasons, "stages": list(summary.get("stages") or [])}
        row.update(actions.recommendation_fields(summary) if summary.get("severity") else actions.of_findings(mine))
        row["evidence"] = items
        deciding = [entry for entry in items if entry["action_rule"] == row["action_rule"]] or items
        row["evidence_anchor"] = deciding[0]["id"] if deciding else ""
        gpus = _gpus(items)
        if gpus:
            row["gpus"] = gpus
        rows.append(row)
    rows.sort(key=lambda row: (-_VERDICT_RANK[row["verdict"]], row["node"]))
    return rows
