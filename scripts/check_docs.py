"""Render the ansible-doc page of every plugin and role of the collection.

Usage (scripts/test.sh step "doc", with scripts/env.sh sourced so that
ANSIBLE_COLLECTIONS_PATH holds both gpufleet.burnin and kubernetes.core):

    python scripts/check_docs.py [REPO]

What is checked, each by its FQCN gpufleet.burnin.<name>:

* every module in plugins/modules/;
* every action plugin in plugins/action/: it must have a documented module
  stub of the same name in plugins/modules/ (that page is what users get);
* every filter and test in plugins/filter/ and plugins/test/, by the names the
  plugin files register (one file may define several), plus the names that
  ``ansible-doc --list`` reports (sidecar YAML docs);
* every other single-file plugin type (lookup, callback, inventory, ...);
* every role in roles/ (its meta/argument_specs.yml).

A page fails when ansible-doc exits non-zero, prints an error, or prints
nothing. Exit status 1 if any page failed.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import json
import os
import subprocess
import sys

NS, NAME = "gpufleet", "burnin"
PREFIX = "%s.%s" % (NS, NAME)
FILE_TYPES = ("lookup", "callback", "connection", "inventory", "vars", "become", "cache", "strategy", "shell", "httpapi", "cliconf", "netconf")


def py_names(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(f[:-3] for f in os.listdir(directory) if f.endswith(".py") and f != "__init__.py")


def jinja_names(repo, kind):
    """Names registered by plugins/<kind>/*.py (FilterModule().filters() / TestModule().tests())."""
    names, problems = set(), []
    for mod in py_names(os.path.join(repo, "plugins", kind)):
        modname = "ansible_collections.%s.%s.plugins.%s.%s" % (NS, NAME, kind, mod)
        try:
            module = importlib.import_module(modname)
            if kind == "filter":
                found = module.FilterModule().filters()
            else:
                found = module.TestModule().tests()
        except Exception as exc:  # report, do not stop the other pages
            problems.append("plugins/%s/%s.py: cannot load to list its %ss: %r" % (kind, mod, kind, exc))
            continue
        if not found:
            problems.append("plugins/%s/%s.py registers no %s" % (kind, mod, kind))
        names.update(found)
    return names, problems


def listed(kind):
    proc = subprocess.run(["ansible-doc", "-t", kind, "--list", "--json", PREFIX], capture_output=True, text=True, check=False)
    try:
        data = json.loads(proc.stdout or "{}")
    except ValueError:
        return set()
    return {k.split(".", 2)[2] for k in data if k.startswith(PREFIX + ".")}


def render(kind, name):
    fqcn = "%s.%s" % (PREFIX, name)
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PAGER="cat")
    proc = subprocess.run(["ansible-doc", "-t", kind, fqcn], capture_output=True, text=True, env=env, check=False)
    err = proc.stderr.strip()
    bad = proc.returncode != 0 or "ERROR" in err or not proc.stdout.strip()
    if not bad and "[WARNING]" in err and ("not found" in err or "documentation" in err.lower()):
        bad = True
    return kind, fqcn, bad, proc.returncode, err, len(proc.stdout.splitlines())


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    pages = []

    modules = py_names(os.path.join(repo, "plugins", "modules"))
    pages += [("module", m) for m in modules]

    for action in py_names(os.path.join(repo, "plugins", "action")):
        if action not in modules:
            problems.append("plugins/action/%s.py has no module stub plugins/modules/%s.py (ansible-doc cannot document it)" % (action, action))

    for kind in ("filter", "test"):
        if not os.path.isdir(os.path.join(repo, "plugins", kind)):
            continue
        names, why = jinja_names(repo, kind)
        problems += why
        names |= listed(kind)
        pages += [(kind, n) for n in sorted(names)]

    for kind in FILE_TYPES:
        pages += [(kind, n) for n in py_names(os.path.join(repo, "plugins", kind))]

    roles_dir = os.path.join(repo, "roles")
    if os.path.isdir(roles_dir):
        pages += [("role", r) for r in sorted(os.listdir(roles_dir)) if os.path.isdir(os.path.join(roles_dir, r))]

    if not pages and not problems:
        print("check_docs: the collection has no plugins or roles yet; nothing to document")
        return 0

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda p: render(*p), pages))

    for kind, fqcn, bad, rc, err, lines in results:
        status = "FAIL" if bad else "ok"
        print("%-4s %-7s %s (%d lines)" % (status, kind, fqcn, lines))
        if err:
            print("\n".join("       | " + line for line in err.splitlines()))
        if bad:
            lines_ = err.splitlines()
            first = next((ln for ln in lines_ if "ERROR" in ln), lines_[0] if lines_ else "no output (no documentation?)")
            problems.append("ansible-doc -t %s %s: exit %d: %s" % (kind, fqcn, rc, first[:400]))

    print("check_docs: %d pages rendered" % len(results))
    if problems:
        print("check_docs: %d problem(s):" % len(problems))
        for p in problems:
            print("  - " + p)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
