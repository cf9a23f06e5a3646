# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Every whole-string pattern of the collection (``^...`` checked to the end) ends with ``\\Z``, not ``$``: ``$`` also
matches before a trailing newline, so ``re.match(r"^[a-z]+$", "abc\\n")`` accepts a label value the API server refuses
later, after other clusters were touched. Read from the source of every plugin, so a new pattern is held to it too."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os

import pytest

from ansible_collections.gpufleet.burnin.plugins.module_utils import validate

PLUGINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))), "plugins")
RE_CALLS = ("compile", "match", "fullmatch", "search")


def _pattern_text(node):
    """The literal text of a pattern argument: a string, or the left side of ``"..." % (...)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node = node.left
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _multiline(call):
    flags = list(call.args[1:2]) + [keyword.value for keyword in call.keywords if keyword.arg == "flags"]
    return any("MULTILINE" in ast.dump(flag) or "'M'" in ast.dump(flag) for flag in flags)


def whole_string_patterns():
    """(file:line, pattern) of every re.compile/match/fullmatch/search call on a literal that starts with ^ and is not
    MULTILINE (so it checks a whole string)."""
    found = []
    for directory, dirs, files in os.walk(PLUGINS):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), path)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RE_CALLS and node.args):
                    continue
                if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re"):
                    continue
                text = _pattern_text(node.args[0])
                if text is not None and text.startswith("^") and not _multiline(node):
                    found.append(("%s:%d" % (os.path.relpath(path, PLUGINS), node.lineno), text))
    return found


def test_the_scan_finds_the_grammars():
    anchored = [where for where, text in whole_string_patterns() if text.endswith("\\Z")]
    with open(os.path.join(PLUGINS, "module_utils", "validate.py")) as handle:
        dns_label = [n for n, line in enumerate(handle, 1) if line.strip().startswith('"dns_label": (re.compile(')]
    assert len(anchored) > 30 and len(dns_label) == 1 and "module_utils/validate.py:%d" % dns_label[0] in anchored


def test_every_whole_string_pattern_ends_with_backslash_z():
    # A pattern anchored at the start (^) checks to the end with \Z; one open at the end (a prefix: ^p5\.) is a prefix.
    wrong = ["%s %s" % (where, text) for where, text in whole_string_patterns() if text.endswith("$")]
    assert not wrong, "end these with \\Z, not $:\n" + "\n".join(wrong)


@pytest.mark.parametrize("kind", sorted(validate.GRAMMARS) if hasattr(validate, "GRAMMARS") else [])
def test_no_grammar_accepts_a_trailing_newline(kind):
    pattern = validate.GRAMMARS[kind][0]
    for sample in ("a", "abc", "a.b", "ConfigMap", "1", "/x", "v1", "x/y"):
        if pattern.match(sample):
            assert not pattern.match(sample + "\n"), (kind, sample)


@pytest.mark.parametrize(
    "name, value",
    [
        ("burnin_verified_label", "gpufleet.io/verified\n"),
        ("burnin_pushgateway_job", "gpufleet_burnin\n"),
        ("burnin_namespace", "burnin\n"),
        ("burnin_run_id", "r-1\n"),
    ],
)
def test_a_trailing_newline_is_refused_before_any_cluster(name, value):
    from ansible_collections.gpufleet.burnin.plugins.module_utils.burnin.role_vars import check_role_vars
    from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        check_role_vars({name: value})
    assert str(caught.value).startswith(name + ":")
