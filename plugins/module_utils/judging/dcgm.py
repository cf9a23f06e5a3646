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
Without JSON in the log: dcgmi's text table (``_table``; dcgmi/Diag.cpp), whose test rows say Warn for a warning.

Pure Python: the log text in, a plain dict out. :func:`dcgm_verdict` judges a run whose workload's ``results`` is
``dcgm-diag`` (plugins/module_utils/judging/verdict.py dispatches to it) with :func:`judge_node` per pod.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError, ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import kernel_log, log_lines
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.attribution import _log_items, cut_notes, job_check, with_node_attribution
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.dcgm_errors import SEVERITIES
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.node_findings import finding
from ansible_collections.gpufleet.burnin.plugins.module_utils.text import clean_tree
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import SEVERITY, worst

# The marker the catalogue's workload (templates/workloads/dcgm-diag.yaml) prints before the JSON.
MARKER = re.compile(r"^# gpufleet-burnin dcgm-diag on (?P<host>\S+?):", re.MULTILINE)
# The line it prints when coreutils timeout ended dcgmi (the workload's `timeout` parameter).
TIMEOUT_MARKER = re.compile(r"^# gpufleet-burnin dcgm-diag on \S+?: dcgmi diag timed out after (?P<seconds>\d+) s", re.MULTILINE)
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
# Nesting deeper than this is no DCGM document (dcgmi's nest about 8 levels): refused before json decodes it.
MAX_DEPTH = 64
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


# One pass over TEXT's JSON tokens: a string (JSON strings hold no raw newline), with the colon that makes it a key;
# a brace; or a quote that opens no string on its line, which ends that line's tokens (no JSON follows it there).
_TOKEN = re.compile(r'"((?:[^"\\\n]|\\.)*)"(\s*:)?|([{}])|"[^\n]*')
_DOCUMENT_KEYS = frozenset(TOP_KEYS + ("iterations",))


def _documents(text):
    """Every JSON object in TEXT that is a DCGM diagnostic document (or an --iterations wrapper), in order.

    Linear in TEXT: one tokenizing pass pairs the braces (an explicit stack, no recursion) and marks each object that
    holds a DCGM document's key; only the outermost marked objects are decoded, each once. An unpaired brace in noise
    around the JSON opens an object that never closes and so hides nothing.
    """
    # The open objects as three parallel lists of ints and bools (untracked by the garbage collector, so a line of
    # millions of braces stays linear): start, depth of the deepest object inside, holds a document key.
    starts, belows, marks = [], [], []
    spans = []  # (start, end, depth) of the outermost marked objects so far
    for match in _TOKEN.finditer(text):
        brace = match.group(3)
        if brace is None:
            if starts and match.group(2) and match.group(1) in _DOCUMENT_KEYS:
                marks[-1] = True
            continue
        if brace == "{":
            starts.append(match.start())
            belows.append(0)
            marks.append(False)
            continue
        if not starts:
            continue
        start, below, marked = starts.pop(), belows.pop(), marks.pop()
        depth = below + 1
        if belows and belows[-1] < depth:
            belows[-1] = depth
        if marked:
            while spans and spans[-1][0] > start:
                spans.pop()
            spans.append((start, match.end(), depth))
    found = []
    for start, end, depth in spans:
        if depth > MAX_DEPTH:
            raise DcgmParseError("the DCGM diagnostic JSON nests %d levels deep, more than %d: no document dcgmi writes" % (depth, MAX_DEPTH))
        try:
            # A JSON escape makes characters the log's bytes never held (\udcff, \u0000): made safe here (module_utils/text.py).
            value = clean_tree(json.loads(text[start:end]))
        except ValueError:
            continue
        if isinstance(value, dict) and (any(key in value for key in TOP_KEYS) or isinstance(value.get("iterations"), list)):
            found.append(value)
    return found


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
            out.append({"message": item.strip(), "error_id": None, "severity": None})
        elif isinstance(item, dict):
            message = item.get("warning")
            if not isinstance(message, str):
                # Diag.cpp's level-one results put the text under "warnings" (NVVS_WARNINGS) in 3.x.
                message = item.get("warnings") if isinstance(item.get("warnings"), str) else ""
            severity = _int(item.get("error_severity"))
            out.append({"message": message.strip(), "error_id": _int(item.get("error_id")), "severity": severity if severity in SEVERITIES else None})
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
                record.update(_judged(status, warnings))
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
                record = {"status": entry["status"], "message": _message(warnings, []), "warnings": warnings, "info": [], "entity": None}
                record.update(_judged(entry["status"], warnings))
                entry["node"].append(record)
            parsed["tests"].append(entry)
    return parsed


