# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Severity and recommended action of a result record (a node's findings, a stage's or a cluster's verdict), mapped
from its evidence by the one sourced table ``_lib/actions.yaml`` (docs/verdicts.md#severity-and-action).

A record's evidence gives signals: a check that failed or warned (its name says what: ``transport``, ``peak``, ...),
a finding's kind (an isolation culprit, a node's own busbw, a failed pod), each DCGM result by DCGM's own error
severity, each Xid code by NVIDIA's Xid catalog. Each signal is a rule of the table; the record takes the worst
severity and, among the signals of that severity, the most disruptive action; a rule's ``explains`` drops the
signals it accounts for first (a fall back to sockets explains the busbw it costs). Pure: dicts in, dicts out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm_errors
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import FAIL_OUTCOMES, OK_OUTCOMES, PENDING
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.stage_table import scope_of

TABLE_FILE = os.path.join(LIB_DIR, "actions.yaml")
_CACHE = {}
_GENERIC_RULES = ("pass", "warn", "fail", "note")
# Pod output is untrusted: each text is scanned up to this many characters, and at most this many Xids are kept.
MAX_SCAN = 65536
MAX_XIDS = 20
# The driver's kernel line (NVIDIA/open-gpu-kernel-modules nvErrorLog_va: "NVRM: Xid (PCI:0000:65:00): 79, ...") and
# DCGM's DCGM_FR_XID_ERROR message ("Detected XID %u for GPU %u", dcgmlib/dcgm_errors.h). Bounded repeats only.
_XID_PATTERNS = (
    re.compile(r"NVRM: Xid \([^)\n]{0,48}\): (?P<xid>\d{1,4})\b"),
    re.compile(r"Detected XID (?P<xid>\d{1,4}) for GPU (?P<gpu>\d{1,4})"),
)
# Check names of judging/nccl_judge.py and what they signal when they fail (warn: the second rule).
_CHECK_SIGNALS = {
    "transport": ("transport_fallback", "transport_fallback"),
    "peak": ("busbw_fail_cluster", "busbw_warn"),
    "avg": ("busbw_fail_cluster", "busbw_warn"),
    "threshold": ("busbw_fail_cluster", "busbw_warn"),
    "range": ("busbw_fail_cluster", "busbw_warn"),
    "min_bw": ("busbw_fail_cluster", "busbw_warn"),
    "result": ("fail", "warn"),
    "errors": ("pod_failure", "warn"),
    "wrong": ("fail", "warn"),
    "job": ("fail", "warn"),
    "coverage": ("coverage", "coverage"),
    "gpu": ("gpu_slow", "gpu_slow_warn"),
    "siblings": ("sibling_slow", "sibling_slow_warn"),
    "drift": ("config_drift", "config_drift_warn"),
    "baseline": ("regression", "regression"),
}


def table():
    """The table of _lib/actions.yaml, checked: every rule's severity and action in the vocabulary, every bucket and
    DCGM severity naming a rule, every Xid's bucket known. Raises ParseError naming the entry that is not."""
    if "data" in _CACHE:
        return _CACHE["data"]
    data = read_yaml_file(TABLE_FILE, "the actions table")
    if not isinstance(data, dict):
        raise ParseError("%s: not a mapping" % TABLE_FILE)
    severities, actions, rules = data.get("severities") or [], data.get("actions") or [], data.get("rules") or {}
    for name, rule in rules.items():
        if not isinstance(rule, dict) or rule.get("severity") not in severities or rule.get("action") not in actions:
            raise ParseError("%s: rules.%s must have a severity of %s and an action of %s" % (TABLE_FILE, name, ", ".join(severities), ", ".join(actions)))
        for other in rule.get("explains") or []:
            if other not in rules:
                raise ParseError("%s: rules.%s explains %r, which is no rule" % (TABLE_FILE, name, other))
    for key in ("dcgm_severities", "xid_buckets"):
        for value, rule in (data.get(key) or {}).items():
            if rule not in rules:
                raise ParseError("%s: %s.%s names rule %r, which is no rule" % (TABLE_FILE, key, value, rule))
    xids = {}
    for code, entry in (data.get("xids") or {}).items():
        if not isinstance(entry, list) or len(entry) != 2 or entry[1] not in (data.get("xid_buckets") or {}):
            raise ParseError("%s: xids.%s must be [mnemonic, bucket of xid_buckets], got %r" % (TABLE_FILE, code, entry))
        xids[int(code)] = {"mnemonic": entry[0] or "", "bucket": entry[1]}
    _CACHE["data"] = {
        "severities": list(severities),
        "actions": list(actions),
        "rules": rules,
        "dcgm_severities": dict((int(key), value) for key, value in (data.get("dcgm_severities") or {}).items()),
        "xid_buckets": dict(data.get("xid_buckets") or {}),
        "xids": xids,
        "sources": dict(data.get("sources") or {}),
    }
    return _CACHE["data"]


