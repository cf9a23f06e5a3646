# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""settled() of tests/e2e/test_role.py under a fake clock: it returns once the snapshots stopped changing for the
quiet seconds and fails at its timeout when they never do (the --check test compares against its answer)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

ROLE_E2E = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e", "test_role.py")


def load():
    # under a name of its own: pytest must not collect the e2e module's tests from here
    spec = importlib.util.spec_from_file_location("gpufleet_role_e2e_under_test", ROLE_E2E)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


settled = load().settled


class Clock:
    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class Fleet:
    """Snapshots per cluster: CHANGES[c] is how many more polls cluster c's resourceVersion moves on."""

    def __init__(self, changes, deleting=0):
        self.changes = dict(changes)
        # how many more polls a pod of the first cluster is still being deleted
        self.deleting = deleting
        self.clusters = sorted(changes)
        self.fleet = self
        self.version = dict((c, 0) for c in changes)

    def terminating(self, cluster):
        if cluster != self.clusters[0] or self.deleting <= 0:
            return 0
        self.deleting -= 1
        return 1

    def snapshot(self, cluster):
        if self.changes[cluster] > 0:
            self.changes[cluster] -= 1
            self.version[cluster] += 1
        return {("TrainJob", "job", str(self.version[cluster]))}


def test_it_returns_the_snapshot_once_quiet_for_the_quiet_seconds():
    clock = Clock()
    fleet = Fleet({"a": 3, "b": 0})
    got = settled(fleet, quiet=5.0, timeout=90.0, clock=clock, sleep=clock.sleep)
    assert got == {"a": {("TrainJob", "job", "3")}, "b": {("TrainJob", "job", "0")}}
    # polls at 0, 1, 2 (a changes each time), then 5 quiet seconds: 3 ... 7
    assert clock.now - 1000.0 == 7.0, clock.sleeps


def test_it_does_not_return_before_the_quiet_seconds():
    clock = Clock()
    fleet = Fleet({"a": 0})
    settled(fleet, quiet=5.0, timeout=90.0, clock=clock, sleep=clock.sleep)
    assert clock.now - 1000.0 == 5.0


def test_it_fails_at_its_timeout_naming_the_cluster_still_changing():
    clock = Clock()
    fleet = Fleet({"calm": 0, "busy": 10**6})
    with pytest.raises(pytest.fail.Exception) as failed:
        settled(fleet, quiet=5.0, timeout=30.0, clock=clock, sleep=clock.sleep)
    assert "did not settle: busy still changed after 30.0 s" in str(failed.value)
    assert clock.now - 1000.0 == 30.0


def test_a_cluster_that_settles_just_before_the_timeout_still_returns():
    clock = Clock()
    # changes at polls 0..24 (seconds 0..24), quiet from 24 to 29, before the timeout of 30
    fleet = Fleet({"a": 25})
    got = settled(fleet, quiet=5.0, timeout=30.0, clock=clock, sleep=clock.sleep)
    assert got == {"a": {("TrainJob", "job", "25")}}
    assert clock.now - 1000.0 == 29.0


def test_it_waits_for_pods_being_deleted_even_when_quiet():
    # a failed job's workers end 30 s after JobSet deleted them, long after the last change: their end still moves the
    # TrainJob, so the snapshot is taken only once none is being deleted
    clock = Clock()
    fleet = Fleet({"a": 0, "b": 0}, deleting=20)
    settled(fleet, quiet=5, timeout=90, clock=clock, sleep=clock.sleep)
    assert fleet.deleting == 0 and clock.now - 1000.0 >= 20


def test_it_fails_at_its_timeout_when_pods_are_still_being_deleted():
    clock = Clock()
    with pytest.raises(pytest.fail.Exception, match="pods still being deleted in a after 30 s"):
        settled(Fleet({"a": 0}, deleting=1000), quiet=5, timeout=30, clock=clock, sleep=clock.sleep)