def _judged(status, warnings):
    """{verdict, severity (DCGM's name, or None), action} of one result from its status and its warnings' severities.

    dcgmi writes a warning as "Fail" (dcgmi/Diag.cpp), so a Fail is judged by its warnings' error_severity
    (SEVERITIES): MONITOR and CONFIG warn, the others fail; a Fail without a known severity fails.
    """
    if status != "fail":
        return {"verdict": _VERDICT_OF[status], "severity": None, "action": None}
    known = [SEVERITIES[item["severity"]] for item in warnings if item["severity"] is not None and SEVERITIES[item["severity"]][1]]
    if not known:
        return {"verdict": "fail", "severity": None, "action": None}
    worst = max(known, key=lambda row: SEVERITY[row[1]])
    return {"verdict": worst[1], "severity": worst[0], "action": worst[3]}


_STATUS_RANK = {"not_run": 0, "skip": 1, "pass": 2, "warn": 3, "fail": 4}


def _worst_status(statuses):
    statuses = [status for status in statuses if status]
    return max(statuses, key=lambda status: _STATUS_RANK[status]) if statuses else None


def _worse(old, new):
    if old is None:
        return new
    rank_new = (SEVERITY[new["verdict"]], _STATUS_RANK[new["status"]])
    rank_old = (SEVERITY[old["verdict"]], _STATUS_RANK[old["status"]])
    return new if rank_new > rank_old else old


# dcgmi's text table (dcgmi/Diag.cpp), read when a log holds no JSON (a command without -j, or output pasted from a
# terminal). Diag::HelperDisplayDiagResult prints a warned test's own row as "Warn" but its per-GPU rows (and -j) as
# "Fail", so a GPU's "Fail" under a "Warn" row is a warning. Diag::DisplayVerboseInfo cuts a Warning/Info message into
# pieces of exactly DATA_INFO_TAG_LEN (45) characters, mid-word, one per row; the padding hides a piece's trailing
# spaces, so each piece but the last is padded back to the column's width.
_TABLE_BORDER = re.compile(r"^\+=+\+(?P<value>=+)\+\Z")
_TABLE_CLOSE = re.compile(r"^\+-+\+-+\+\Z")  # the closing border: dcgmi printed its whole table
_TABLE_CATEGORY = re.compile(r"^[|+]-----\s+(?P<name>[A-Za-z]+(?: [A-Za-z]+)*)\s+-+\+-*[|+]\Z")
_TABLE_ROW = re.compile(r"^\|(?P<name>[^|]*)\|(?P<value>[^|]*)\|\Z")
_TABLE_GPU = re.compile(r"^GPU\s*(?P<gpu>\d+)\s*:\s*(?P<status>\S.*)\Z")
_TABLE_NOTES = ("Warning", "Info")
_TABLE_MAX_LINE = 200