# The driver names the earlier Xids an Xid 45 (preemptive cleanup) follows: "NVRM: Xid (PCI:0000:dc:00): 45,
# pid=1818990, name=python3, Ch 00000001 caused by previous Xid 149" (NVIDIA/open-gpu-kernel-modules#1150).
_CAUSES = re.compile(r"caused by previous Xids? (?P<codes>\d{1,4}(?:\s{0,2}[/,]\s{0,2}\d{1,4}){0,7})")


def xids_in(text):
    """[{xid, line, gpu?, caused_by?}] of the Xid codes TEXT names, in order, each code once, at most MAX_XIDS; linear
    and bounded (the first MAX_SCAN characters). ``caused_by``: the earlier Xids the code's lines name as its cause."""
    if not isinstance(text, str) or not text:
        return []
    text = text[:MAX_SCAN]
    found, seen = [], {}
    for pattern in _XID_PATTERNS:
        for match in pattern.finditer(text):
            code = int(match.group("xid"))
            start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
            line = text[start : end if end >= 0 else len(text)]
            cause = _CAUSES.search(line, match.end() - start) if "caused by" in line else None
            if code in seen:
                if cause:
                    _add_causes(seen[code], cause)
                continue
            item = {"xid": code, "line": line[:300]}
            seen[code] = item
            if cause:
                _add_causes(item, cause)
            if "gpu" in match.groupdict() and match.group("gpu") is not None:
                item["gpu"] = int(match.group("gpu"))
            found.append(item)
            if len(found) >= MAX_XIDS:
                return found
    return found


def _add_causes(item, match):
    causes = item.setdefault("caused_by", [])
    for code in re.findall(r"\d+", match.group("codes")):
        if int(code) not in causes and len(causes) < MAX_XIDS:
            causes.append(int(code))


def xid_signal(code):
    """(rule, detail) of Xid CODE by NVIDIA's catalog (its immediate-action bucket), xid_unknown for a code it lacks."""
    entry = table()["xids"].get(code)
    if entry is None:
        return ("xid_unknown", "Xid %d" % code)
    return (table()["xid_buckets"][entry["bucket"]], "Xid %d %s (%s)" % (code, entry["mnemonic"] or "-", entry["bucket"]))


def _dcgm_signal(failure, verdict):
    severity = failure.get("severity")
    if isinstance(severity, str):
        # judging/dcgm_errors.py names the severity (SEVERITIES: number -> name, ...); the table is keyed by DCGM's number.
        severity = dict((entry[0], number) for number, entry in dcgm_errors.SEVERITIES.items()).get(severity)
    where = "GPU %s " % failure["gpu"] if failure.get("gpu") is not None else ""
    detail = "DCGM %s%s" % (where, failure.get("test") or "test")
    rule = table()["dcgm_severities"].get(severity) if isinstance(severity, int) else None
    if rule:
        return (rule, "%s, DCGM severity %d" % (detail, severity))
    return ("dcgm_warn" if verdict == "warn" else "dcgm_fail", detail)


def _texts(finding):
    evidence = finding.get("evidence") or {}
    texts = [finding.get("reason")]
    texts.extend(item.get("message") for item in evidence.get("failures") or [] if isinstance(item, dict))
    texts.extend(item for item in evidence.get("pods") or [] if isinstance(item, str))
    texts.extend(evidence.get("log_lines") or [])
    return [text for text in texts if isinstance(text, str)]


def finding_xids(finding):
    """The Xid codes a finding's reason, DCGM messages, pod reasons and log lines name (xids_in), each once."""
    found, seen = [], set()
    for text in _texts(finding or {}):
        for item in xids_in(text):
            # An Xid naming earlier ones as its cause (Xid 45 after an NVLink error) is judged by the worst of them:
            # each cause counts as seen, on the line that names it.
            for code, entry in [(item["xid"], item)] + [
                (cause, {"xid": cause, "line": item["line"], "cause_of": item["xid"]}) for cause in item.get("caused_by") or []
            ]:
                if code not in seen and len(found) < MAX_XIDS:
                    seen.add(code)
                    found.append(entry)
    return found


