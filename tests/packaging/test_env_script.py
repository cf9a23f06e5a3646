# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""scripts/env.sh puts this checkout's collection tree first on PYTHONPATH and drops another checkout's, whatever cache
made it: ansible-core also finds collections on sys.path, so a tree left there from an env.sh sourced earlier in the
same shell (another checkout, or the default cache when CI=true makes its own) would be a second gpufleet.burnin and
kubernetes.core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_another_checkouts_tree_is_dropped_and_other_entries_kept(tmp_path):
    other = tmp_path / "elsewhere" / "trees" / "0123456789ab"
    (other / "ansible_collections" / "gpufleet" / "burnin").mkdir(parents=True)
    plain = tmp_path / "plain"
    plain.mkdir()
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH="%s:%s" % (other, plain), GPUFLEET_CACHE=str(cache), GPUFLEET_ENV_QUIET="1")
    out = subprocess.run(
        ["bash", "-c", 'source scripts/env.sh >/dev/null 2>&1; printf "%s" "$PYTHONPATH"'],
        cwd=str(ROOT),
        env=env,
        stdout=subprocess.PIPE,
        universal_newlines=True,
        check=True,
    ).stdout
    entries = out.split(":")
    assert entries[0].startswith(str(cache / "trees")), entries
    assert str(other) not in entries and entries[1:] == [str(plain)], entries
