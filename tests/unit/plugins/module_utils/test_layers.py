# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""plugins/module_utils/ is layered (docs/layout.md "Layers of plugins/module_utils/"): a module imports from its own
folder and from the layers below it, never from a layer above or from another folder of its own layer. Every import
counts, the ones inside a function too (a function-level import is how a cycle hides). Parsed with ast, nothing is
imported, so a cycle cannot make this test itself fail to load."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import re

import pytest

PACKAGE = "ansible_collections.gpufleet.burnin.plugins"
MODULE_UTILS = PACKAGE + ".module_utils"
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MODULE_UTILS_DIR = os.path.join(ROOT, "plugins", "module_utils")
LAYOUT = os.path.join(ROOT, "docs", "layout.md")
# The layers, lowest first; "" is the base, the modules directly in plugins/module_utils/ (errors.py, files.py,
# validate.py). Folders of one layer (cluster, reporting) are siblings: neither imports the other.
LAYERS = (("",), ("rendering",), ("judging",), ("cluster", "reporting"), ("validation",), ("burnin",))
RANK = dict((folder, rank) for rank, folders in enumerate(LAYERS) for folder in folders)


def folder_of(relpath):
    """The folder (layer key) of a module's path under plugins/module_utils/: its first directory, "" for the base."""
    parts = relpath.replace(os.sep, "/").split("/")
    return parts[0] if len(parts) > 1 else ""


def _target_folder(dotted, names, base):
    """The folder a collection import reaches: the first part after module_utils, "" when it is a module of the BASE
    (``from ...module_utils import validate``); a name that is neither (a new folder) is returned as it is."""
    rest = dotted[len(MODULE_UTILS) :].lstrip(".")
    firsts = [rest.split(".")[0]] if rest else names
    return ["" if first in base else first for first in firsts]


def imports_of(source, relpath, base):
    """(line, dotted module, target folder or None for outside module_utils) of every import of the collection in
    SOURCE, the module at RELPATH under plugins/module_utils/, at any depth (functions, branches, try blocks)."""
    package = relpath.replace(os.sep, "/")[:-3].split("/")[:-1]
    found = []
    for node in ast.walk(ast.parse(source, relpath)):
        if isinstance(node, ast.Import):
            pairs = [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # Relative: from the module's own package, up level - 1 packages.
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                dotted = ".".join([MODULE_UTILS] + base + ([node.module] if node.module else []))
            else:
                dotted = node.module or ""
            pairs = [(dotted, [alias.name for alias in node.names])]
        else:
            continue
        for dotted, names in pairs:
            if dotted == MODULE_UTILS or dotted.startswith(MODULE_UTILS + "."):
                for folder in _target_folder(dotted, names, base):
                    found.append((node.lineno, dotted, folder))
            elif dotted == PACKAGE or dotted.startswith(PACKAGE + "."):
                found.append((node.lineno, dotted, None))
    return found


def violations(source, relpath, base):
    """The imports of the module at RELPATH that break the layers, each a line naming the file and the import."""
    own = folder_of(relpath)
    problems = []
    for line, dotted, folder in imports_of(source, relpath, base):
        where = "plugins/module_utils/%s:%d: imports %s" % (relpath.replace(os.sep, "/"), line, dotted)
        if folder is None:
            problems.append("%s: outside plugins/module_utils/ (the core imports nothing of the plugins)" % where)
        elif folder == own:
            continue
        elif folder not in RANK:
            problems.append("%s: folder %r has no layer in test_layers.py LAYERS (and docs/layout.md)" % (where, folder))
        elif RANK[folder] > RANK[own]:
            problems.append("%s: upward, %s (layer %d) is above %s (layer %d)" % (where, folder or "base", RANK[folder], own or "base", RANK[own]))
        elif RANK[folder] == RANK[own]:
            problems.append("%s: sideways, %s and %s are siblings of layer %d" % (where, folder, own, RANK[own]))
    return problems


def _folders():
    return set(name for name in os.listdir(MODULE_UTILS_DIR) if os.path.isdir(os.path.join(MODULE_UTILS_DIR, name)) and name != "__pycache__")


def _base_modules():
    return set(name[:-3] for name in os.listdir(MODULE_UTILS_DIR) if name.endswith(".py"))


def _modules():
    for directory, dirs, files in os.walk(MODULE_UTILS_DIR):
        dirs[:] = sorted(name for name in dirs if name != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(directory, name), MODULE_UTILS_DIR)


def test_every_folder_of_module_utils_has_a_layer():
    assert sorted(_folders() - set(RANK)) == []


def test_every_import_of_module_utils_goes_down_the_layers():
    base = _base_modules()
    modules = list(_modules())
    assert len(modules) > 40, modules
    problems = []
    for relpath in modules:
        with open(os.path.join(MODULE_UTILS_DIR, relpath)) as handle:
            problems.extend(violations(handle.read(), relpath, base))
    assert problems == [], "\n" + "\n".join(problems)


def test_the_documented_layers_are_these():
    """docs/layout.md lists the layers top down, one ``N. `folder/` `` line each (base: ``N. base``)."""
    if not os.path.exists(LAYOUT):
        pytest.skip("docs/ is not in this copy of the collection")
    with open(LAYOUT) as handle:
        text = handle.read()
    rows = re.findall(r"^(\d+)\. ((?:`[a-z_]+/`(?:, )?)+|base)", text, re.M)
    documented = {}
    for number, folders in rows:
        for folder in re.findall(r"`([a-z_]+)/`", folders) or [""]:
            documented[folder] = int(number)
    assert documented == RANK


BASE = set(("__init__", "errors", "files", "validate"))


@pytest.mark.parametrize(
    "relpath, source, expected",
    [
        # A function-level import that reaches up is found like a module-level one.
        (
            "judging/verdict.py",
            "def f():\n    from %s.cluster.pod_logs import cut_note\n" % MODULE_UTILS,
            ["upward, cluster (layer 3) is above judging (layer 2)"],
        ),
        ("cluster/cleanup.py", "from %s.reporting import report\n" % MODULE_UTILS, ["sideways, reporting and cluster are siblings of layer 3"]),
        ("rendering/plan.py", "import %s.burnin.stages as s\n" % MODULE_UTILS, ["upward, burnin (layer 5) is above rendering (layer 1)"]),
        ("files.py", "try:\n    from .judging import outcomes\nexcept ImportError:\n    pass\n", ["upward, judging (layer 2) is above base (layer 0)"]),
        ("errors.py", "from %s.plugin_utils import cluster\n" % PACKAGE, ["outside plugins/module_utils/"]),
        ("judging/dcgm.py", "from %s.newfolder import x\n" % MODULE_UTILS, ["has no layer"]),
        ("burnin/stage_run.py", "from %s import validate\nfrom %s.judging import stages\nfrom .role_plan import x\n" % (MODULE_UTILS, MODULE_UTILS), []),
        ("rendering/plan.py", "from %s import errors, validate\nfrom . import dra\nimport json\n" % MODULE_UTILS, []),
    ],
)
def test_the_check_names_the_file_and_the_import_that_breaks_the_layers(relpath, source, expected):
    found = violations(source, relpath, BASE)
    assert len(found) == len(expected), found
    for problem, text in zip(found, expected):
        assert problem.startswith("plugins/module_utils/%s:" % relpath) and text in problem, problem
