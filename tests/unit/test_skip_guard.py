# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""tests/skip_guard.py: under CI=true an unexpected skip fails the pytest run; tests/expected-skips.yml is valid.

Each case runs a small pytest session in a temporary directory (pytester, in a subprocess) with the guard registered
the way the suites' conftest.py files do, and a temporary allow-list."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

pytest_plugins = ["pytester"]

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUARD = os.path.join(TESTS, "skip_guard.py")

CONFTEST = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("gpufleet_skip_guard_under_test", %r)
guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guard)

def pytest_configure(config):
    guard.register(config, allow_list=os.path.join(%r, "allow.yml"), repo=%r)
"""

SUITE = """
import pytest

def test_runs():
    pass

def test_no_gpu():
    pytest.skip("no GPU on this machine")

@pytest.mark.skipif(True, reason="the CRDs are not built")
def test_marked():
    pass

@pytest.mark.xfail(reason="known bug", strict=True)
def test_known_bug():
    assert False
"""


def load_guard():
    spec = importlib.util.spec_from_file_location("gpufleet_skip_guard_unit", GUARD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def session(pytester, monkeypatch):
    """Run SUITE (and extra files) under CI=true with ALLOW as the allow-list; returns the run result."""
    root = str(pytester.path)
    pytester.makeconftest(CONFTEST % (GUARD, root, root))
    monkeypatch.delenv("FLEET_SPEC", raising=False)
    # ansible-test's units step loads its plugins (collection path checks) through PYTEST_PLUGINS: not in the inner runs.
    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)

    def run(allow="[]", ci="true", files=None, **env):
        pytester.path.joinpath("allow.yml").write_text(allow)
        pytester.makepyfile(**dict({"test_suite": SUITE}, **(files or {})))
        if ci is None:
            monkeypatch.delenv("CI", raising=False)
        else:
            monkeypatch.setenv("CI", ci)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        # In a subprocess: ansible-test's units step patches pytest's package resolution in its process to the
        # collection tree, where the temporary directory is not. Without the Hypothesis plugin: its terminal summary
        # imports Hypothesis again in every inner session (seconds).
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-rs")

    return run


def test_an_unexpected_skip_fails_the_run_in_ci(session):
    result = session()
    assert result.ret == 1
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*unexpected skips (CI=true; tests/expected-skips.yml)*",
            "test_suite.py::test_no_gpu: no GPU on this machine",
            "test_suite.py::test_marked: the CRDs are not built",
        ]
    )
    # an expected failure is not a skip
    assert "test_known_bug" not in result.stdout.str().split("unexpected skips")[1]


def test_outside_ci_a_skip_stays_a_skip(session):
    for ci in (None, "", "false", "1"):
        assert session(ci=ci).ret == 0, ci


def test_skips_the_allow_list_names_pass(session):
    allow = """
- {test: "test_suite.py::test_no_gpu", reason: "no GPU*", why: the test machine has no GPU}
- {test: "test_suite.py::*", reason: "the CRDs are not built", why: no CRDs here}
"""
    result = session(allow=allow)
    assert result.ret == 0 and "unexpected skips" not in result.stdout.str()


def test_an_entry_must_match_both_the_test_and_the_reason(session):
    allow = """
- {test: "test_suite.py::test_no_gpu", reason: "the CRDs are not built", why: wrong reason}
- {test: "test_other.py::*", reason: "*", why: another file}
"""
    result = session(allow=allow)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["test_suite.py::test_no_gpu: no GPU on this machine", "test_suite.py::test_marked: the CRDs are not built"])


def test_only_if_expects_the_skip_only_when_its_variable_is_set(session):
    allow = """
- {test: "test_suite.py::*", reason: "*", why: a developer's own fleet, only_if: FLEET_SPEC}
"""
    assert session(allow=allow).ret == 1
    assert session(allow=allow, FLEET_SPEC="mine.yml").ret == 0


def test_a_module_skipped_at_collection_is_caught(session):
    files = {"test_needs_module": "import pytest\nnot_there = pytest.importorskip('gpufleet_no_such_module')\n\ndef test_x():\n    pass\n"}
    result = session(allow='- {test: "test_suite.py::*", reason: "*", why: the suite above}', files=files)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["test_needs_module.py: could not import 'gpufleet_no_such_module'*"])


def test_a_failing_run_stays_failed(session):
    files = {"test_fails": "def test_fails():\n    assert 1 == 2\n"}
    result = session(files=files)
    assert result.ret == 1
    result.assert_outcomes(passed=1, failed=1, skipped=2, xfailed=1)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{test: x}", "must be a list"),
        ("- {test: x, reason: y}", r"expected-skips.yml\[0\].why: is required"),
        ("- {test: x, reason: '', why: z}", r"\[0\].reason: is required"),
        ("- {test: x, reason: y, why: z, when: CI}", r"\[0\]: must be a mapping of only_if, reason, test, why"),
        ("- {test: x, reason: y, why: z, only_if: [A]}", r"\[0\].only_if: must be the name of an environment variable"),
    ],
)
def test_a_bad_allow_list_is_an_error_naming_the_entry(tmp_path, text, message):
    path = tmp_path / "expected-skips.yml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_guard().load_allow_list(str(path))


def test_the_repository_allow_list_is_valid_and_every_entry_says_why():
    guard = load_guard()
    entries = guard.load_allow_list()
    assert entries and all(len(entry["why"]) > 20 for entry in entries)
    # the CRD-schema tests never skip in CI: every units step of scripts/test.sh fetches their CRDs first
    crd = "tests/unit/plugins/module_utils/test_crd_schemas.py::test_x"
    reason = "the test bed's upstream CRDs are not built yet: run tests/fleet/build.sh in a checkout"
    assert guard.expected(crd, reason, entries, environ={}) is None
    assert guard.expected(crd, reason, entries, environ={"TEST_ONLY": "units"}) is None
    # a missing browser or a broken venv is never expected
    assert (
        guard.expected("tests/e2e/test_report_html.py::test_page", "apt-get installed chromium but no chromium binary is on PATH", entries, environ={}) is None
    )
    assert guard.expected("tests/e2e/test_awx_runner.py", "could not import 'ansible_runner': No module named 'ansible_runner'", entries, environ={}) is None
