"""Helper of scripts/mutate.sh, run with the cosmic-ray venv's Python (it reads cosmic-ray's session files).

    mutation_report.py config CONFIG MODULE TIMEOUT CWD -- TEST COMMAND...
        write the cosmic-ray configuration of one module (TOML, quoting done by cosmic-ray's own serializer)
    mutation_report.py pending SESSION
        the number of mutants not run yet
    mutation_report.py progress SESSION
        one line: done/total, killed, survived
    mutation_report.py skip-format SESSION MODULE
        mark as skipped the mutants of a string-formatting `%` ("..." % args), all but `%` -> `+`: ten operators
        times every message of a module, each killed by any test that formats that message once; the `+` one stays
        to say whether a test does
    mutation_report.py changed REPO BASE [MODULE ...]
        the modules of plugins/module_utils/ a change touched since the commit BASE (committed, uncommitted and
        untracked), one line each: MODULE SPANS, SPANS the line ranges (a-b,c-d) of the functions that hold a
        changed line, plus changed lines outside any function; with MODULEs, only those
    mutation_report.py skip-outside SESSION SPANS
        mark as skipped the mutants that start outside SPANS (CHANGED=1: only the touched functions are mutated)
    mutation_report.py recheck SESSION CONFIG
        run the mutants that were not killed again (after new tests), the others keep their results
    mutation_report.py report REPORT_FILE [--fail-under PERCENT] NAME=SESSION[=SECONDS] ...
        write every surviving (and incompetent) mutant with its diff to REPORT_FILE, print the kill rate per file,
        per folder and in total; with --fail-under, exit 1 when a folder or the total is below PERCENT

Kill rate = killed / (killed + survived). A mutant whose tests time out counts as killed (cosmic-ray's rule: the
change made the tests hang); an incompetent one (the test command could not run) counts in neither and is listed.
"""

from __future__ import annotations

import math
import os
import shlex
import sys
from collections import OrderedDict

from cosmic_ray.config import ConfigDict, serialize_config
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkResult


def write_config(path, module, timeout, cwd, command):
    cfg = ConfigDict()
    cfg["module-path"] = module
    cfg["timeout"] = float(timeout)
    cfg["excluded-modules"] = []
    # cosmic-ray splits the command with shlex and runs it without a shell, in its own working directory: cd there
    # (env -C, GNU coreutils) so that the relative test paths of tests/mutation/targets.txt resolve in the copy.
    cfg["test-command"] = shlex.join(["env", "-C", cwd] + command)
    cfg["distributor"] = ConfigDict(name="local")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(serialize_config(cfg))


def counts(session):
    """dict of the counts of one session file, and its survivors: [(kind, work item, result)]."""
    c = dict(total=0, skipped=0, done=0, killed=0, survived=0, incompetent=0)
    survivors = []
    with use_db(session, WorkDB.Mode.open) as db:
        c["total"] = db.num_work_items
        for item, result in db.completed_work_items:
            if result.worker_outcome in (WorkerOutcome.NO_TEST, WorkerOutcome.SKIPPED):
                # no mutation at that occurrence, or filtered out (skip-format): nothing was tested
                c["skipped"] += 1
                continue
            c["done"] += 1
            # not result.is_killed: cosmic-ray counts an incompetent run (tests could not start) as killed
            if result.test_outcome == TestOutcome.KILLED:
                c["killed"] += 1
            elif result.test_outcome == TestOutcome.SURVIVED:
                c["survived"] += 1
                survivors.append(("survived", item, result))
            else:
                c["incompetent"] += 1
                survivors.append(("incompetent", item, result))
    return c, survivors


def rate(c):
    tested = c["killed"] + c["survived"]
    return 100.0 * c["killed"] / tested if tested else float("nan")


