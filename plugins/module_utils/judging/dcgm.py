# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""DCGM diagnostics: reading ``dcgmi diag -r <level> -j`` output and judging one node by it.

The JSON, as NVIDIA/DCGM writes it (key names: NVIDIA/DCGM nvvs/include/NvvsJsonStrings.h; the 4.x schema:
NVIDIA/DCGM testing/python3/dcgm_diag_schema.json; how dcgmi builds it: NVIDIA/DCGM dcgmi/Diag.cpp and
dcgmi/tests/DiagTests.cpp)::

    {"DCGM Diagnostic": {                      # 3.x and older: "DCGM GPU Diagnostic" (nvvs/include/NvvsCommon.h)
       "test_categories": [
         {"category": "Hardware",              # Deployment | Integration | Hardware | Stress | Custom
          "tests": [
            {"name": "diagnostic",             # 3.x display names ("Diagnostic", "GPU Memory"); 4.x plugin names
             "results": [
               {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 5,    # 4.x; 3.x: "gpu_id": "5"
                "status": "Fail",              # Pass | Fail | Warn | Skip (| Not Run)
                "warnings": [{"warning": "...", "error_id": 87, "error_category": 3, "error_severity": 2}],
                "info": ["..."]}],             # 3.x: a string
             "test_summary": {"status": "Fail"}}]}],   # 4.x only
       "runtime_error": "..."},                # when dcgmi could not run the diagnostic at all
     "metadata": {"version": "4.5.2", "Driver Version Detected": "570.148.08"},   # 3.x: these at the top level
     "entity_groups": [...]}                   # 4.x: the entities with serials and device ids

Also read: the 3.x level-one (Deployment) results, which name no GPU (they apply to the node) and whose warning
entries carry their text under ``warnings`` instead of ``warning`` (Diag.cpp HelperJsonAddBasicTests); warnings given
as plain strings (the old NVVS format in NvvsCommon.h, ``gpu_ids`` instead of ``gpu_id``); ``dcgmi diag --iterations``
output ({"iterations": [<one document each>], "Overall Result": ...}), judged by the worst of its iterations.

Pure Python: the log text in, a plain dict out. The verdict (plugins/module_utils/judging/verdict.py) judges a run
whose workload's ``results`` is ``dcgm-diag`` with :func:`judge_node` per pod.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

# The marker the catalogue's workload (templates/workloads/dcgm-diag.yaml) prints before the JSON.
MARKER = re.compile(r"^# gpufleet-burnin dcgm-diag on (?P<host>\S+?):", re.MULTILINE)
TOP_KEYS = ("DCGM Diagnostic", "DCGM GPU Diagnostic")
STATUSES = ("pass", "warn", "fail", "skip", "not_run")
_STATUS_WORDS = {
    "pass": "pass",
    "passed": "pass",
    "warn": "warn",
    "warning": "warn",
    "fail": "fail",
    "failed": "fail",
    "skip": "skip",
    "skipped": "skip",
    "not run": "not_run",
    "notrun": "not_run",
    "not_run": "not_run",
}
# A node's verdict from its GPUs' statuses: a skipped or not-run test decides nothing.
_VERDICT_OF = {"pass": "pass", "warn": "warn", "fail": "fail", "skip": "pass", "not_run": "pass"}
_SEVERITY = {"pass": 0, "warn": 1, "fail": 2}
_GPU_GROUPS = ("gpu",)
_GPU_GROUP_ID = 1  # DCGM_FE_GPU (dcgm_structs.h)


class DcgmParseError(BurninError):
    """The log holds no DCGM diagnostic JSON, or JSON of another shape; the message says which."""


def _status(value):
    """pass, warn, fail, skip or not_run from DCGM's status text ("Pass", "Skip - All", "FAIL", ...); None if unknown."""
    if not isinstance(value, str):
        return None
    word = value.strip().lower().split(" - ")[0].strip()
    return _STATUS_WORDS.get(word)


def _documents(text):
    """Every JSON object in TEXT that is a DCGM diagnostic document (or an --iterations wrapper), in order."""
    decoder = json.JSONDecoder()
    found = []
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict) and (any(key in value for key in TOP_KEYS) or isinstance(value.get("iterations"), list)):
            found.append(value)
            position = end
        else:
            position = start + 1


def _gpu_of(result):
    """The GPU index a result is for, or None (a node-wide result, or another entity such as a CPU or switch)."""
    if "entity_id" in result:
        group = result.get("entity_group")
        group_id = result.get("entity_group_id")
        is_gpu = (isinstance(group, str) and group.lower() in _GPU_GROUPS) or group_id == _GPU_GROUP_ID or (group is None and group_id is None)
        return _int(result["entity_id"]) if is_gpu else None
    for key in ("gpu_id", "gpu_ids"):
        if key in result:
            value = result[key]
            if isinstance(value, list):
                value = value[0] if len(value) == 1 else None
            return _int(value)
    return None