def signals_of_finding(finding):
    """[(rule, detail)] of one node finding (judging/node_findings.py finding())."""
    finding = finding or {}
    verdict, stage, evidence = finding.get("verdict"), finding.get("stage"), finding.get("evidence") or {}
    signals = [xid_signal(item["xid"]) for item in finding_xids(finding)]
    if verdict == "pass":
        return signals or [("pass", "")]
    failures = [item for item in evidence.get("failures") or [] if isinstance(item, dict)]
    signals.extend(_dcgm_signal(item, verdict) for item in failures)
    reason = str(finding.get("reason") or "")
    bad_gpus = [item for item in evidence.get("bad_gpus") or [] if isinstance(item, dict)]
    if failures:
        pass
    elif bad_gpus:
        # The gpu stage (judging/gpu.py): a GPU that computed wrong results is worse than a slow one.
        wrong = set(item.get("index") for item in evidence.get("gpus") or [] if isinstance(item, dict) and (item.get("figures") or {}).get("errors"))
        for gpu in bad_gpus:
            rule = "gpu_wrong_results" if gpu.get("index") in wrong else ("gpu_slow" if gpu.get("result") == "fail" else "gpu_slow_warn")
            signals.append((rule, "GPU %s" % gpu.get("index")))
    elif scope_of(stage) == "pairs" and verdict == "fail":
        signals.append(("isolation_culprit", ""))
    elif stage == "drift":
        # judging/drift.py: the node runs other versions than its SKU's majority or the golden file allows.
        signals.append(("config_drift" if verdict == "fail" else "config_drift_warn", "%s %s" % (evidence.get("key"), evidence.get("value"))))
    elif stage == "siblings":
        # judging/siblings.py: below its SKU's baseline by more than the rule.
        signals.append(("sibling_slow" if verdict == "fail" else "sibling_slow_warn", "%s of SKU %s" % (evidence.get("metric"), evidence.get("sku"))))
    elif (verdict == "fail" and "pods" in evidence) or (verdict == "fail" and reason.startswith("pod ") and " failed" in reason[:200]):
        # A failed node of a fleet verdict (node_findings.from_verdict: its pods' reasons, or the log naming its host)
        # or a node stage's failed pod.
        signals.append(("pod_failure", ""))
    elif evidence.get("busbw") is not None:
        busbw = evidence["busbw"]
        signals.append(("busbw_fail_node" if verdict == "fail" else "busbw_warn", "busbw %s GB/s" % busbw))
    if not signals:
        signals.append((verdict if verdict in ("warn", "fail") else "no_result", ""))
    return signals


def signals_of_verdict(verdict):
    """[(rule, detail)] of a verdict (judging/verdict.py, node_stage.py): its checks that did not pass, the DCGM
    results of its ``dcgm`` checks and its findings; a verdict without such a check by its own name."""
    verdict = verdict or {}
    signals = []
    for check in verdict.get("checks") or []:
        if not isinstance(check, dict) or check.get("verdict") == "pass":
            continue
        name, result = check.get("name"), check.get("verdict")
        if check.get("note"):
            signals.append(("note", name or ""))
        elif name == "dcgm":
            if result == "error":
                signals.append(("dcgm_error", check.get("node") or ""))
            else:
                signals.extend(_dcgm_signal(item, result) for item in check.get("failures") or [] if isinstance(item, dict))
        elif name in _CHECK_SIGNALS and result in ("fail", "warn"):
            signals.append((_CHECK_SIGNALS[name][0 if result == "fail" else 1], name))
        elif result == "error":
            signals.append(("no_result", name or ""))
    for item in verdict.get("findings") or []:
        if isinstance(item, dict) and item.get("verdict") != "pass":
            signals.extend(signals_of_finding(item))
    if not signals:
        name = verdict.get("verdict")
        signals.append({"pass": ("pass", ""), "warn": ("warn", ""), "fail": ("fail", "")}.get(name, ("no_result", "")))
    return signals


