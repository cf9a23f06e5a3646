# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""`ansible-galaxy collection build` ships what users need and nothing else; the tarball installs and runs on its own.

The tarball is built from a copy of the checkout with developer leftovers planted in it (conftest.PLANTED), installed
with kubernetes.core's tarball into an empty collections path, and the render playbook runs from there, with
PYTHONPATH and every other collections path out of the way, so the checkout cannot stand in for the install.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import json
import tarfile

import yaml

from conftest import PLANTED, REPO, galaxy_version, isolated_env, run, run_json, tracked_files

# Never in the tarball: developer tooling, tests that need the checkout or the test fleet.
EXCLUDED_PREFIXES = (".ci/", ".git/", "scripts/", "tests/e2e/", "tests/fleet/", "tests/bench/", "tests/packaging/", "tests/output/", "tests/mutation/")
EXCLUDED_FILES = ("Makefile", ".gitignore", ".ansible-lint", "pyproject.toml", "tests/requirements.txt", "tests/locks/core2.21.txt")
# Never, at any depth: caches, credentials.
SECRET_OR_CACHE = (
    "*/__pycache__/*",
    "*.pyc",
    "*/.pytest_cache/*",
    "*.kubeconfig",
    "*/kubeconfig",
    "kubeconfig",
    "*.key",
    "*.pem",
    "*.crt",
    "*tokens.csv",
    "*.vault_pass*",
    ".env",
    "*/.env",
)
# Shipped whole: everything tracked under these.
SHIPPED_DIRS = (
    "plugins/",
    "roles/",
    "playbooks/",
    "_lib/",
    "templates/",
    "meta/",
    "docs/",
    "examples/",
    "extras/",
    "changelogs/",
    "tests/unit/",
    "tests/sanity/",
    # published DCGM/NCCL output the unit tests read (tests/fixtures/real/PROVENANCE.md)
    "tests/fixtures/",
)
# tests/unit/conftest.py registers tests/skip_guard.py with its allow-list: they ship with the unit tests.
SHIPPED_FILES = ("README.md", "LICENSE", "CHANGELOG.rst", "requirements.txt", "MANIFEST.json", "FILES.json", "tests/skip_guard.py", "tests/expected-skips.yml")


def members(tarball):
    with tarfile.open(str(tarball)) as tf:
        return set(m.name for m in tf.getmembers() if m.isfile())


def test_tarball_leaves_out_tooling_output_caches_and_secrets(collection_tarball):
    names = members(collection_tarball)
    assert not [n for n in names if n.startswith(EXCLUDED_PREFIXES)]
    assert not [n for n in names if n in EXCLUDED_FILES]
    assert not [n for n in names if any(fnmatch.fnmatch(n, p) for p in SECRET_OR_CACHE)]
    assert not sorted(set(PLANTED) & names)
    # Nothing outside what the collection is made of.
    assert not [n for n in names if not (n.startswith(SHIPPED_DIRS) or n in SHIPPED_FILES)]


def test_tarball_ships_every_file_users_need(collection_tarball):
    names = members(collection_tarball)
    wanted = set(n for n in tracked_files() if n.startswith(SHIPPED_DIRS) or n in SHIPPED_FILES)
    assert sorted(wanted - names) == []
    for name in (
        "meta/execution-environment.yml",
        "meta/ee-requirements.txt",
        "meta/ee-bindep.txt",
        "extras/rbac/burnin-rbac.yaml",
        "changelogs/changelog.yaml",
        "examples/awx/survey-spec.json",
        "roles/burnin/meta/argument_specs.yml",
        "playbooks/render.yml",
        "MANIFEST.json",
        "FILES.json",
        "CHANGELOG.rst",
    ):
        assert name in names
    with tarfile.open(str(collection_tarball)) as tf:
        manifest = json.load(tf.extractfile("MANIFEST.json"))
    info = manifest["collection_info"]
    assert (info["namespace"], info["name"], info["version"]) == ("gpufleet", "burnin", galaxy_version())
    assert "kubernetes.core" in info["dependencies"]


def test_installed_tarball_renders_the_fleet_without_the_checkout(collection_tarball, kcore_tarball, tmp_path):
    path = tmp_path / "collections"
    env = isolated_env(path)
    install = run(["ansible-galaxy", "collection", "install", "-p", str(path), str(kcore_tarball), str(collection_tarball)], env=env, cwd=str(tmp_path))
    assert install.returncode == 0, install.stdout
    installed = path / "ansible_collections" / "gpufleet" / "burnin"
    assert (installed / "MANIFEST.json").is_file() and (path / "ansible_collections" / "kubernetes" / "core").is_dir()

    found = run_json(["ansible-galaxy", "collection", "list", "--format", "json"], env=env, cwd=str(tmp_path))
    assert set(found) == {str(path / "ansible_collections")}, found
    assert set(found[str(path / "ansible_collections")]) == {"gpufleet.burnin", "kubernetes.core"}

    # The installed collection's own example inventory and playbook, by FQCN, from a directory outside the checkout.
    out = tmp_path / "rendered"
    inventory = installed / "examples" / "inventory" / "hosts.yml"
    play = run(
        [
            "ansible-playbook",
            "-i",
            str(inventory),
            "gpufleet.burnin.render",
            "-e",
            "burnin_render_dir=%s" % out,
            "-e",
            "burnin_run_id=installed",
            "--limit",
            "aws-use1-h100-a,azure-eus-gb200-a",
        ],
        env=env,
        cwd=str(tmp_path),
    )
    assert play.returncode == 0, play.stdout[-4000:]
    assert str(REPO) not in play.stdout
    assert sorted(p.name for p in out.iterdir()) == ["aws-use1-h100-a", "azure-eus-gb200-a"]
    docs = list(yaml.safe_load_all((out / "azure-eus-gb200-a" / "manifests.yaml").read_text()))
    assert [d["kind"] for d in docs] == ["Namespace", "ComputeDomain", "TrainingRuntime", "TrainJob"]
    assert docs[-1]["metadata"]["name"] == "nccl-burnin-installed"
    plan = yaml.safe_load((out / "aws-use1-h100-a" / "plan.yml").read_text())
    assert plan["platform"] == "aws" and plan["gpus_per_node"] == 8

    doc = run(["ansible-doc", "-t", "role", "gpufleet.burnin.burnin"], env=dict(env, PAGER="cat"), cwd=str(tmp_path))
    assert doc.returncode == 0 and str(installed) in doc.stdout, doc.stdout[-2000:]