def margin(c):
    """Half width of the 95 % interval of the kill rate when only a random sample of the mutants ran (cosmic-ray
    runs them in random order; an interrupted or MUTATE_BUDGET-bound run is such a sample), 0 when all ran."""
    n = c["killed"] + c["survived"]
    population = c["total"] - c["skipped"] - c["incompetent"]
    if not n or n >= population:
        return 0.0
    p = c["killed"] / n
    return 100.0 * 1.96 * math.sqrt(p * (1 - p) / n) * math.sqrt((population - n) / max(population - 1, 1))


def progress(session):
    c = counts(session)[0]
    extra = f", {c['incompetent']} incompetent" if c["incompetent"] else ""
    print(f"{c['done'] + c['skipped']}/{c['total']} done ({c['skipped']} skipped), {c['killed']} killed, {c['survived']} survived{extra}")


def fmt_rate(value):
    return "-" if math.isnan(value) else f"{value:.1f} %"


def fmt_time(seconds):
    if seconds is None:
        return ""
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s"


COLUMNS = ("total", "skipped", "done", "killed", "survived", "incompetent")


def row_text(label, c, seconds):
    pending = c["total"] - c["skipped"] - c["done"]
    m = margin(c) if pending else 0.0
    rate_text = fmt_rate(rate(c)) + (f" +-{m:.1f}" if pending else "")
    return (
        f"{label:<34} {c['total']:>7} {c['skipped']:>7} {c['done']:>5} {pending:>7} {c['killed']:>6} {c['survived']:>8} "
        f"{c['incompetent']:>7} {rate_text:>15} {fmt_time(seconds):>8}"
    )