def _int(value):
    if isinstance(value, bool):
        return None
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _entity_label(result):
    group = result.get("entity_group")
    if group is None and result.get("cpu_id") is not None:
        return "CPU %s" % result["cpu_id"]
    if group is None:
        return None
    return "%s %s" % (group, result.get("entity_id"))


def _warnings(result):
    """[{message, error_id}] of a result: DCGM's warning objects (4.x and 3.x) or plain strings (old NVVS)."""
    out = []
    items = result.get("warnings")
    if isinstance(items, (str, dict)):
        items = [items]
    for item in items or []:
        if isinstance(item, str):
            out.append({"message": item.strip(), "error_id": None})
        elif isinstance(item, dict):
            message = item.get("warning")
            if not isinstance(message, str):
                # Diag.cpp's level-one results put the text under "warnings" (NVVS_WARNINGS) in 3.x.
                message = item.get("warnings") if isinstance(item.get("warnings"), str) else ""
            out.append({"message": message.strip(), "error_id": _int(item.get("error_id"))})
    return [item for item in out if item["message"] or item["error_id"] is not None]


def _info(result):
    info = result.get("info")
    if isinstance(info, str):
        return [info.strip()] if info.strip() else []
    return [str(item).strip() for item in info or [] if str(item).strip()]


def _message(warnings, info):
    texts = [("%s (DCGM error %s)" % (item["message"], item["error_id"])) if item["error_id"] else item["message"] for item in warnings]
    return "; ".join(text for text in texts if text) or "; ".join(info)


def _parse_document(doc):
    body = next((doc[key] for key in TOP_KEYS if isinstance(doc.get(key), dict)), None)
    if body is None:
        raise DcgmParseError("the JSON has no %s object" % " or ".join("'%s'" % key for key in TOP_KEYS))
    metadata = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    version = metadata.get("version") or doc.get("version") or body.get("version")
    driver = metadata.get("Driver Version Detected") or doc.get("Driver Version Detected")
    parsed = {
        "dcgm_version": str(version) if version else None,
        "driver_version": str(driver) if driver else None,
        "runtime_error": str(body["runtime_error"]) if body.get("runtime_error") else None,
        "tests": [],
    }
    categories = body.get("test_categories")
    if categories is None:
        categories = []
    if not isinstance(categories, list):
        raise DcgmParseError("'test_categories' must be a list, got %s" % type(categories).__name__)
    for category in categories:
        if not isinstance(category, dict):
            continue
        name = str(category.get("category") or "")
        for test in category.get("tests") or []:
            if not isinstance(test, dict) or not test.get("name"):
                continue
            entry = {"name": str(test["name"]), "category": name, "status": None, "gpus": {}, "node": []}
            for result in test.get("results") or []:
                if not isinstance(result, dict):
                    continue
                status = _status(result.get("status"))
                if status is None:
                    continue
                warnings, info = _warnings(result), _info(result)
                record = {"status": status, "message": _message(warnings, info), "warnings": warnings, "info": info}
                gpu = _gpu_of(result)
                if gpu is not None:
                    entry["gpus"][gpu] = _worse(entry["gpus"].get(gpu), record)
                else:
                    record["entity"] = _entity_label(result)
                    entry["node"].append(record)
            summary = test.get("test_summary") if isinstance(test.get("test_summary"), dict) else {}
            entry["status"] = _status(summary.get("status")) or _worst_status([r["status"] for r in list(entry["gpus"].values()) + entry["node"]])
            if summary.get("warnings") and not entry["gpus"] and not entry["node"]:
                warnings = _warnings(summary)
                entry["node"].append({"status": entry["status"], "message": _message(warnings, []), "warnings": warnings, "info": [], "entity": None})
            parsed["tests"].append(entry)
    return parsed


_STATUS_RANK = {"not_run": 0, "skip": 1, "pass": 2, "warn": 3, "fail": 4}


def _worst_status(statuses):
    statuses = [status for status in statuses if status]
    return max(statuses, key=lambda status: _STATUS_RANK[status]) if statuses else None


def _worse(old, new):
    if old is None or _STATUS_RANK[new["status"]] > _STATUS_RANK[old["status"]]:
        return new
    return old


