"""CHANGED=1 of scripts/mutate.sh (docs/mutation.md): the modules of plugins/module_utils/ a change touched since a
base commit, and in each the line ranges of the functions that hold a changed line. Plain Python and git, no
cosmic-ray (tests/unit/test_mutation_changed.py imports it)."""

from __future__ import annotations

import os

MU = "plugins/module_utils/"


def _git(repo, *args):
    import subprocess

    return subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True, text=True).stdout


def changed_lines(repo, base):
    """{module (path under plugins/module_utils/): set of changed line numbers of the work tree's file} since BASE.
    A deletion marks the lines on both sides of it; an untracked module counts whole."""
    import re

    out = {}
    current = None
    for line in _git(repo, "diff", "--unified=0", "--no-color", "--no-ext-diff", base, "--", MU).splitlines():
        if line.startswith("+++ "):
            path = line[4:]
            current = path[2 + len(MU) :] if path.startswith("b/" + MU) else None
            if current is not None:
                out.setdefault(current, set())
        elif line.startswith("@@") and current is not None:
            match = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            out[current].update(range(start, start + count) if count else (max(start, 1), start + 1))
    for path in _git(repo, "ls-files", "--others", "--exclude-standard", "--", MU).splitlines():
        out[path[len(MU) :]] = None  # the whole file
    return dict((mod, lines) for mod, lines in out.items() if mod.endswith(".py") and not mod.endswith("__init__.py"))


def touched_spans(source, lines):
    """[(first, last)] line ranges of SOURCE to mutate for the changed LINES (None: the whole file): each function
    (or method) holding a changed line, whole, and the changed lines outside any function."""
    import ast

    tree = ast.parse(source)
    if lines is None:
        return [(1, len(source.splitlines()) or 1)]
    functions = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            functions.append((first, node.end_lineno))
    spans = set()
    for number in lines:
        holding = [span for span in functions if span[0] <= number <= span[1]]
        if holding:
            # the outermost function: a nested helper's change is tested through its caller
            spans.add(min(holding, key=lambda span: span[0]))
        else:
            spans.add((number, number))
    merged = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def changed(repo, base, only=()):
    for mod, lines in sorted(changed_lines(repo, base).items()):
        if only and mod not in only:
            continue
        path = os.path.join(repo, MU, mod)
        if not os.path.isfile(path):
            continue  # deleted
        with open(path, encoding="utf-8") as fh:
            spans = touched_spans(fh.read(), lines)
        if spans:
            print("%s %s" % (mod, ",".join("%d-%d" % span for span in spans)))