def report(report_file, entries, fail_under=None):
    rows = []
    lines = []
    for name, session, seconds in entries:
        c, survivors = counts(session)
        rows.append((name, c, seconds))
        for kind, item, result in survivors:
            for mutation in item.mutations:
                line = mutation.start_pos[0]
                lines.append(f"== {kind}: {name}:{line} {mutation.operator_name} (occurrence {mutation.occurrence}, job {item.job_id})")
            lines.append((result.diff or "").rstrip())
            if kind == "incompetent":
                lines.append((result.output or "").rstrip()[-2000:])
            lines.append("")
    folders = OrderedDict()
    for name, c, seconds in rows:
        folder = os.path.dirname(name) or "."
        acc = folders.setdefault(folder, [dict.fromkeys(COLUMNS, 0), 0.0, 0])
        for k in COLUMNS:
            acc[0][k] += c[k]
        acc[1] += seconds or 0.0
        acc[2] += 1

    header = (
        f"{'file':<34} {'mutants':>7} {'skipped':>7} {'run':>5} {'pending':>7} {'killed':>6} {'survived':>8} " f"{'incomp.':>7} {'kill rate':>15} {'time':>8}"
    )
    out = [header, "-" * len(header)]
    for name, c, seconds in rows:
        out.append(row_text(name, c, seconds))
    out.append("-" * len(header))
    grand, grand_seconds = dict.fromkeys(COLUMNS, 0), 0.0
    failed = []
    for folder, (c, seconds, nfiles) in folders.items():
        out.append(row_text(f"{folder}/ ({nfiles} file{'s' if nfiles != 1 else ''})", c, seconds))
        for k in COLUMNS:
            grand[k] += c[k]
        grand_seconds += seconds
        if fail_under is not None and not rate(c) >= fail_under:
            failed.append(f"{folder}/ {fmt_rate(rate(c))}")
    out.append(row_text("total", grand, grand_seconds))
    if fail_under is not None and not rate(grand) >= fail_under:
        failed.append(f"total {fmt_rate(rate(grand))}")

    with open(report_file, "w", encoding="utf-8") as fh:
        fh.write("Kill rates (cosmic-ray, scripts/mutate.sh). kill rate = killed / (killed + survived); +-: 95 % interval\n")
        fh.write("while mutants are pending (the rate is then that of a random sample).\n\n")
        fh.write("\n".join(out) + "\n\n")
        fh.write(f"Surviving and incompetent mutants ({sum(row[1]['survived'] + row[1]['incompetent'] for row in rows)}):\n\n")
        fh.write("\n".join(lines) + "\n")
    print("\n".join(out))
    if failed:
        print(f"below --fail-under {fail_under:g} %: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def format_operator_lines(module):
    """(line, col) ranges of the `%` of every "..." % args in MODULE."""
    import ast

    with open(module, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, (ast.Constant, ast.JoinedStr)):
            if isinstance(node.left, ast.JoinedStr) or isinstance(node.left.value, str):
                spans.append(((node.left.end_lineno, node.left.end_col_offset), (node.right.lineno, node.right.col_offset)))
    return spans


def skip_format(session, module):
    spans = format_operator_lines(module)
    skipped = []
    with use_db(session, WorkDB.Mode.open) as db:
        for item in db.pending_work_items:
            for mutation in item.mutations:
                name = mutation.operator_name
                if not name.startswith("core/ReplaceBinaryOperator_Mod_") or name == "core/ReplaceBinaryOperator_Mod_Add":
                    continue
                if any(lo <= tuple(mutation.start_pos) <= hi for lo, hi in spans):
                    skipped.append(item.job_id)
        if skipped:
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    print(f"{len(skipped)} string-formatting mutants skipped")


def skip_outside(session, spans_text):
    spans = [tuple(int(x) for x in part.split("-")) for part in spans_text.split(",") if part]
    skipped = []
    with use_db(session, WorkDB.Mode.open) as db:
        for item in db.pending_work_items:
            if not any(any(lo <= mutation.start_pos[0] <= hi for lo, hi in spans) for mutation in item.mutations):
                skipped.append(item.job_id)
        if skipped:
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
    print(f"{len(skipped)} mutants outside the changed functions skipped")


def recheck(session, config_file):
    """Run again, with CONFIG_FILE's test command, every mutant of SESSION that was not killed (survived or
    incompetent), recording the new result; the mutants not run yet stay pending. Adding tests cannot make a killed
    mutant survive, so the session is then what a full run of its mutants so far would give."""
    from cosmic_ray.config import load_config
    from cosmic_ray.mutating import mutate_and_test

    cfg = load_config(config_file)
    with use_db(session, WorkDB.Mode.open) as db:
        again = [item for item, result in db.completed_work_items if result.test_outcome in (TestOutcome.SURVIVED, TestOutcome.INCOMPETENT)]
        killed = 0
        for item in again:
            result = mutate_and_test(item.mutations, cfg.test_command, cfg.timeout)
            db.set_result(item.job_id, result)
            killed += result.test_outcome == TestOutcome.KILLED
    print(f"{len(again)} mutants that were not killed ran again: {killed} killed now, {len(again) - killed} still not")


def main(argv):
    if not argv:
        sys.exit(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "config" and len(args) >= 6 and args[4] == "--":
        write_config(args[0], args[1], args[2], args[3], args[5:])
        return 0
    if cmd == "pending" and len(args) == 1:
        c = counts(args[0])[0]
        print(c["total"] - c["skipped"] - c["done"])
        return 0
    if cmd == "progress" and len(args) == 1:
        progress(args[0])
        return 0
    if cmd == "skip-format" and len(args) == 2:
        skip_format(args[0], args[1])
        return 0
    if cmd == "changed" and len(args) >= 2:
        from mutation_changed import changed

        changed(args[0], args[1], set(args[2:]))
        return 0
    if cmd == "skip-outside" and len(args) == 2:
        skip_outside(args[0], args[1])
        return 0
    if cmd == "recheck" and len(args) == 2:
        recheck(args[0], args[1])
        return 0
    if cmd == "report" and args:
        report_file, rest = args[0], args[1:]
        fail_under = None
        if rest[:1] == ["--fail-under"]:
            fail_under = float(rest[1])
            rest = rest[2:]
        entries = []
        for arg in rest:
            parts = arg.split("=")
            seconds = float(parts[2]) if len(parts) > 2 and parts[2] else None
            entries.append((parts[0], parts[1], seconds))
        return report(report_file, entries, fail_under)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
