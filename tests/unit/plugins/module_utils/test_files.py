# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every file the collection writes stays inside its directory and never writes through a planted link
(plugins/module_utils/files.py), for pod logs (cluster/pod_logs.write_logs) and reports (reporting/report.write_reports)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import write_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_name, write_file
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.report import write_reports


def log_result(name, text):
    return {"item": {"metadata": {"name": name}}, "log": text}


@pytest.mark.parametrize(
    "name, expected",
    [
        ("launcher-0.log", "launcher-0.log"),
        ("../x", "-x"),
        ("../../etc/passwd", "-..-etc-passwd"),
        ("..", "unnamed"),
        ("", "unnamed"),
        (None, "unnamed"),
        ("a/b\\c d\nе", "a-b-c-d-"),
        (".hidden", "hidden"),
        ("x" * 400, "x" * 200),
    ],
)
def test_safe_name_is_a_plain_name_in_the_directory(name, expected):
    assert safe_name(name) == expected
    assert os.path.dirname(safe_name(name)) == ""
    assert safe_name(name) not in (".", "..")


def test_pod_log_named_dot_dot_stays_inside_the_log_dir(tmp_path):
    logs = tmp_path / "logs"
    paths, changed = write_logs(str(logs), [log_result("../x", "pod text")])
    assert changed
    assert not (tmp_path / "x.log").exists()
    assert [os.path.dirname(path) for path in paths] == [str(logs)]
    assert (logs / "-x.log").read_text() == "pod text"


def test_planted_symlink_at_a_pod_log_is_replaced_not_followed(tmp_path):
    target = tmp_path / "victim"
    target.write_text("precious")
    logs = tmp_path / "logs"
    logs.mkdir()
    os.symlink(str(target), str(logs / "launcher.log"))
    paths, changed = write_logs(str(logs), [log_result("launcher", "text the pod controls")])
    assert changed
    assert target.read_text() == "precious"
    assert not os.path.islink(paths[0])
    assert (logs / "launcher.log").read_text() == "text the pod controls"


def test_planted_symlink_holding_the_same_text_is_still_replaced(tmp_path):
    # The unchanged check reads without following links: a link to a file with the same bytes is not "unchanged".
    target = tmp_path / "victim"
    target.write_text("same")
    os.symlink(str(target), str(tmp_path / "a.log"))
    path, changed = write_file(str(tmp_path), "a.log", "same")
    assert changed and not os.path.islink(path)


def test_log_dir_that_is_a_symlink_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(tmp_path / "logs"))
    with pytest.raises(OSError, match="symbolic link"):
        write_logs(str(tmp_path / "logs"), [log_result("launcher", "x")])
    assert os.listdir(str(elsewhere)) == []


def test_unchanged_log_is_not_rewritten_and_no_temporary_is_left(tmp_path):
    write_logs(str(tmp_path), [log_result("w-0", "a")])
    before = os.stat(str(tmp_path / "w-0.log")).st_ino
    paths, changed = write_logs(str(tmp_path), [log_result("w-0", "a")])
    assert not changed
    assert os.stat(paths[0]).st_ino == before
    assert sorted(os.listdir(str(tmp_path))) == ["w-0.log"]
    assert oct(os.stat(paths[0]).st_mode & 0o777) == "0o644"


def test_planted_symlink_at_a_report_is_replaced_not_followed(tmp_path):
    target = tmp_path / "victim"
    target.write_text("precious")
    reports = tmp_path / "reports"
    reports.mkdir()
    os.symlink(str(target), str(reports / "burnin-report.json"))
    out = write_reports([], str(reports), formats=["json"], run_id="r1", generated="2026-01-01T00:00:00Z")
    assert out["changed"]
    assert target.read_text() == "precious"
    assert not os.path.islink(out["files"]["json"])
    assert '"run_id"' in (reports / "burnin-report.json").read_text()


def test_report_dir_that_is_a_symlink_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(str(elsewhere), str(tmp_path / "reports"))
    with pytest.raises(OSError, match="symbolic link"):
        write_reports([], str(tmp_path / "reports"), formats=["json"], run_id="r1")
    assert os.listdir(str(elsewhere)) == []