def parse_diag_output(text):
    """Read ``dcgmi diag -j`` output out of a pod's log TEXT (noise before and after the JSON is fine).

    Returns {host (the workload's marker line, or None), dcgm_version, driver_version, runtime_error, iterations,
    tests: [{name, category, status, gpus: {index: {status, message, warnings, info}}, node: [node-wide results]}]}.
    Raises DcgmParseError when the log holds no DCGM diagnostic JSON (the reason says what it holds instead).
    """
    if not isinstance(text, str):
        raise DcgmParseError("no log text")
    marker = MARKER.search(text)
    documents = _documents(text)
    if not documents:
        stripped = text.strip()
        if not stripped:
            raise DcgmParseError("the log is empty")
        last = stripped.splitlines()[-1].strip()
        hint = " (it ends: %s)" % last[:200]
        if "{" in stripped:
            raise DcgmParseError("the log holds no complete DCGM diagnostic JSON (cut short, or another JSON)%s" % hint)
        raise DcgmParseError("the log holds no DCGM diagnostic JSON (dcgmi diag -j)%s" % hint)
    doc = documents[-1]
    if isinstance(doc.get("iterations"), list) and not any(key in doc for key in TOP_KEYS):
        runs = [_parse_document(item) for item in doc["iterations"] if isinstance(item, dict) and any(key in item for key in TOP_KEYS)]
        if not runs:
            raise DcgmParseError("the --iterations output holds no diagnostic run")
        parsed = dict(runs[-1])
        parsed["tests"] = [test for run in runs for test in run["tests"]]
        parsed["runtime_error"] = next((run["runtime_error"] for run in runs if run["runtime_error"]), None)
        parsed["iterations"] = len(runs)
    else:
        parsed = _parse_document(doc)
        parsed["iterations"] = 1
    parsed["host"] = marker.group("host") if marker else None
    return parsed


def judge_node(parsed, node):
    """One node's judgement from its parsed diagnostic (parse_diag_output): {node, verdict (pass, warn or fail),
    reason, gpus: {index: {verdict, tests: [{name, category, status, message}]}}, failures: [{gpu, test, category,
    message}] (failed and warned GPU results, worst first), tests: [{name, category, status}]}.

    A failed GPU result fails the node, a warning warns it, a skipped test decides nothing; a node-wide (level-one)
    result counts like a GPU's, without a GPU. A runtime error (dcgmi could not run the diagnostic) fails the node.
    """
    gpus = {}
    problems = []
    for test in parsed.get("tests") or []:
        for gpu, record in sorted(test["gpus"].items()):
            entry = gpus.setdefault(gpu, {"verdict": "pass", "tests": []})
            entry["tests"].append({"name": test["name"], "category": test["category"], "status": record["status"], "message": record["message"]})
            verdict = _VERDICT_OF[record["status"]]
            if _SEVERITY[verdict] > _SEVERITY[entry["verdict"]]:
                entry["verdict"] = verdict
            if verdict != "pass":
                problems.append({"gpu": gpu, "test": test["name"], "category": test["category"], "verdict": verdict, "message": record["message"]})
        for record in test["node"]:
            verdict = _VERDICT_OF[record["status"]]
            if verdict != "pass":
                problems.append(
                    {
                        "gpu": None,
                        "entity": record.get("entity"),
                        "test": test["name"],
                        "category": test["category"],
                        "verdict": verdict,
                        "message": record["message"],
                    }
                )
    if parsed.get("runtime_error"):
        problems.append({"gpu": None, "test": "dcgmi diag", "category": "", "verdict": "fail", "message": parsed["runtime_error"]})
    problems.sort(key=lambda item: -_SEVERITY[item["verdict"]])
    verdict = problems[0]["verdict"] if problems else "pass"
    tests = [{"name": test["name"], "category": test["category"], "status": test["status"]} for test in parsed.get("tests") or []]
    if problems:
        reason = "; ".join(_problem_text(node, item) for item in problems if item["verdict"] == verdict)
    elif tests:
        ran = [test for test in tests if test["status"] not in ("skip", "not_run")]
        reason = "node %s: %d DCGM diagnostic test(s) passed on %d GPU(s)%s" % (
            node,
            len(ran),
            len(gpus),
            " (%d skipped)" % (len(tests) - len(ran)) if len(tests) > len(ran) else "",
        )
    else:
        verdict = "warn"
        reason = "node %s: the DCGM diagnostic ran no test" % node
    return {
        "node": node,
        "verdict": verdict,
        "reason": reason,
        "gpus": dict((str(gpu), entry) for gpu, entry in sorted(gpus.items())),
        "failures": [dict((key, value) for key, value in item.items() if key != "verdict") for item in problems],
        "tests": tests,
        "dcgm_version": parsed.get("dcgm_version"),
        "driver_version": parsed.get("driver_version"),
    }


def _problem_text(node, item):
    where = (
        "node %s GPU %s" % (node, item["gpu"])
        if item["gpu"] is not None
        else ("node %s %s" % (node, item.get("entity")) if item.get("entity") else "node %s" % node)
    )
    category = " (%s)" % item["category"] if item["category"] else ""
    word = {"fail": "failed", "warn": "warned"}[item["verdict"]]
    return "%s: %s%s %s%s" % (where, item["test"], category, word, (": %s" % item["message"]) if item["message"] else "")


__all__ = ["DcgmParseError", "MARKER", "judge_node", "parse_diag_output"]
