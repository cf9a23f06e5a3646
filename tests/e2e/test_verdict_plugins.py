# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The verdict plugins (nccl_results, burnin_verdict, burnin_workload, burnin_report) through ansible-playbook on localhost."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("extra", [[], ["--check"]], ids=["run", "check-mode"])
def test_verdict_plugins_playbook(extra, tmp_path):
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        "ansible_python_interpreter=%s" % sys.executable,
        "-e",
        "report_dir=%s" % tmp_path,
        os.path.join(HERE, "playbooks", "verdicts.yml"),
    ] + extra
    result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "failed=0" in result.stdout and "ignored=2" in result.stdout, result.stdout[-4000:]
    written = sorted(os.listdir(str(tmp_path / "e2e"))) if (tmp_path / "e2e").exists() else []
    assert written == ([] if extra else ["burnin-report.html", "burnin-report.json", "burnin-report.junit.xml"])