def decide(signals):
    """{severity, action, action_rule, action_why} of SIGNALS ([(rule, detail)]): the worst severity, the most
    disruptive action among that severity's signals, after each rule's ``explains`` dropped the signals it accounts
    for; ``pass`` without any signal."""
    data = table()
    rules = data["rules"]
    signals = [item for item in signals or [] if item and item[0] in rules] or [("pass", "")]
    explained = set()
    for name, _unused in signals:
        explained.update(rules[name].get("explains") or [])
    kept = [item for item in signals if item[0] not in explained] or signals
    severity_rank = dict((name, rank) for rank, name in enumerate(data["severities"]))
    action_rank = dict((name, rank) for rank, name in enumerate(data["actions"]))
    # Ties go to the rule that names a fault over the verdict's own words (pass, warn, fail, note).
    name, detail = max(kept, key=lambda item: (severity_rank[rules[item[0]]["severity"]], action_rank[rules[item[0]]["action"]], item[0] not in _GENERIC_RULES))
    rule = rules[name]
    why = " ".join(str(rule.get("why") or "").split())
    return {"severity": rule["severity"], "action": rule["action"], "action_rule": name, "action_why": ("%s: %s" % (detail, why)) if detail else why}


def of_finding(finding):
    return decide(signals_of_finding(finding))


def of_findings(findings):
    """A node's recommendation over all its findings (every stage)."""
    signals = []
    for item in findings or []:
        signals.extend(signals_of_finding(item))
    return decide(signals)


def of_verdict(verdict):
    return decide(signals_of_verdict(verdict))


_OUTCOME_SIGNALS = {"Mismatch": "mismatch", "Unreachable": "unreachable", "Error": "no_result"}
# The isolation's finer conclusions (judging/isolation_parts.py: level, conclusion) and their rules; a `fabric` path
# is the culprit's own network, which isolation_culprit already covers (`both`: its NVLink too).
_PART_SIGNALS = {
    ("path", "nvlink"): "isolation_nvlink",
    ("path", "both"): "isolation_nvlink",
    ("nic", "found"): "isolation_nic",
    ("link", "found"): "isolation_link",
}


def _part_detail(part):
    if part.get("level") == "link":
        return ", ".join(" - ".join(str(d) for d in link.get("domains") or []) for link in part.get("links") or [] if isinstance(link, dict))
    if part.get("level") == "nic":
        return "%s NIC %s" % (part.get("node"), ", ".join(str(nic) for nic in part.get("nics") or []))
    return str(part.get("node") or "")


def of_result(result):
    """A cluster's recommendation from its RESULT (burnin/cluster_result.py): its outcome (a Mismatch, an unreachable
    cluster, an error of the burn-in), the fleet verdict, every stage's last verdict and every node's findings."""
    result = result or {}
    signals = []
    verdicts = [item for item in ([result.get("verdict")] + list(result.get("verdicts") or [])) if isinstance(item, dict)]
    outcome = result.get("outcome")
    if outcome in _OUTCOME_SIGNALS:
        signals.append((_OUTCOME_SIGNALS[outcome], outcome))
    elif outcome and outcome not in OK_OUTCOMES and outcome != PENDING and not verdicts:
        # Failed, Timeout, ...: the job's own end, nothing judged.
        signals.append(("fail" if outcome in FAIL_OUTCOMES else "no_result", outcome))
    for verdict in verdicts:
        signals.extend(signals_of_verdict(verdict))
    for stage in result.get("stages") or []:
        if isinstance(stage, dict) and stage.get("severity") and stage.get("action_rule") in table()["rules"]:
            signals.append((stage["action_rule"], "%s stage" % stage.get("stage")))
    for item in result.get("node_findings") or []:
        if isinstance(item, dict) and item.get("verdict") != "pass":
            signals.extend(signals_of_finding(item))
    isolation = result.get("isolation") if isinstance(result.get("isolation"), dict) else {}
    for part in isolation.get("parts") or []:
        if isinstance(part, dict) and (part.get("level"), part.get("conclusion")) in _PART_SIGNALS:
            signals.append((_PART_SIGNALS[(part["level"], part["conclusion"])], _part_detail(part)))
    return decide(signals)


def recommendation_fields(record):
    """The four fields of a recommendation in RECORD (severity, action, action_rule, action_why), for copying."""
    return dict((key, record[key]) for key in ("severity", "action", "action_rule", "action_why") if key in (record or {}))


__all__ = ["decide", "finding_xids", "of_finding", "of_findings", "of_result", "of_verdict", "signals_of_finding", "signals_of_verdict", "table", "xids_in"]
