# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The reports on disk, for the burnin_report action: its options, the chosen formats rendered and written beside
this run's sibling baselines, and the earlier runs read back (baselines to merge, reports that name repeat offenders).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import read_unlinked, write_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import drift, offenders, siblings
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting import history, html_view, junit
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import SCHEMA, build_report, render_json

FORMATS = ("json", "junit", "html")
FILE_SUFFIXES = {"json": ".json", "junit": ".junit.xml", "html": ".html"}
RENDERERS = {"json": render_json, "junit": junit.render_junit, "html": html_view.render_html}


def report_argument_spec():
    """Options of gpufleet.burnin.burnin_report (action plugin and its documentation stub)."""
    return dict(
        results=dict(type="raw", required=True),
        directory=dict(type="path", required=True),
        formats=dict(type="list", elements="str", choices=list(FORMATS), default=list(FORMATS)),
        run_id=dict(type="str"),
        title=dict(type="str", default="GPU burn-in"),
        generated=dict(type="str"),
        basename=dict(type="str", default="burnin-report"),
        baseline=dict(type="str", default=""),
        history_dir=dict(type="str", default=""),
        regression_percent=dict(type="float", default=history.DEFAULT_REGRESSION_PERCENT),
        # A SKU key (cluster fields), not a secret.
        sibling_key=dict(type="list", elements="str", default=list(siblings.DEFAULT_KEY), no_log=False),
        sibling_rule=dict(type="raw"),
        sibling_min=dict(type="int", default=siblings.DEFAULT_MIN_SIBLINGS),
        sibling_verdict=dict(type="str", choices=list(siblings.VERDICTS), default="warn"),
        baseline_dir=dict(type="str", default=""),
        golden=dict(type="raw"),
        drift_fail=dict(type="list", elements="str", default=[]),
        offender_failures=dict(type="int", default=offenders.DEFAULT_FAILURES),
        offender_runs=dict(type="int", default=offenders.DEFAULT_RUNS),
    )


def report_paths(directory, formats=FORMATS, basename="burnin-report"):
    return dict((fmt, os.path.join(directory, basename + FILE_SUFFIXES[fmt])) for fmt in formats)


BASELINES_FILE = "burnin-baselines.json"
# Bounds on the earlier baselines read (untrusted files): the latest files, each at most this size.
MAX_BASELINE_FILES = 100
MAX_BASELINE_BYTES = 64 << 20


def earlier_baselines(directory, current_dir=None):
    """(documents oldest first, notes) of the sibling baselines (BASELINES_FILE) in DIRECTORY and its run
    subdirectories, never CURRENT_DIR's: the latest MAX_BASELINE_FILES by time written. A file that is not a
    baselines document is left out with a note naming it."""
    if not directory:
        return [], []
    found = []
    try:
        names = [""] + sorted(os.listdir(directory))
    except (IOError, OSError) as exc:
        return [], ["burnin_baseline_dir %s cannot be read: %s" % (directory, exc.strerror or exc)]
    for name in names:
        folder = os.path.join(directory, name) if name else directory
        if name and (not os.path.isdir(folder) or os.path.islink(folder)):
            continue
        if current_dir and os.path.realpath(folder) == os.path.realpath(current_dir):
            continue
        path = os.path.join(folder, BASELINES_FILE)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                found.append((os.path.getmtime(path), path))
        except (IOError, OSError):
            continue
    documents, notes = [], []
    for _mtime, path in sorted(found)[-MAX_BASELINE_FILES:]:
        data = read_unlinked(path)
        try:
            if data is None or len(data) > MAX_BASELINE_BYTES:
                raise ValueError("missing or larger than %d bytes" % MAX_BASELINE_BYTES)
            doc = json.loads(data.decode("utf-8"))
            siblings.earlier_samples([doc])
        except (ValueError, UnicodeDecodeError, ConfigError) as exc:
            notes.append("earlier baselines %s left out: %s" % (path, exc))
            continue
        documents.append(doc)
    return documents, notes


def earlier_runs(directory, basename=history.DEFAULT_BASENAME, current_dir=None, limit=offenders.MAX_RUNS):
    """[(run id, offenders.node_states())] of the latest LIMIT earlier runs under DIRECTORY (subdirectories holding
    ``<basename>.json``, never CURRENT_DIR), oldest first; a report that cannot be read is skipped."""
    if not directory:
        return []
    try:
        names = sorted(os.listdir(directory))
    except (IOError, OSError):
        return []
    found = []
    for name in names:
        folder = os.path.join(directory, name)
        path = os.path.join(folder, basename + ".json")
        if current_dir and os.path.realpath(folder) == os.path.realpath(current_dir):
            continue
        try:
            if os.path.isdir(folder) and not os.path.islink(folder) and os.path.isfile(path):
                found.append((os.path.getmtime(path), name, path))
        except (IOError, OSError):
            continue
    runs = []
    for _mtime, name, path in sorted(found)[-limit:]:
        data = read_unlinked(path)
        try:
            if data is None or len(data) > MAX_BASELINE_BYTES:
                continue
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
            runs.append((str(doc.get("run_id") or name), offenders.node_states(doc)))
    return runs


