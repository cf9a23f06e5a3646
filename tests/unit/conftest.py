# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Unit tests: under CI=true an unexpected skip fails the run (tests/skip_guard.py, tests/expected-skips.yml); a test
that runs past UNIT_TEST_SECONDS prints every thread's stack and ends its process."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import faulthandler
import importlib.util
import os
import sys

import pytest

# A unit test that waits without end (a reader thread that died before it signalled) held CI until its own limit with
# no word of where. No unit test needs a minute: past this, the stacks go to stderr and the test's process exits.
UNIT_TEST_SECONDS = 300


def _skip_guard():
    name = "gpufleet_skip_guard"
    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "skip_guard.py")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def pytest_configure(config):
    _skip_guard().register(config)


_STDERR = []


def _terminal_stderr(config):
    """The stderr pytest's own capture saved (the captured one is dropped when the process exits), else sys.stderr;
    opened once."""
    if not _STDERR:
        capturing = getattr(config.pluginmanager.getplugin("capturemanager"), "_global_capturing", None)
        saved = getattr(getattr(capturing, "err", None), "targetfd_save", None)
        _STDERR.append(os.fdopen(os.dup(saved), "w") if isinstance(saved, int) else sys.stderr)
    return _STDERR[0]


@pytest.fixture(autouse=True)
def _bounded_test(request):
    faulthandler.dump_traceback_later(UNIT_TEST_SECONDS, exit=True, file=_terminal_stderr(request.config))
    yield
    faulthandler.cancel_dump_traceback_later()
