# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Under ``CI=true`` a skipped test fails the pytest run unless tests/expected-skips.yml names it.

A skip hides a test that did not run: the CRD-schema tests skip without the test bed's CRDs, the browser test
without Chromium, ``importorskip`` in a broken venv. Outside CI a skip stays a skip (a developer's machine may lack
things); in CI the run must say so. Registered by tests/unit/conftest.py, tests/e2e/conftest.py and
tests/packaging/conftest.py (``register``).

tests/expected-skips.yml is a list of {test, reason, why[, only_if]}: ``test`` an fnmatch pattern of the test's id
relative to the repository (tests/e2e/test_x.py::test_y[param]), ``reason`` an fnmatch pattern of the skip's
message, ``why`` the reason it is expected (required), ``only_if`` an environment variable that must be set for the
skip to be expected (e.g. a developer's own fleet spec).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ALLOW_LIST = os.path.join(HERE, "expected-skips.yml")
_KEYS = frozenset(("test", "reason", "why", "only_if"))


def load_allow_list(path=ALLOW_LIST):
    """The entries of PATH, checked: a bad entry is an error naming it, not a silently wider allow-list."""
    import yaml

    with open(path) as handle:
        data = yaml.safe_load(handle) or []
    if not isinstance(data, list):
        raise ValueError("%s: must be a list of {test, reason, why[, only_if]}" % path)
    for index, entry in enumerate(data):
        where = "%s[%d]" % (os.path.basename(path), index)
        if not isinstance(entry, dict) or set(entry) - _KEYS:
            raise ValueError("%s: must be a mapping of %s, got %r" % (where, ", ".join(sorted(_KEYS)), entry))
        for key in ("test", "reason", "why"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise ValueError("%s.%s: is required (a non-empty string)" % (where, key))
        if "only_if" in entry and not isinstance(entry["only_if"], str):
            raise ValueError("%s.only_if: must be the name of an environment variable" % where)
    return data


def skip_message(report):
    """The message of a skip report ('Skipped: why' -> 'why')."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        message = str(longrepr[2])
    else:
        message = str(longrepr)
    return message[len("Skipped: ") :] if message.startswith("Skipped: ") else message


def expected(test_id, message, entries, environ=None):
    """The allow-list entry that expects this skip, or None."""
    environ = os.environ if environ is None else environ
    for entry in entries:
        if entry.get("only_if") and not environ.get(entry["only_if"]):
            continue
        if fnmatch.fnmatchcase(test_id, entry["test"]) and fnmatch.fnmatchcase(message, entry["reason"]):
            return entry
    return None


class SkipGuard:
    """The pytest plugin: collects every skip, and at the end of the session fails it for the unexpected ones."""

    def __init__(self, rootpath, entries, repo=REPO):
        self.rootpath = str(rootpath)
        self.entries = entries
        self.repo = os.path.realpath(str(repo))
        self.unexpected = []

    def _test_id(self, nodeid):
        path, sep, rest = nodeid.partition("::")
        full = os.path.realpath(os.path.join(self.rootpath, path))
        # ids relative to the repository wherever pytest's rootdir is (a test directory, ansible-test's tree)
        rel = os.path.relpath(full, self.repo).replace(os.sep, "/")
        return rel + sep + rest

    def _record(self, report):
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        test_id, message = self._test_id(report.nodeid), skip_message(report)
        if expected(test_id, message, self.entries) is None:
            self.unexpected.append((test_id, message))

    def pytest_runtest_logreport(self, report):
        self._record(report)

    def pytest_collectreport(self, report):
        # a module-level skip (importorskip, pytest.skip(allow_module_level=True)) skips at collection
        self._record(report)

    def pytest_terminal_summary(self, terminalreporter):
        if self.unexpected:
            terminalreporter.section("unexpected skips (CI=true; tests/expected-skips.yml)", red=True)
            for test_id, message in self.unexpected:
                terminalreporter.line("%s: %s" % (test_id, message))

    def pytest_sessionfinish(self, session, exitstatus):
        if self.unexpected and exitstatus in (0, 5):
            session.exitstatus = 1


def register(config, allow_list=ALLOW_LIST, repo=REPO):
    """Register the guard on CONFIG when CI=true (once, whichever conftest asks first)."""
    if os.environ.get("CI") != "true" or config.pluginmanager.has_plugin("gpufleet-skip-guard"):
        return
    config.pluginmanager.register(SkipGuard(config.rootpath, load_allow_list(allow_list), repo), "gpufleet-skip-guard")
