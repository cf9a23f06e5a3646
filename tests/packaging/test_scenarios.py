# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The scenario guides' steps work as written.

docs/scenarios/adding-a-platform.md: every code block starting with `# file: <path>` is written into a copy of the
collection (an ansible_collections/ tree with kubernetes.core beside it), the guide's render command runs on the
guide's inventory, and the rendered objects carry what the guide says they do.

docs/scenarios/awx.md: followed step by step, every AWX object, credential and file a step uses exists by then
(tests/packaging/awx_rules.py guide_findings; test_awx_rules.py plants a late credential and a missing playbook).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import sys
from pathlib import Path

import yaml

import awx_rules
from conftest import REPO, isolated_env, run, run_json, tracked_files

GUIDE = REPO / "docs" / "scenarios" / "adding-a-platform.md"
BLOCK = re.compile(r"```(?:yaml|sh)\n(.*?)```", re.S)


def guide_files():
    files = {}
    for block in BLOCK.findall(GUIDE.read_text()):
        first, _sep, rest = block.partition("\n")
        if first.startswith("# file: "):
            files[first[len("# file: ") :].strip()] = rest
    return files


def test_the_guide_names_its_files():
    assert sorted(guide_files()) == [
        "_lib/platforms/acme/ib-env.yaml",
        "_lib/platforms/acme/images.yaml",
        "_lib/platforms/acme/platform.yaml",
        "inventory/hosts.yml",
        "templates/overrides/platforms/acme.yaml",
    ]


def test_adding_a_platform_as_the_guide_says_renders_it(tmp_path):
    root = tmp_path / "collections"
    coll = root / "ansible_collections" / "gpufleet" / "burnin"
    for name in tracked_files():
        dest = coll / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(str(REPO / name), str(dest))
    kcore = Path(os.environ.get("GPUFLEET_COLLECTIONS_ROOT", "")) / "ansible_collections" / "kubernetes" / "core"
    assert kcore.is_dir(), "kubernetes.core not found at %s: run scripts/setup.sh and source scripts/env.sh" % kcore
    shutil.copytree(str(kcore), str(root / "ansible_collections" / "kubernetes" / "core"))
    work = tmp_path / "work"
    for name, text in guide_files().items():
        dest = (work if name.startswith("inventory/") else coll) / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)

    commands = [b for b in BLOCK.findall(GUIDE.read_text()) if b.startswith("ansible-playbook")]
    assert len(commands) == 1
    argv = commands[0].splitlines()[0].split()
    argv = [a.replace("/tmp/rendered", str(tmp_path / "rendered")) for a in argv] + ["-e", "burnin_run_id=acme"]
    proc = run(argv, cwd=str(work), env=isolated_env(root))
    assert proc.returncode == 0, proc.stdout[-4000:]

    out = tmp_path / "rendered" / "acme-east-h100-a"
    plan = yaml.safe_load((out / "plan.yml").read_text())
    assert plan["platform"] == "acme" and plan["topology_key"] == "topology.acme.example/fabric"
    assert "templates/overrides/platforms/acme.yaml" in str(plan["matched_overrides"])
    docs = dict((d["kind"], d) for d in yaml.safe_load_all((out / "manifests.yaml").read_text()))
    node = [j for j in docs["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "node"][0]
    container = [c for c in node["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node"][0]
    env = dict((e["name"], e.get("value")) for e in container["env"])
    assert env["NCCL_IB_HCA"] == "mlx5_ib" and env["NCCL_IB_GID_INDEX"] == "3" and env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
    assert container["resources"]["limits"]["acme.example/ib"] == 8
    text = yaml.safe_dump(docs["TrainJob"]) + yaml.safe_dump(plan.get("mpi_args"))
    assert "NCCL_IB_HCA=mlx5_ib" in text and "NCCL_IB_GID_INDEX=3" in text
    # Its own image (step 3), with the image's mpirun, and its topology labels in its catalogue (step 1).
    image = yaml.safe_load(guide_files()["_lib/platforms/acme/images.yaml"])["nccl-tests-acme"]
    assert container["image"] == docs["TrainJob"]["spec"]["trainer"]["image"] == image["image"]
    assert image["mpirun"] in docs["TrainJob"]["spec"]["trainer"]["command"] + docs["TrainJob"]["spec"]["trainer"].get("args", [])
    labels = run_json(
        [
            sys.executable,
            "-c",
            "import json; from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import isolation_parts as p; "
            "print(json.dumps(p.topology_labels()))",
        ],
        env=dict(isolated_env(root), PYTHONPATH=str(root)),
    )
    # The isolation's topology: every cluster's labels, then each platform's own (Acme's in its order), NVLink's last.
    assert labels[:2] == ["topology.kubernetes.io/region", "topology.kubernetes.io/zone"] and labels[-1] == "nvidia.com/gpu.clique"
    assert labels.index("topology.acme.example/fabric") + 1 == labels.index("topology.acme.example/rack")


def test_the_guides_and_the_readme_link_to_files_that_exist():
    """A new user follows links: every relative link of the README and of docs/ must reach a file or directory."""
    broken = []
    for page in [REPO / "README.md"] + sorted((REPO / "docs").rglob("*.md")):
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if re.match(r"^[a-z]+:", target):
                continue
            if not (page.parent / target).exists():
                broken.append("%s -> %s" % (page.relative_to(REPO), target))
    assert broken == []


def test_the_awx_guide_uses_only_what_exists_by_its_step():
    guide = (REPO / "docs" / "scenarios" / "awx.md").read_text()
    assert awx_rules.guide_findings(guide, REPO) == []
    # The guide loads every example object, so each file's own references are checked at its step too.
    for name in ("credential-type.json", "inventory-source.json", "job-template.json", "survey-spec.json"):
        assert "examples/awx/" + name in guide, name
    creates = [call for block in awx_rules.SH_BLOCK.findall(guide) for call in awx_rules._awx_calls(block) if call[1] == "create"]
    assert [c[0] for c in creates] == [
        "execution_environments",
        "credential_types",
        "credentials",
        "projects",
        "inventory",
        "inventory_sources",
        "job_templates",
        "job_templates",
    ], creates
