# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""`make mutate CHANGED=1` (scripts/mutation_changed.py): which modules and which of their lines a change touched."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location("mutation_changed", os.path.join(ROOT, "scripts", "mutation_changed.py"))
mc = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(mc)

SOURCE = """LIMIT = 63


def first(value):
    return value + 1


class Thing(object):
    def method(self, value):
        def inner(item):
            return item * 2

        return inner(value)


@staticmethod
def decorated(value):
    return value
"""


def test_a_changed_line_selects_its_outermost_function_and_a_top_level_line_itself():
    assert mc.touched_spans(SOURCE, {5}) == [(4, 5)]
    assert mc.touched_spans(SOURCE, {1}) == [(1, 1)]
    # a nested function's line selects the method that holds it, whole
    assert mc.touched_spans(SOURCE, {11}) == [(9, 13)]
    # a decorator belongs to its function
    assert mc.touched_spans(SOURCE, {16}) == [(16, 18)]
    # adjacent ranges merge
    assert mc.touched_spans(SOURCE, {1, 2, 3, 5}) == [(1, 5)]
    assert mc.touched_spans(SOURCE, set()) == []
    assert mc.touched_spans(SOURCE, None) == [(1, 18)]


def _git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args), check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_modules_changed_since_a_base_committed_uncommitted_and_untracked(tmp_path, capsys):
    repo = str(tmp_path)
    mu = os.path.join(repo, "plugins", "module_utils", "judging")
    os.makedirs(mu)
    for name in ("a.py", "b.py", "c.py", "__init__.py"):
        with open(os.path.join(mu, name), "w") as handle:
            handle.write(SOURCE if name != "__init__.py" else "")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "base")
    base = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    # committed: a.py's first(); uncommitted: b.py's method; untracked: d.py; c.py unchanged; a deletion in __init__.py
    with open(os.path.join(mu, "a.py"), "w") as handle:
        handle.write(SOURCE.replace("value + 1", "value + 2"))
    _git(repo, "commit", "-qam", "change")
    with open(os.path.join(mu, "b.py"), "w") as handle:
        handle.write(SOURCE.replace("item * 2", "item * 3"))
    with open(os.path.join(mu, "d.py"), "w") as handle:
        handle.write("X = 1\n")
    with open(os.path.join(mu, "__init__.py"), "w") as handle:
        handle.write("# touched\n")
    lines = mc.changed_lines(repo, base)
    assert lines == {"judging/a.py": {5}, "judging/b.py": {11}, "judging/d.py": None}
    mc.changed(repo, base)
    assert capsys.readouterr().out.splitlines() == ["judging/a.py 4-5", "judging/b.py 9-13", "judging/d.py 1-1"]
    mc.changed(repo, base, {"judging/b.py"})
    assert capsys.readouterr().out.splitlines() == ["judging/b.py 9-13"]
    # a pure deletion marks the lines on both sides of it
    with open(os.path.join(mu, "c.py"), "w") as handle:
        handle.write(SOURCE.replace("LIMIT = 63\n", ""))
    assert mc.changed_lines(repo, base)["judging/c.py"] == {1}