def write_reports(
    results,
    directory,
    formats=FORMATS,
    run_id=None,
    title="GPU burn-in",
    generated=None,
    basename="burnin-report",
    check_mode=False,
    baseline="",
    history_dir="",
    regression_percent=history.DEFAULT_REGRESSION_PERCENT,
    sibling_key=siblings.DEFAULT_KEY,
    sibling_rule=None,
    sibling_min=siblings.DEFAULT_MIN_SIBLINGS,
    sibling_verdict="warn",
    baseline_dir="",
    offender_failures=offenders.DEFAULT_FAILURES,
    offender_runs=offenders.DEFAULT_RUNS,
    golden=None,
    drift_fail=(),
):
    """Render the chosen formats and write them into ``directory`` (created when missing); nothing is written in
    check mode. ``baseline`` (an earlier run's JSON report or its directory) or else the latest earlier run under
    ``history_dir`` is compared with (history.resolve_baseline); a baseline that is not a report is no comparison in
    the reports, which are still written, and its error is returned as ``baseline_error``. Nodes are judged against
    their SKU's siblings (judging/siblings.py), merged with the earlier baselines under ``baseline_dir``; this run's
    baselines are written as BASELINES_FILE beside the reports. The earlier runs' reports under ``history_dir`` name
    the repeat offenders (judging/offenders.py).
    Returns {files: {format: path}, changed: bool, changed_files: [...], summary, baseline, baseline_error}."""
    if not isinstance(directory, str) or not directory:
        raise ConfigError("directory", "must be the path of the directory to write the reports into")
    formats = list(formats or FORMATS)
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown:
        raise ConfigError("formats", "unknown format(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(FORMATS)))
    if not re.match(r"^[A-Za-z0-9._-]+\Z", basename or ""):
        raise ConfigError("basename", "must be a plain file name prefix, got %r" % (basename,))
    baseline_error = ""
    try:
        loaded, note = history.resolve_baseline(baseline, history_dir, run_id or "", basename, current_dir=directory)
    except ConfigError as exc:
        loaded, note, baseline_error = None, "baseline not compared: %s" % exc, str(exc)
    window = offenders.check_window(offender_failures, offender_runs)
    documents, sibling_notes = earlier_baselines(baseline_dir, current_dir=directory)
    options = dict(
        key=siblings.check_key(sibling_key),
        rule=siblings.check_rule(sibling_rule),
        min_siblings=siblings.check_min_siblings(sibling_min),
        verdict=siblings.check_verdict(sibling_verdict),
        earlier=siblings.earlier_samples(documents),
    )
    drift_options = dict(golden=drift.load_golden(golden), fail_keys=drift.check_fail_keys(drift_fail))
    report = build_report(
        results,
        run_id=run_id,
        title=title,
        generated=generated,
        baseline=loaded,
        regression_percent=regression_percent,
        baseline_note=note,
        sibling_options=options,
        drift_options=drift_options,
        earlier_runs=earlier_runs(history_dir, basename, directory, 3 * window[1]),
        offender_window=window,
    )
    report["siblings"].update(earlier_runs=len(documents), notes=sibling_notes)
    paths = report_paths(directory, formats, basename)
    contents = dict((fmt, RENDERERS[fmt](report)) for fmt in formats)
    if report["siblings"]["baselines"]:
        # Only a run that measured something per node has baselines for a later run to merge.
        paths["baselines"] = os.path.join(directory, BASELINES_FILE)
        contents["baselines"] = json.dumps(siblings.document(report["siblings"], report["run_id"], report["generated"]), indent=2, sort_keys=True) + "\n"
    changed = []
    for fmt in contents:
        content = contents[fmt]
        path = paths[fmt]
        if read_unlinked(path) == content.encode("utf-8"):
            continue
        changed.append(path)
        if not check_mode:
            write_file(directory, os.path.basename(path), content)
    return {
        "files": paths,
        "changed": bool(changed),
        "changed_files": changed,
        "summary": report["summary"],
        "baseline": report["baseline"],
        "baseline_error": baseline_error,
    }