def _table(text):
    """The parsed diagnostic (as parse_diag_output returns it) from dcgmi's text table in TEXT, or None if it holds none.

    One pass over the lines; leading indentation (a document's code block) is ignored.
    """
    seen = False
    width = 45  # the value column's text width in Diag.cpp's table; read again from each table's "+===+===+" border
    category = ""
    version = driver = None
    tests = []
    record = None  # the result the next Warning/Info rows belong to
    note = None  # [kind, pieces] of the Warning/Info row being continued
    closed = False  # the table's end marker seen after its last row: the only proof it was not cut
    categories = []
    for raw in text.splitlines():
        # launcher and collector prefixes (kubectl --timestamps, --prefix, ...) by the one grammar of them
        line = log_lines.strip(raw).strip()
        # dcgmi's table is 80 characters wide: a longer line is no row of it, and no regex below sees more.
        if not line or line[0] not in "|+" or len(line) > _TABLE_MAX_LINE:
            continue
        if line.startswith(("|-----", "+-----")):
            heading = _TABLE_CATEGORY.match(line)
            if heading:
                # A category heading is a table too (a pasted tail of one).
                seen, category, record, note = True, heading.group("name").strip(), None, None
                closed = False
                categories.append(category)
                continue
        if line[0] == "+":
            if seen and _TABLE_CLOSE.match(line):
                closed = True
            border = _TABLE_BORDER.match(line) if seen and line.startswith("+=") else None
            if border:
                width = len(border.group("value")) - 3
            record = note = None
            continue
        row = _TABLE_ROW.match(line)
        if not row:
            record = note = None
            continue
        closed = closed and not seen
        if not seen:
            seen = row.group("name").strip() == "Diagnostic" and row.group("value").strip() == "Result"
            continue
        name, value = row.group("name").strip(), row.group("value")
        value = (value[1:] if value.startswith(" ") else value).rstrip()
        if category == "Metadata":
            if name == "DCGM Version":
                version = value or None
            elif name == "Driver Version Detected":
                driver = value or None
            continue
        if name in _TABLE_NOTES and record is not None:
            note = [name, [value]]
            record["notes"].append(note)
            continue
        gpu = _TABLE_GPU.match(value) if not name else None
        if not name and note is not None and gpu is None:
            note[1].append(value)
            continue
        note = None
        if gpu and tests:
            status = _status(gpu.group("status"))
            if status is not None:
                record = {"status": status, "notes": []}
                tests[-1]["gpus"][int(gpu.group("gpu"))] = record
            continue
        if name:
            status = _status(value)
            if status is None:
                record = None
                continue
            record = {"status": status, "notes": []}
            tests.append({"name": name, "category": category, "status": status, "gpus": {}, "node": [record]})
    if not seen:
        return None
    for test in tests:
        for gpu, result in list(test["gpus"].items()):
            if test["status"] == "warn" and result["status"] == "fail":
                result["status"] = "warn"
            test["gpus"][gpu] = _table_record(result, width)
        node = _table_record(test["node"][0], width)
        # The test's own row repeats its GPUs' worst status: a node-wide result only when no GPU row says more.
        test["node"] = [node] if not test["gpus"] or node["warnings"] or node["info"] else []
    return {"dcgm_version": version, "driver_version": driver, "runtime_error": None, "tests": tests, "complete": closed, "categories": categories}


def _table_record(result, width):
    warnings, info = [], []
    for kind, pieces in result["notes"]:
        text = "".join(piece.ljust(width) for piece in pieces[:-1]) + pieces[-1]
        if kind == "Warning":
            warnings.append({"message": text.strip(), "error_id": None, "severity": None})
        elif text.strip():
            info.append(text.strip())
    record = {"status": result["status"], "message": _message(warnings, info), "warnings": warnings, "info": info, "entity": None}
    record.update(_judged(result["status"], warnings))
    return record


def parse_diag_output(text):
    """Read ``dcgmi diag -j`` output out of a pod's log TEXT (noise before and after the JSON is fine); without
    JSON, dcgmi's text table (a command without ``-j``), whose statuses already say Warn.

    Returns {host (the workload's marker line, or None), dcgm_version, driver_version, runtime_error, iterations,
    tests: [{name, category, status, gpus: {index: {status, message, warnings, info}}, node: [node-wide results]}]}.
    Raises DcgmParseError when the log holds no DCGM diagnostic JSON (the reason says what it holds instead).
    """
    if not isinstance(text, str):
        raise DcgmParseError("no log text")
    marker = MARKER.search(text)
    documents = _documents(text)
    if not documents:
        parsed = _table(text)
        if parsed is not None and (parsed["tests"] or parsed["dcgm_version"]):
            parsed["iterations"] = 1
            parsed["host"] = marker.group("host") if marker else None
            return parsed
        timed_out = TIMEOUT_MARKER.search(text)
        if timed_out:
            raise DcgmParseError(
                "dcgmi diag did not finish within its timeout of %s s and was stopped (a hang, as NVIDIA/DCGM#247 reports"
                " on B200/GB200, or a level that needs longer: burnin_workload_params timeout)" % timed_out.group("seconds")
            )
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
    parsed["complete"] = True  # a JSON document decoded whole (_documents decodes only closed objects)
    parsed["host"] = marker.group("host") if marker else None
    return parsed


