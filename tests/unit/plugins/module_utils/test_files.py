# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every file the collection writes stays inside its directory and never writes through a planted link
(plugins/module_utils/files.py), for pod logs (cluster/pod_logs.write_logs) and reports (reporting/writer.write_reports)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster.pod_logs import write_logs
from ansible_collections.gpufleet.burnin.plugins.module_utils.files import safe_name, slug, write_file, write_files
from ansible_collections.gpufleet.burnin.plugins.module_utils.reporting.writer import write_reports


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
    assert [os.path.basename(path) for path in paths] == ["%s.log" % slug("../x")] and slug("../x").startswith("-x-")
    assert (logs / ("%s.log" % slug("../x"))).read_text() == "pod text"


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


# --- host and pod names on the render path (issue 25 item 1) -------------------------------------------------------
@pytest.mark.parametrize("name", ["aws-use1-h100-a", "cluster_a", "gke.europe-west4", "nccl-burnin-r1-node-0-3", "r1"])
def test_a_dns_or_plain_name_is_kept_as_it_is(name):
    assert slug(name) == name


@pytest.mark.parametrize("name", ["../x", "..", ".", "", None, "a/b", "/etc", "x\ny", "é", "x" * 300, ".hidden"])
def test_a_name_that_is_no_plain_file_name_is_slugged_and_stays_one_component(name):
    out = slug(name)
    assert out == safe_name(out) and os.path.dirname(out) == "" and out not in (".", "..")
    assert len(out) <= 184 and re.search(r"-[0-9a-f]{8}$", out), out


def test_names_that_reduce_alike_get_directories_of_their_own():
    # a/b and a-b would both be the plain name a-b: the slug of the unsafe one carries its hash.
    assert slug("a-b") == "a-b" and slug("a/b") != "a-b" and slug("a/b") != slug("a\\b")


def test_a_planted_symlink_at_a_rendered_manifest_or_summary_is_replaced_not_followed(tmp_path):
    target = tmp_path / "victim"
    target.write_text("precious")
    directory = tmp_path / "rendered" / "aws-a"
    directory.mkdir(parents=True)
    for name in ("manifests.yaml", "summary.json"):
        os.symlink(str(target), str(directory / name))
    out = write_files(str(directory), [{"name": "manifests.yaml", "content": "a"}, {"name": "summary.json", "content": "{}\n"}])
    assert out["changed"] and out["changed_files"] == out["files"]
    assert target.read_text() == "precious"
    assert [os.path.islink(path) for path in out["files"]] == [False, False]
    assert (directory / "summary.json").read_text() == "{}\n"
    again = write_files(str(directory), [{"name": "manifests.yaml", "content": "a"}, {"name": "summary.json", "content": "{}\n"}])
    assert not again["changed"] and sorted(os.listdir(str(directory))) == ["manifests.yaml", "summary.json"]


def test_write_files_refuses_names_that_are_no_plain_file_names_and_writes_nothing_in_check_mode(tmp_path):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

    for index, name in ((0, "../x"), (0, ".x"), (0, "a/b"), (1, "a")):
        files = [{"name": "a", "content": "1"}] + [{"name": name, "content": "2"}] if index else [{"name": name, "content": "2"}]
        with pytest.raises(ConfigError) as info:
            write_files(str(tmp_path), files)
        assert info.value.field == "files[%d].name" % index
    out = write_files(str(tmp_path / "new"), [{"name": "plan.yml", "content": "x"}], check_mode=True)
    assert out["changed_files"] == [str(tmp_path / "new" / "plan.yml")] and not (tmp_path / "new").exists()


def test_the_role_writes_every_file_through_burnin_write_in_directories_built_by_safe_path():
    # No copy or template task writes a file (they would follow the role's own paths unchecked); the directories
    # that hold a host name or run id are built with gpufleet.burnin.safe_path.
    import yaml

    tasks_dir = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "burnin", "tasks")
    writers, texts = [], {}
    for name in sorted(os.listdir(tasks_dir)):
        with open(os.path.join(tasks_dir, name)) as handle:
            texts[name] = handle.read()
        stack = list(yaml.safe_load(texts[name]) or [])
        while stack:
            task = stack.pop()
            stack.extend(task.get("block", []) + task.get("rescue", []) + task.get("always", []))
            for module in ("ansible.builtin.copy", "ansible.builtin.template", "copy", "template", "ansible.builtin.file"):
                assert module not in task, "%s: %s" % (name, task.get("name"))
            if "gpufleet.burnin.burnin_write" in task:
                writers.append(name)
    assert sorted(writers) == ["render.yml", "summary.yml", "sweep_coverage.yml"]
    for name in ("render.yml", "summary.yml", "sweep_coverage.yml"):
        assert "gpufleet.burnin.safe_path([" in texts[name], name
    # The stages' logs are written by plugin_utils/cluster_stages.py, under a directory built by files.safe_join.
    with open(os.path.join(tasks_dir, "..", "..", "..", "plugins", "plugin_utils", "cluster_stages.py")) as handle:
        assert "write_logs(safe_join(report_dir, [" in handle.read()
        assert "~ '/' ~ inventory_hostname" not in texts[name] and "}}/{{ burnin__run_id }}" not in texts[name], name
