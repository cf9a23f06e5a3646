# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Unit tests: under CI=true an unexpected skip fails the run (tests/skip_guard.py, tests/expected-skips.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import sys


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
