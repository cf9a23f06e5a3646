# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The example execution environment builds its context, and the context installs both collections and their deps.

No container engine: `ansible-builder create` writes the context, then the test does what the context's Dockerfile
would do in its galaxy and builder stages, with the context's own files: lay out /build as the Dockerfile's COPY lines
do, `ansible-galaxy collection install -r requirements.yml` there, and run the context's introspect.py on the result.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import re
import shutil
import sys

import pytest
import yaml

from conftest import REPO, isolated_env, run

EXAMPLE = REPO / "examples" / "execution-environment"
# Third-party imports of plugins/ -> the distribution that provides them.
DISTRIBUTIONS = {"yaml": "pyyaml", "jinja2": "jinja2", "jsonpatch": "jsonpatch", "kubernetes": "kubernetes", "prometheus_client": "prometheus-client"}


def requirement_names(text):
    names = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0].lower())
    return names


def third_party_imports():
    found = set()
    for path in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("ansible", "ansible_collections", "__future__"):
                    found.add(top)
    return found


def test_collection_ee_metadata_covers_the_plugins_imports():
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text())
    assert meta["version"] == 1
    deps = meta["dependencies"]
    python = REPO / deps["python"]
    assert (REPO / deps["system"]).is_file() and python.is_file()
    listed = set(requirement_names(python.read_text()))
    imports = third_party_imports()
    assert imports, "no third-party import found in plugins/: the scan is broken"
    unknown = imports - set(DISTRIBUTIONS)
    assert not unknown, "plugins/ import %s: add the distribution to meta/ee-requirements.txt and to DISTRIBUTIONS" % unknown
    assert set(DISTRIBUTIONS[i] for i in imports) <= listed
    # The role runs kubernetes.core modules: their client must be there even though no plugin imports it.
    assert "kubernetes" in listed


@pytest.fixture(scope="module")
def context(collection_tarball, kcore_tarball, tmp_path_factory):
    if not shutil.which("ansible-builder"):
        pytest.fail("ansible-builder is not on PATH: run scripts/setup.sh and source scripts/env.sh")
    work = tmp_path_factory.mktemp("ee")
    ee = work / "ee"
    shutil.copytree(str(EXAMPLE), str(ee))
    (ee / "collections").mkdir(exist_ok=True)
    for tarball in (collection_tarball, kcore_tarball):
        shutil.copy2(str(tarball), str(ee / "collections" / tarball.name))
    proc = run(["ansible-builder", "create", "-f", "execution-environment.yml", "-c", str(work / "context")], cwd=str(ee))
    assert proc.returncode == 0, proc.stdout
    return work, ee, work / "context"


def test_example_requirements_name_the_tarballs_the_docs_build(context, collection_tarball, kcore_tarball):
    _work, ee, _ctx = context
    reqs = yaml.safe_load((ee / "requirements.yml").read_text())["collections"]
    assert sorted((r["name"], r["type"]) for r in reqs) == sorted([(collection_tarball.name, "file"), (kcore_tarball.name, "file")])


def test_builder_create_writes_a_context_with_both_collections(context, collection_tarball, kcore_tarball):
    _work, ee, ctx = context
    dockerfile = (ctx / "Dockerfile").read_text()
    assert 'ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"' in dockerfile
    assert 'ARG PYCMD="/usr/bin/python3.12"' in dockerfile
    copy_at = dockerfile.index("COPY _build/collections/ /build/")
    install_at = dockerfile.index("ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml")
    assert copy_at < install_at
    # The example's own requirements.txt (the locked versions) goes to the introspection beside the collections'.
    assert "introspect --user-pip=requirements.txt --write-bindep=/tmp/src/bindep.txt --write-pip=/tmp/src/requirements.txt" in dockerfile
    assert (ctx / "_build" / "requirements.txt").read_text() == (ee / "requirements.txt").read_text()
    assert sorted(p.name for p in (ctx / "_build" / "collections").iterdir()) == sorted([collection_tarball.name, kcore_tarball.name])
    assert (ctx / "_build" / "requirements.yml").read_text() == (ee / "requirements.yml").read_text()


@pytest.fixture(scope="module")
def galaxy_stage(context):
    """/build and /usr/share/ansible/collections of the Dockerfile's galaxy stage, done here."""
    work, _ee, ctx = context
    build, collections = work / "build", work / "usr-share-ansible-collections"
    shutil.copytree(str(ctx / "_build" / "collections"), str(build))  # COPY _build/collections/ /build/
    for item in (ctx / "_build").iterdir():  # COPY _build /build
        target = build / item.name
        if item.is_dir():
            shutil.copytree(str(item), str(target), dirs_exist_ok=True)
        else:
            shutil.copy2(str(item), str(target))
    proc = run(
        ["ansible-galaxy", "collection", "install", "-r", "requirements.yml", "--collections-path", str(collections)],
        cwd=str(build),
        env=isolated_env(collections),
    )
    assert proc.returncode == 0, proc.stdout
    return collections


def test_galaxy_stage_installs_gpufleet_burnin_and_kubernetes_core(galaxy_stage):
    import json

    root = galaxy_stage / "ansible_collections"
    ours = json.loads((root / "gpufleet" / "burnin" / "MANIFEST.json").read_text())["collection_info"]
    theirs = json.loads((root / "kubernetes" / "core" / "MANIFEST.json").read_text())["collection_info"]
    assert (ours["namespace"], ours["name"]) == ("gpufleet", "burnin")
    assert (theirs["namespace"], theirs["name"], theirs["version"]) == ("kubernetes", "core", "6.6.0")
    assert (root / "gpufleet" / "burnin" / "meta" / "execution-environment.yml").is_file()


def test_builder_stage_introspection_finds_both_collections_python_deps(context, galaxy_stage):
    work, _ee, ctx = context
    pip, bindep = work / "requirements.txt", work / "bindep.txt"
    proc = run(
        [
            sys.executable,
            str(ctx / "_build" / "scripts" / "introspect.py"),
            "introspect",
            "--user-pip",
            str(ctx / "_build" / "requirements.txt"),
            "--write-pip",
            str(pip),
            "--write-bindep",
            str(bindep),
            str(galaxy_stage),
        ]
    )
    assert proc.returncode == 0, proc.stdout
    lines = pip.read_text().splitlines()

    def from_collection(collection):
        return set(requirement_names("\n".join(line for line in lines if line.endswith("# from collection %s" % collection))))

    ours = set(requirement_names((REPO / "meta" / "ee-requirements.txt").read_text()))
    # PyYAML is dropped by the introspection: ansible-core itself requires it.
    assert from_collection("gpufleet.burnin") == ours - {"pyyaml"}
    assert {"kubernetes", "jsonpatch", "jinja2"} <= from_collection("gpufleet.burnin")
    assert {"kubernetes", "requests-oauthlib", "jsonpatch"} <= from_collection("kubernetes.core")
    # The locked versions come through as the user's pins (tests/locks/core2.21.txt, via the example's requirements.txt).
    user = [line for line in lines if line.endswith("# from collection user")]
    assert any(line.startswith("kubernetes==") for line in user), lines
    # kubernetes.core's bindep comes through; ours adds nothing.
    system = bindep.read_text()
    assert "# from collection kubernetes.core" in system and "# from collection gpufleet.burnin" not in system