def judge_node(parsed, node):
    """One node's judgement from its parsed diagnostic (parse_diag_output): {node, verdict (pass, warn or fail),
    reason, gpus: {index: {verdict, tests: [{name, category, status, message}]}}, failures: [{gpu, test, category,
    message}] (failed and warned GPU results, worst first), tests: [{name, category, status}]}.

    A result is judged by its warnings' DCGM severity (SEVERITIES; dcgmi prints warnings as "Fail"): MONITOR and
    CONFIG warn, ISOLATE, UNKNOWN, TRIAGE and RESET fail, a Fail without a known severity fails; each failure names
    the severity and its action. A skipped test decides nothing; a node-wide (level-one) result counts like a GPU's,
    without a GPU. A runtime error (dcgmi could not run the diagnostic) is the verdict ``error``, naming it.
    """
    gpus = {}
    problems = []
    for test in parsed.get("tests") or []:
        for gpu, record in sorted(test["gpus"].items()):
            entry = gpus.setdefault(gpu, {"verdict": "pass", "tests": []})
            entry["tests"].append({"name": test["name"], "category": test["category"], "status": record["status"], "message": record["message"]})
            verdict = record["verdict"]
            if SEVERITY[verdict] > SEVERITY[entry["verdict"]]:
                entry["verdict"] = verdict
            if verdict != "pass":
                problems.append(_problem(gpu, None, test, record))
        for record in test["node"]:
            if record["verdict"] != "pass":
                problems.append(_problem(None, record.get("entity"), test, record))
    problems.sort(key=lambda item: -SEVERITY[item["verdict"]])
    verdict = problems[0]["verdict"] if problems else "pass"
    tests = [{"name": test["name"], "category": test["category"], "status": test["status"]} for test in parsed.get("tests") or []]
    if parsed.get("runtime_error"):
        # dcgmi could not run the diagnostic (no engine, no GPU access, a bad parameter): nothing was learnt about
        # the GPUs, so the node's result is an error naming the setup failure, not a failed GPU.
        verdict = "error"
        reason = "node %s: dcgmi could not run the diagnostic (a setup failure, not a GPU result): %s" % (node, parsed["runtime_error"])
        problems.insert(
            0, {"gpu": None, "test": "dcgmi diag", "category": "", "verdict": "error", "severity": None, "action": None, "message": parsed["runtime_error"]}
        )
    elif problems and (verdict == "fail" or parsed.get("complete", True)):
        reason = "; ".join(_problem_text(node, item) for item in problems if item["verdict"] == verdict)
    elif not parsed.get("complete", True):
        # Truncation never passes: a table without its closing border was cut (a terminal, kubectl exec, a log
        # collector); what it holds so far is no result, unless it already holds a fault (above).
        verdict = "error"
        seen = ", ".join(parsed.get("categories") or []) or "no section"
        reason = "node %s: dcgmi's table is cut (no closing border after %s; %d test(s) seen%s), so the diagnostic's result is unknown" % (
            node,
            seen,
            len(tests),
            ("; %s" % "; ".join(_problem_text(node, item) for item in problems)) if problems else "",
        )
    elif tests:
        ran = [test for test in tests if test["status"] not in ("skip", "not_run")]
        # DCGM 3.x tables say "Pass - All" and name no GPU: "on 0 GPU(s)" would misread that.
        reason = "node %s: %d DCGM diagnostic test(s) passed %s%s" % (
            node,
            len(ran),
            ("on %d GPU(s)" % len(gpus)) if gpus else "for the whole GPU group (dcgmi named no GPU)",
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


def _problem(gpu, entity, test, record):
    item = {"gpu": gpu, "test": test["name"], "category": test["category"], "verdict": record["verdict"], "message": record["message"]}
    if gpu is None:
        item["entity"] = entity
    item["severity"], item["action"] = record.get("severity"), record.get("action")
    return item


def _problem_text(node, item):
    where = (
        "node %s GPU %s" % (node, item["gpu"])
        if item["gpu"] is not None
        else ("node %s %s" % (node, item.get("entity")) if item.get("entity") else "node %s" % node)
    )
    category = " (%s)" % item["category"] if item["category"] else ""
    word = {"fail": "failed", "warn": "warned"}[item["verdict"]]
    severity = " [DCGM severity %s: %s]" % (item["severity"], item["action"]) if item.get("severity") else ""
    return "%s: %s%s %s%s%s" % (where, item["test"], category, word, (": %s" % item["message"]) if item["message"] else "", severity)


def _dcgm_texts(output, pod_logs):
    """{pod name (or "output"): (text or None, read error or None)} of the logs to judge."""
    source = pod_logs if isinstance(pod_logs, (dict, list)) and pod_logs else output
    if isinstance(source, str):
        return {"output": (source, None)} if source else {}
    if isinstance(source, (dict, list)) and source:
        return _log_items(source)
    if source is None or source == "" or source == [] or source == {}:
        return {}
    raise ConfigError("output", "must be the pods' logs (k8s_log loop results, a mapping of pod name to text) or a log text, got %s" % type(source).__name__)


SEVERITY_RANK = {"pass": 0, "warn": 1, "fail": 2, "error": 3}


def dcgm_verdict(output, facts=None, job=None, judging=None):
    """Judge a ``dcgm-diag`` run (templates/workloads/dcgm-diag.yaml) by each pod's DCGM diagnostic JSON.

    ``output`` / ``job.pod_logs``: the pods' logs (k8s_log loop results or {pod name: text}) or one log's text: the
    whole run, or one pod's (a per-node stage calls it once per node). ``job.pods``: the pods (spec.nodeName) to name
    each log's node; without them a log is named by the host its marker line prints; ``job.outcome``, ``job.reason``:
    how the TrainJob ended. ``judging``: workload, stage (``dcgm`` unless given). Each judged node has a check (name
    ``dcgm``, with ``node``, ``pod``, ``failures``) and a finding of the stage (plugins/module_utils/judging/node_findings.py)
    with the failing GPUs and tests as evidence; a GPU failing a test fails the run ("node X GPU 5: diagnostic
    (Hardware) failed: <DCGM's message>"), a warning warns it; a log without DCGM JSON is an ``error`` check naming its
    pod and node (no finding: nothing was learnt about the node). Returns judge()'s fields plus ``results``
    (dcgm-diag), ``dcgm`` ({node: judge_node()}) and ``findings``; with pods or logs, the attribution too, its
    ``failed_nodes`` including the nodes with a failed GPU.
    """
    job, judging = job or {}, judging or {}
    job_outcome, job_reason, pods, pod_logs = job.get("outcome"), job.get("reason"), job.get("pods"), job.get("pod_logs")
    stage = judging.get("stage", "dcgm")
    facts = dict(facts or {})
    texts = _dcgm_texts(output, pod_logs)
    node_of = {}
    for pod in pods or []:
        metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        if metadata.get("name") and spec.get("nodeName"):
            node_of[metadata["name"]] = spec["nodeName"]
    checks = []
    if job_outcome:
        checks.append(job_check(job_outcome, job_reason, bool(texts), True))
    judged, found, errors = {}, [], []
    for name in sorted(texts):
        text, read_error = texts[name]
        parsed, problem = None, read_error
        if problem is None:
            try:
                parsed = parse_diag_output(text)
            except DcgmParseError as exc:
                problem = str(exc)
        node = node_of.get(name) or _marker_host(text) or name
        where = "node %s (pod %s)" % (node, name) if node != name else "pod %s" % name
        if parsed is None:
            reason = "%s: no DCGM diagnostic result: %s" % (where, problem)
            kernel = kernel_log.judge(text)
            if kernel and kernel["verdict"] == "fail":
                # no diagnostic, but the node's kernel log names an Xid whose catalog action takes the node out
                reason = "node %s %s (%s)" % (node, kernel["reason"], reason)
                checks.append({"name": "dcgm", "verdict": "fail", "node": node, "pod": name, "reason": reason})
                judged[node] = {
                    "verdict": "fail",
                    "reason": reason,
                    "gpus": {},
                    "failures": [],
                    "tests": [],
                    "dcgm_version": None,
                    "driver_version": None,
                    "pod": name,
                }
                evidence = {"pod": name, "failed_gpus": [], "failures": [], "tests": [], "kernel_xids": kernel["xids"], "log_lines": kernel["lines"]}
                found.append(finding(node, stage, "fail", reason, evidence))
                continue
            errors.append(reason)
            checks.append({"name": "dcgm", "verdict": "error", "node": node, "pod": name, "reason": reason})
            continue
        result = judge_node(parsed, node)
        kernel = kernel_log.judge(text)
        if kernel and kernel["xids"]:
            # The node's own kernel log (kernel_log: true): an Xid the diagnostic did not see still decides the node,
            # with NVIDIA's catalog action (judging/kernel_log.py).
            result = dict(result)
            text_kernel = "node %s %s" % (node, kernel["reason"])
            if SEVERITY_RANK[kernel["verdict"]] > SEVERITY_RANK.get(result["verdict"], 0) or (result["verdict"] == "error" and kernel["verdict"] == "fail"):
                result["verdict"], result["reason"] = kernel["verdict"], text_kernel
            elif kernel["verdict"] != "pass":
                result["reason"] = "%s; %s" % (result["reason"], text_kernel)
        if result["verdict"] == "error":
            # dcgmi's runtime_error: the diagnostic did not run, so nothing was learnt about the node (no finding).
            reason = "%s: %s" % (where, result["reason"].split(": ", 1)[1])
            errors.append(reason)
            checks.append({"name": "dcgm", "verdict": "error", "node": node, "pod": name, "reason": reason})
            continue
        judged[node] = dict(result, pod=name)
        failed_gpus = sorted(set(item["gpu"] for item in result["failures"] if item["gpu"] is not None))
        check = {"name": "dcgm", "verdict": result["verdict"], "node": node, "pod": name, "reason": result["reason"], "failures": result["failures"]}
        if failed_gpus:
            check["value"] = "GPU %s" % ", ".join(str(gpu) for gpu in failed_gpus)
        checks.append(check)
        evidence = {"pod": name, "failed_gpus": failed_gpus, "failures": result["failures"], "tests": result["tests"], "dcgm_version": result["dcgm_version"]}
        if kernel and kernel["xids"]:
            evidence["kernel_xids"] = kernel["xids"]
            evidence["log_lines"] = kernel["lines"]  # actions.finding_xids reads them: the catalog's action
        found.append(finding(node, stage, result["verdict"], result["reason"], evidence))
    if not texts:
        checks.append({"name": "dcgm", "verdict": "error", "reason": "no result: no pod log to read DCGM diagnostic output from"})
    verdict = worst(check["verdict"] for check in checks)
    if verdict == "pass":
        gpus = sum(len(entry["gpus"]) for entry in judged.values())
        where = ("%d GPU(s)" % gpus) if gpus else "no GPU named (dcgmi's table reports the whole group)"
        reason = "%sDCGM diagnostic passed on %d node(s), %s" % ("TrainJob %s; " % job_outcome if job_outcome else "", len(judged), where)
    else:
        reason = "; ".join(check["reason"] for check in checks if check["verdict"] == verdict)
    failed_gpus = sum(len(set(item["gpu"] for item in entry["failures"] if item["gpu"] is not None)) for entry in judged.values())
    out = {
        "workload": judging.get("workload"),
        "collective": None,
        "results": "dcgm-diag",
        "verdict": verdict,
        "reason": reason,
        "checks": checks,
        "notes": cut_notes(pod_logs if pod_logs is not None else output),
        "transport": None,
        "thresholds": [],
        "metrics": {
            "dcgm_version": next((entry["dcgm_version"] for entry in judged.values() if entry["dcgm_version"]), None),
            "driver_version": next((entry["driver_version"] for entry in judged.values() if entry["driver_version"]), None),
            "nodes_judged": len(judged),
            "gpus_judged": sum(len(entry["gpus"]) for entry in judged.values()),
            "failed_gpus": failed_gpus,
        },
        "series": [],
        "facts": facts,
        "errors": errors[:10],
        "warnings": 0,
        "problems": [],
        "output_pod": None,
        "dcgm": judged,
        "findings": found,
    }
    return with_node_attribution(out, judged, found, pods, pod_logs, output, job_outcome)


def judge_dcgm_pod(output, facts, job, judging):
    """One pod's DCGM diagnostic JSON (:func:`dcgm_verdict`): its verdict with the
    failing GPUs and tests as evidence, or None when the log holds nothing of DCGM's. JOB: the pod (``pods``, with
    the node it ran on, naming the node in the reason) and its log (``pod_logs``); without them the log's marker line
    names the pod's host."""
    if not output or "DCGM" not in output:
        return None
    verdict = dcgm_verdict(output, facts, job, {})
    found = verdict.get("findings") or []
    if found:
        verdict["evidence"] = dict(found[0].get("evidence") or {})
    return verdict


def _marker_host(text):
    match = MARKER.search(text or "")
    return match.group("host") if match else None


__all__ = ["DcgmParseError", "MARKER", "SEVERITIES", "TIMEOUT_MARKER", "dcgm_verdict", "judge_dcgm_pod", "judge_node", "parse_diag_output"]
