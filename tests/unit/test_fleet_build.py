# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""tests/fleet/build.sh's choices, run with a stand-in ``go`` on PATH that records its calls and builds nothing: what
`make demo` builds (--fleet-only: the fleet's components, not the metrics tests' Pushgateway and promtool, whose
build alone takes 4 to 7 minutes and 3.3 GB) against a full build. No network, no Go."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, "tests", "fleet", "build.sh")
FAKE_GO = """#!/bin/sh
echo "$*" >> "$GO_CALLS"
case "$1 $2" in
    "env GOVERSION") echo go1.26.0 ;;
    "mod download") printf '{\\n "Dir": "%s",\\n "GoMod": "%s/go.mod",\\n}\\n' "$FAKE_MODULE" "$FAKE_MODULE" ;;
    "build -trimpath") mkdir -p bin && touch bin/built ;;
esac
exit 0
"""


def _components():
    values = {}
    with open(os.path.join(REPO, "tests", "fleet", "components.env")) as handle:
        for line in handle:
            if "=" in line and not line.startswith("#"):
                key, value = line.strip().split("=", 1)
                values[key] = value.strip('"')
    return values


@pytest.fixture()
def stand_in(tmp_path):
    """A cache whose fleet components and manifests are built already, and a go that records its calls."""
    if not os.path.exists(BUILD):
        pytest.skip("tests/fleet/build.sh is not in this tree")
    versions = _components()
    cache = tmp_path / "cache"
    root = cache / "components"
    fleet = ["kubernetes-%s" % version for version in versions["KUBERNETES_VERSIONS"].split()]
    fleet += ["etcd-%s" % versions["ETCD_VERSION"], "kwok-%s" % versions["KWOK_VERSION"]]
    fleet += ["jobset-%s" % versions["JOBSET_VERSION"], "trainer-%s" % versions["TRAINER_VERSION"]]
    for name in fleet:
        (root / name / "bin").mkdir(parents=True)
        (root / name / ".built").write_text("")
    etcd = root / ("etcd-%s" % versions["ETCD_VERSION"]) / "bin" / "etcd"
    etcd.write_text("")
    os.chmod(str(etcd), 0o755)
    (root / "manifests").mkdir()
    stamp = "trainer=%s jobset=%s kwok=%s" % (versions["TRAINER_VERSION"], versions["JOBSET_VERSION"], versions["KWOK_VERSION"])
    (root / "manifests" / ".stamp").write_text(stamp + "\n")
    module = tmp_path / "module"
    module.mkdir()
    (module / "go.mod").write_text("module k8s.io/kubernetes\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("go", "openssl"):
        (bindir / tool).write_text(FAKE_GO)
        os.chmod(str(bindir / tool), 0o755)
    env = dict(
        os.environ,
        PATH="%s:%s" % (bindir, os.environ["PATH"]),
        GPUFLEET_CACHE=str(cache),
        GO_CALLS=str(tmp_path / "calls"),
        FAKE_MODULE=str(module),
        TMPDIR=str(tmp_path),
    )
    return {"env": env, "root": root, "calls": tmp_path / "calls", "versions": versions}


def _run(stand_in, *args):
    proc = subprocess.run(
        ["bash", BUILD] + list(args), env=stand_in["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    calls = stand_in["calls"].read_text() if stand_in["calls"].exists() else ""
    return proc.stderr, calls


def test_the_demo_builds_only_the_fleet(stand_in):
    # Before: make demo ran the full build, promtool included.
    log, calls = _run(stand_in, "--fleet-only")
    assert "build -trimpath" not in calls and "pushgateway" not in calls and "prometheus" not in calls
    assert not list(stand_in["root"].glob("pushgateway-*")) and not list(stand_in["root"].glob("promtool-*"))
    assert "components and manifests in" in log


def test_the_full_build_still_builds_the_metrics_tools(stand_in):
    log, calls = _run(stand_in)
    versions = stand_in["versions"]
    assert "github.com/prometheus/pushgateway@v%s" % versions["PUSHGATEWAY_VERSION"] in calls
    assert "github.com/prometheus/prometheus/cmd/promtool" in calls
    assert (stand_in["root"] / ("pushgateway-%s" % versions["PUSHGATEWAY_VERSION"]) / ".built").exists()
    assert (stand_in["root"] / ("promtool-%s" % versions["PROMETHEUS_MODULE_VERSION"]) / ".built").exists()


def test_make_demo_asks_for_the_fleet_only():
    with open(os.path.join(REPO, "scripts", "demo.sh")) as handle:
        text = handle.read()
    assert 'tests/fleet/build.sh" --fleet-only ||' in text
