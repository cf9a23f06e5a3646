# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The public plugins through ansible-playbook on localhost (no cluster needed)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("extra", [[], ["--check"]], ids=["run", "check-mode"])
def test_plugins_playbook(extra):
    env = dict(os.environ, ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    command = [
        os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
        "-i",
        "localhost,",
        "-c",
        "local",
        "-e",
        "ansible_python_interpreter=%s" % sys.executable,
        os.path.join(HERE, "playbooks", "plugins.yml"),
    ] + extra
    result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "failed=0" in result.stdout and "ignored=2" in result.stdout, result.stdout[-4000:]
