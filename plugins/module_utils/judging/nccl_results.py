# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Parse nccl-tests output: the text table on stdout and the ``-J`` JSON file.

Text layout (NVIDIA/nccl-tests ``src/util.cu``, ``writeResultHeader`` / ``writeResultFooter``): an optional preamble (``# nccl-tests version``,
``# Collective test starting:``, ``# nThread ...``, ``#  Rank ...`` device lines), a three-line header whose second
line names the columns (``size count type redop root`` then ``time algbw busbw #wrong`` out-of-place and the same
in-place; older versions have no ``root`` and an ``error`` column, ``-C 1`` says ``cputime``, ``-S 1`` appends a
``timestamp``, ``-I 1`` adds per-iteration columns), one row per message size, and a footer (``# Out of bounds
values``, ``# Avg bus bandwidth``, ``# Collective test concluded:``).

Tolerated: NCCL ``INFO``/``WARN`` lines and any other line interleaved anywhere, launcher prefixes (``[1,0]<stdout>:``
from ``mpirun --tag-output``, ``0: `` from Slurm, ``[pod/...]`` from ``kubectl logs --prefix``, Kubernetes
timestamps), several tests in one log. A log cut at the start (``tail``) is read with the default column layout.

Truncated or malformed output raises :class:`NcclParseError` naming the line, unless ``allow_partial`` is set: the
result then has ``complete: false`` and the reasons in ``problems``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError, ParseError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import log_lines, nccl_names
from ansible_collections.gpufleet.burnin.plugins.module_utils.text import clean_tree

SOURCE = "nccl-tests output"
MAX_MESSAGES = 50  # errors and warnings kept per run; the rest are counted

# Column names of the header line -> keys of a side's dict.
_SIDE_KEYS = {
    "time": "time_us",
    "cputime": "time_us",
    "algbw": "algbw",
    "busbw": "busbw",
    "#wrong": "wrong",
    "error": "error",
    "i_min": "i_min_us",
    "i_max": "i_max_us",
    "i_p99": "i_p99_us",
    "i_cv%": "i_cv_pct",
}
_LEADING = ("size", "count", "type", "redop", "root")
DEFAULT_COLUMNS = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"]

MAX_PREFIXES = log_lines.MAX_PREFIXES
_RE_NCCL_VERSION = re.compile(r"\bNCCL version (?P<version>\d+\.\d+\.\d+)(?:[-+](?P<build>\S+))?")
# "host: Test NCCL failure common.cu:1279 '...'", "host: Test CUDA failure ...", " .. host pid 58: Test failure common.cu:1140".
_RE_TEST_FAILURE = re.compile(r"^(?:(?P<host>[^\s:]+): |\s*\.\.\s+(?P<host2>\S+) pid \d+: )?Test (?:(?P<kind>[A-Z]+) )?failure\b")
_RE_MPI_NOTICED = re.compile(r"process rank (?P<rank>\d+) with PID \d+ on node (?P<host>\S+?) exited on signal (?P<signal>\d+)")
_RE_NT_VERSION = re.compile(
    r"^#\s*nccl-tests version (?P<version>\S+)(?:\s+\([0-9a-f]+\))?(?:\s+nccl-headers=(?P<headers>\d+))?(?:\s+nccl-library=(?P<library>\d+))?"
)
_RE_START = re.compile(r"^#\s*Collective test starting:\s*(?P<program>\S+)")
_RE_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(?P<program>\S+)")
_RE_CONFIG = re.compile(
    r"^#\s*nThread\s+(?P<nthreads>\d+)\s+nGpus\s+(?P<ngpus>\d+)\s+minBytes\s+(?P<min_bytes>\d+)\s+maxBytes\s+(?P<max_bytes>\d+)"
    r"\s+step:\s*(?P<step>\d+)\((?P<step_kind>\w+)\)\s+warmup iters:\s*(?P<warmup_iters>\d+)\s+iters:\s*(?P<iters>\d+)"
    r"(?:\s+agg iters:\s*(?P<agg_iters>\d+))?(?:\s+validation:\s*(?P<validation>\d+))?(?:\s+graph:\s*(?P<graph>\d+))?"
)
_RE_DEVICE = re.compile(
    r"^#\s+Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?(?:Pid\s+(?P<pid>\d+)\s+)?on\s+(?P<host>\S+)\s+device\s+(?P<device>\d+)"
    r"\s+\[(?P<pci>[^\]]*)\]\s*(?P<name>.*)\Z"
)
_RE_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)\s*(?P<check>\w+)?")
_RE_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)\s*(?P<check>\w+)?")
_RE_ERROR = re.compile(r"^#\s*error:\s*(?P<msg>.*)\Z")
# Headerless rows (a log cut at the start) of the layouts before nccl-tests 2.10: no root (12 columns, all_reduce)
# and neither redop nor root (11, NCCL 2.6 era: tests/fixtures/real/nccl/nccl2.6.4-old-layout-no-redop-tail.log); both with an error column.
_LEGACY_LAYOUTS = {
    12: ["size", "count", "type", "redop", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"],
    11: ["size", "count", "type", "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"],
}
_RE_LEGACY_ROW = re.compile(r"^\s*\d+\s+\d+\s+[a-z][a-z0-9_]*(?:\s+[a-z]+)?(?:\s+(?:[-+.\deE]+|N/A)){8}\s*\Z")
_RE_DEFAULT_ROW = re.compile(r"^\s*\d+\s+\d+\s+\S+\s+\S+\s+-?\d+(?:\s+\S+){8}\s*\Z")
_RE_ROW_START = re.compile(r"^\s*\d+\s+\d+(?:\s|$)")
_RE_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\Z")
_RE_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?\Z")


class NcclParseError(ParseError):
    """nccl-tests output that is truncated or malformed; ``line`` is the 1-based line number (None: whole input)."""

    def __init__(self, message, line=None, source=SOURCE):
        self.line = line
        self.reason = message
        self.facts = None  # what was read before the error (versions, program, hosts), for a log without a table
        where = "%s line %d" % (source, line) if line else source
        super(NcclParseError, self).__init__("%s: %s" % (where, message))


def program_collective(program):
    """``./build/all_reduce_perf`` -> ``all_reduce``; None for None."""
    if not program:
        return None
    name = os.path.basename(str(program))
    for suffix in ("_mpi", "_perf"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name or None


def nccl_version_from_code(code):
    """NCCL_VERSION_CODE -> "X.Y.Z" (X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before)."""
    if code is None:
        return None
    code = int(code)
    if code >= 20900:
        return "%d.%d.%d" % (code // 10000, (code % 10000) // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, (code % 1000) // 100, code % 100)


def _strip_prefixes(line):
    """The line without launcher and collector prefixes (judging/log_lines.py, the one grammar of them)."""
    return log_lines.strip(line)


def _finite(value):
    return value if value is not None and not (math.isnan(value) or math.isinf(value)) else None


class _Layout(object):
    """Column layout of a result table, from its header line (or the default one)."""

    def __init__(self, names, line):
        self.names = list(names)
        self.line = line
        if not names or names[0] != "size":
            raise NcclParseError("table header does not start with 'size': %s" % " ".join(names), line)
        index = 0
        self.leading = []
        while index < len(names) and names[index] in _LEADING:
            self.leading.append(names[index])
            index += 1
        rest = names[index:]
        self.timestamp = bool(rest) and rest[-1] == "timestamp"
        if self.timestamp:
            rest = rest[:-1]
        starts = [i for i, name in enumerate(rest) if name in ("time", "cputime")]
        if not starts or starts[0] != 0 or len(starts) > 2:
            raise NcclParseError("table header has no recognisable time/algbw/busbw groups: %s" % " ".join(names), line)
        bounds = starts + [len(rest)]
        self.sides = [[_SIDE_KEYS.get(name, re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")) for name in rest[a:b]] for a, b in zip(bounds, bounds[1:])]
        for side in self.sides:
            if "busbw" not in side:
                raise NcclParseError("table header has a group without busbw: %s" % " ".join(names), line)
        self.width = len(self.leading) + sum(len(side) for side in self.sides) + (2 if self.timestamp else 0)

    def parse_row(self, tokens, line):
        """Return the row dict, or raise NcclParseError (``short`` attribute set when columns are missing)."""
        if len(tokens) == self.width - 1 and "redop" in self.leading:
            at = self.leading.index("redop")
            # The layouts before 2.10 print a collective without reduction (alltoall) with a blank redop, so the row
            # lacks that one token (tests/fixtures/real/nccl/nt-old-layout-alltoall-8x8-v100-ib-footer.log).
            if at < len(tokens) and _RE_NUMBER.match(tokens[at]) and not _RE_NUMBER.match(tokens[at - 1]):
                tokens = tokens[:at] + [""] + tokens[at:]
        null_oop = len(self.sides) == 2 and len(tokens) == self.width - len(self.sides[0])
        if len(tokens) != self.width and not null_oop:
            error = NcclParseError("result row has %d columns, the header at line %d has %d" % (len(tokens), self.line, self.width), line)
            error.short = len(tokens) < self.width
            raise error
        row = {}
        position = 0
        for name in self.leading:
            token = tokens[position]
            position += 1
            if name in ("size", "count", "root"):
                try:
                    row[name] = int(token)
                except ValueError:
                    raise NcclParseError("column '%s' is %r, not an integer" % (name, token), line)
            else:
                row[name] = token
        row.setdefault("root", None)
        sides = []
        for number, keys in enumerate(self.sides):
            if null_oop and number == 0:
                sides.append(None)
                continue
            side = {}
            for key in keys:
                token = tokens[position]
                position += 1
                side[key] = _side_value(key, token, "out-of-place" if number == 0 and len(self.sides) == 2 else "in-place", line)
            side.setdefault("wrong", None)
            sides.append(side)
        if self.timestamp:
            stamp = " ".join(tokens[position : position + 2])
            if not _RE_TIMESTAMP.match(stamp):
                raise NcclParseError("timestamp column is %r, not YYYY-mm-dd HH:MM:SS" % stamp, line)
            row["timestamp"] = stamp
        if len(sides) == 2:
            row["oop"], row["ip"] = sides
        else:
            row["oop"], row["ip"] = sides[0], None
        return row


def _side_value(key, token, side_name, line):
    if key == "error" and token == "N/A":
        return None  # not checked (nccl-tests -c 0, or in-place of a collective without one)
    if key == "wrong":
        if token == "N/A":
            return None
        try:
            value = float(token)
        except ValueError:
            raise NcclParseError("column '#wrong' (%s) is %r, not a count" % (side_name, token), line)
        if math.isnan(value) or value < 0:
            raise NcclParseError("column '#wrong' (%s) is %r, not a count" % (side_name, token), line)
        return int(value)
    try:
        return _finite(float(token))
    except ValueError:
        raise NcclParseError("column '%s' (%s) is %r, not a number" % (key, side_name, token), line)


class _Run(object):
    def __init__(self):
        self.program = None
        self.concluded = None
        self.nccl_tests_version = None
        self.nccl_code = None
        self.config = {}
        self.devices = []
        self.layout = None
        self.assumed_layout = False
        self.rows = []
        self.out_of_bounds = None
        self.out_of_bounds_check = None
        self.avg_busbw = None
        self.avg_check = None
        self.avg_seen = False
        self.errors = []
        self.warnings = []
        self.problems = []
        self.pending_short = None  # (line, error) of a short row that may be the cut-off end
        self.first_line = None
        self.last_line = None

    @property
    def has_table(self):
        return self.layout is not None or bool(self.rows)

    @property
    def has_footer(self):
        return self.avg_seen or self.out_of_bounds is not None


def _note(messages, text):
    if len(messages) < MAX_MESSAGES:
        messages.append(text)


class _TextParser(object):
    def __init__(self, text, allow_partial, source):
        self.text = text
        self.allow_partial = allow_partial
        self.source = source
        self.runs = []
        self.run = _Run()
        self.nccl_version = None
        self.cuda_version = None
        self.log_errors = []
        self.log_warnings = []
        self.failed_hosts = {}
        self.warn_hosts = {}
        self.line_count = 0

    def fail(self, message, line):
        """Raise, or record the problem when partial results are allowed."""
        if not self.allow_partial:
            raise NcclParseError(message, line, self.source)
        _note(self.run.problems, "line %d: %s" % (line, message) if line else message)

    def new_run(self):
        self.close_run()
        self.run = _Run()

    def close_run(self):
        run = self.run
        if run.has_table or run.program or run.devices or run.nccl_tests_version or run.config:
            self.runs.append(run)

    def parse(self):
        lines = self.text.splitlines()
        self.line_count = len(lines)
        for number, raw in enumerate(lines, 1):
            if " NCCL INFO " in raw and "NCCL version" not in raw:
                continue  # INFO lines decide nothing here (judging/transport.py reads them): most of a log, skipped early
            line = _strip_prefixes(raw.rstrip("\r\n"))
            if line.strip():
                self.line(number, line)
        self.close_run()
        return self.runs

    def line(self, number, line):  # pylint: disable=too-many-branches,too-many-return-statements,too-many-statements
        # Substring tests before each regular expression: most lines are rows or INFO lines (tests/bench/bench_readers.py).
        run = self.run
        stripped = line.strip()
        if "NCCL version" in line:
            version = _RE_NCCL_VERSION.search(line)
            if version and ("NCCL INFO" in line or stripped.startswith("NCCL version")):
                self.nccl_version = self.nccl_version or version.group("version")
                build = version.group("build") or ""
                if build.startswith("cuda") and not self.cuda_version:
                    self.cuda_version = build[4:]
                return
        first = stripped[:1]
        if first == "#":
            self.comment(number, stripped)
            return
        if first.isdigit() and _RE_ROW_START.match(line):
            self.row(number, line)
            return
        log = log_lines.nccl_line(stripped) if " NCCL " in stripped else None
        if log:
            if log["level"] in ("WARN", "ERROR", "ABORT"):
                host = log["host"]
                self.warn_hosts[host] = self.warn_hosts.get(host, 0) + 1
                _note(self.log_warnings, stripped)
                _note(run.warnings, stripped)
                what = nccl_names.fault(log["msg"], True)
                if what:
                    # a WARN NCCL aborts after (_lib/nccl/networks.yaml faults): the host that logged it failed
                    self.failed_hosts.setdefault(host, "%s: %s" % (what, stripped[:300]))
                    _note(run.errors, stripped)
                    _note(self.log_errors, stripped)
            return
        failure = _RE_TEST_FAILURE.match(line) if "failure" in line else None
        if failure:
            host = failure.group("host") or failure.group("host2")
            if host:
                self.failed_hosts.setdefault(host, stripped)
            _note(run.errors, stripped)
            _note(self.log_errors, stripped)
            return
        noticed = _RE_MPI_NOTICED.search(line) if "exited on signal" in line else None
        if noticed:
            self.failed_hosts.setdefault(noticed.group("host"), stripped)
            _note(run.errors, stripped)
            _note(self.log_errors, stripped)
            return
        if nccl_names.fault(stripped, False):
            _note(run.errors, stripped[:300])
            _note(self.log_errors, stripped[:300])
            return
        # anything else (mpirun chatter, sshd, Python warnings) is not ours

    def comment(self, number, line):  # pylint: disable=too-many-branches,too-many-return-statements
        run = self.run
        body = line[1:].lstrip()
        if not body:
            return  # a lone '#'
        preamble = (None, None, None)
        if body.startswith(("nccl-tests", "Collective test starting", "nThread")):
            preamble = (_RE_NT_VERSION.match(line), _RE_START.match(line), _RE_CONFIG.match(line))
        if any(preamble):
            if run.has_table:
                self.finish_table(number)
                self.new_run()
                run = self.run
            match = preamble[0]
            if match:
                run.nccl_tests_version = match.group("version")
                if match.group("library"):
                    run.nccl_code = int(match.group("library"))
            if preamble[1]:
                run.program = preamble[1].group("program")
            if preamble[2]:
                run.config = _config(preamble[2])
            run.first_line = run.first_line or number
            return
        match = _RE_DEVICE.match(line) if body.startswith("Rank") else None
        if match:
            run.devices.append(
                {
                    "rank": int(match.group("rank")),
                    "group": int(match.group("group") or 0),
                    "pid": int(match.group("pid")) if match.group("pid") else None,
                    "host": match.group("host"),
                    "device": int(match.group("device")),
                    "pci": match.group("pci"),
                    "name": match.group("name").strip(),
                }
            )
            return
        tokens = line.lstrip("#").split()
        if tokens and tokens[0] == "size" and "count" in tokens:
            if run.rows or run.has_footer:
                self.finish_table(number)
                self.new_run()
                run = self.run
            run.layout = _Layout(tokens, number)
            run.first_line = run.first_line or number
            return
        match = _RE_OOB.match(line)
        if match:
            self.resolve_short()
            run.out_of_bounds = int(match.group("count"))
            run.out_of_bounds_check = match.group("check")
            run.last_line = number
            return
        match = _RE_AVG.match(line)
        if match:
            self.resolve_short()
            try:
                run.avg_busbw = _finite(float(match.group("value")))
            except ValueError:
                self.fail("'# Avg bus bandwidth' value %r is not a number" % match.group("value"), number)
            run.avg_check = match.group("check")
            run.avg_seen = True
            run.last_line = number
            return
        match = _RE_CONCLUDED.match(line)
        if match:
            run.concluded = match.group("program")
            run.program = run.program or run.concluded
            run.last_line = number
            return
        match = _RE_ERROR.match(line)
        if match:
            _note(run.errors, "nccl-tests: %s" % match.group("msg").strip())
            _note(self.log_errors, "nccl-tests: %s" % match.group("msg").strip())

    def row(self, number, line):
        run = self.run
        tokens = line.split()
        if run.layout is None:
            if _RE_DEFAULT_ROW.match(line):
                columns = DEFAULT_COLUMNS
            elif len(tokens) in _LEGACY_LAYOUTS and _RE_LEGACY_ROW.match(line):
                columns = _LEGACY_LAYOUTS[len(tokens)]
            else:
                return  # before any header only a row of a known layout counts: anything else is chatter
            if run.has_footer:
                self.new_run()
                run = self.run
            run.layout = _Layout(columns, number)
            run.assumed_layout = True
            _note(run.warnings, "line %d: no table header before the first result row (log cut at the start?); " "read with the default column layout" % number)
        elif run.has_footer:
            self.fail("result row after the footer of the table at line %d" % run.layout.line, number)
            return
        self.resolve_short()
        try:
            row = run.layout.parse_row(tokens, number)
        except NcclParseError as exc:
            if getattr(exc, "short", False):
                run.pending_short = (number, exc)
                return
            self.fail(exc.reason, number)
            return
        run.rows.append(row)
        run.last_line = number

    def resolve_short(self):
        """A short row followed by more table lines is malformed, not the cut-off end."""
        run = self.run
        if run.pending_short:
            number, exc = run.pending_short
            run.pending_short = None
            self.fail(exc.reason, number)

    def finish_table(self, number):
        run = self.run
        if run.pending_short:
            short_line, exc = run.pending_short
            run.pending_short = None
            self.fail("truncated: %s" % exc.reason, short_line)
        if run.out_of_bounds is not None and not run.avg_seen and run.rows:
            self.fail("truncated: the footer stops after '# Out of bounds values' (no '# Avg bus bandwidth' line)", run.last_line or number)
        if not run.has_footer:
            if run.rows:
                self.fail(
                    "truncated: the table ends after %d result rows (last size %d) without the '# Avg bus bandwidth' footer"
                    % (len(run.rows), run.rows[-1]["size"]),
                    run.last_line or number,
                )
            elif run.layout is not None:
                self.fail("truncated: the table header at line %d has no result rows" % run.layout.line, run.layout.line)
        elif not run.rows and run.layout is not None:
            self.fail("the table at line %d has a footer but no result rows" % run.layout.line, run.layout.line)


def _config(match):
    config = {}
    for key in ("nthreads", "ngpus", "min_bytes", "max_bytes", "warmup_iters", "iters", "agg_iters", "validation", "graph"):
        if match.group(key) is not None:
            config[key] = int(match.group(key))
    config["step_factor" if match.group("step_kind") == "factor" else "step_bytes"] = int(match.group("step"))
    return config


def _summarize(run, fmt, nccl_version, cuda_version, line_count, log_errors):
    rows = sorted(run.rows, key=lambda row: row["size"])
    largest = rows[-1] if rows else None
    peak = peak_ip = None
    if largest:
        peak_ip = (largest["ip"] or {}).get("busbw")
        peak = (largest["oop"] or {}).get("busbw")
        if peak is None:
            peak = peak_ip
    best = None
    for row in rows:
        for side in (row["oop"], row["ip"]):
            if side and side.get("busbw") is not None and (best is None or side["busbw"] > best[0]):
                best = (side["busbw"], row["size"])
    wrong_sizes = sorted(set(row["size"] for row in rows for side in (row["oop"], row["ip"]) if side and (side.get("wrong") or 0) > 0))
    wrong_total = sum((side.get("wrong") or 0) for row in rows for side in (row["oop"], row["ip"]) if side)
    program = run.program or run.concluded
    hosts = sorted(set(device["host"] for device in run.devices))
    code = run.nccl_code
    return {
        "format": fmt,
        "program": program,
        "collective": program_collective(program),
        "nccl_tests_version": run.nccl_tests_version,
        "nccl_version": nccl_version or nccl_version_from_code(code),
        "nccl_version_code": code,
        "cuda_version": cuda_version,
        "config": run.config,
        "devices": run.devices,
        "hosts": hosts,
        "columns": run.layout.names if run.layout else [],
        "assumed_layout": run.assumed_layout,
        "rows": rows,
        "out_of_bounds": run.out_of_bounds,
        "avg_busbw": run.avg_busbw,
        "avg_busbw_check": run.avg_check or None,
        "wrong_total": wrong_total,
        "wrong_sizes": wrong_sizes,
        "largest_size": largest["size"] if largest else None,
        "peak_busbw": peak,
        "peak_busbw_in_place": peak_ip,
        "max_busbw": best[0] if best else None,
        "max_busbw_size": best[1] if best else None,
        "complete": bool(rows) and run.avg_seen and not run.problems,
        "errors": list(run.errors) or list(log_errors),
        "warnings": list(run.warnings),
        "problems": list(run.problems),
        "lines": line_count,
    }


def parse_nccl_runs(text, allow_partial=False, source=SOURCE):
    """Every test of a text log, in order, as result dicts (see :func:`parse_nccl_output`)."""
    if not isinstance(text, str):
        raise ConfigError("output", "must be the text of nccl-tests' output, got %s" % type(text).__name__)
    parser = _TextParser(text, allow_partial, source)
    parser.parse()
    last = parser.runs[-1] if parser.runs else None
    if last is not None:
        parser.run = last
        end = parser.line_count
        parser.finish_table(end)
    tables = [run for run in parser.runs if run.has_table]
    if not tables:
        hint = ""
        if parser.log_errors:
            hint = "; the test failed before it: %s" % parser.log_errors[0]
        elif parser.runs:
            hint = "; the output stops after the preamble (truncated?)"
        message = "no result table found in %d lines%s" % (parser.line_count, hint)
        run = parser.runs[-1] if parser.runs else _Run()
        if allow_partial:
            # Every log is a result: what the text holds (versions, devices, hosts, failing hosts), complete=false.
            # The verdict is error only when it holds neither a result nor evidence (nccl_judge.rank_evidence).
            _note(run.problems, message)
            tables = [run]
        else:
            error = NcclParseError(message, None, source)
            error.facts = _summarize(run, "text", parser.nccl_version, parser.cuda_version, parser.line_count, parser.log_errors)
            error.facts.update(failed_hosts=dict(parser.failed_hosts), warning_hosts=dict(parser.warn_hosts))
            raise error
    results = [_summarize(run, "text", parser.nccl_version, parser.cuda_version, parser.line_count, parser.log_errors) for run in tables]
    for result in results:
        result["failed_hosts"] = dict(parser.failed_hosts)
        result["warning_hosts"] = dict(parser.warn_hosts)
    return results


def parse_nccl_output(text, collective=None, allow_partial=False, source=SOURCE):
    """Parse nccl-tests output (text log, ``-J`` JSON text, or the JSON already loaded as a dict).

    Returns a dict: format (text|json), program, collective, nccl_tests_version, nccl_version, nccl_version_code,
    cuda_version, config, devices, hosts, columns, rows (size, count, type, redop, root, oop and ip each
    {time_us, algbw, busbw, wrong} or None), out_of_bounds, avg_busbw, avg_busbw_check, wrong_total, wrong_sizes,
    largest_size, peak_busbw (out-of-place busbw at the largest size, in-place when out-of-place is absent),
    peak_busbw_in_place, max_busbw, max_busbw_size, complete, errors, warnings, problems, lines,
    failed_hosts and warning_hosts (text only: host -> first failure line / NCCL WARN count).

    A log with several tests needs ``collective`` (``all_reduce`` or ``all_reduce_perf``) to pick one.
    """
    json_source = SOURCE + " (JSON)" if source == SOURCE else source
    if isinstance(text, dict):
        return parse_nccl_json(text, allow_partial=allow_partial, source=json_source)
    if isinstance(text, (list, tuple)) and all(isinstance(item, str) for item in text):
        text = "\n".join(text)
    if not isinstance(text, str):
        raise ConfigError("output", "must be nccl-tests' output as text, lines or a JSON dict, got %s" % type(text).__name__)
    if text.lstrip().startswith("{") and not log_lines.is_collector_json(text.lstrip().split("\n", 1)[0]):
        return parse_nccl_json(text, allow_partial=allow_partial, source=json_source)
    runs = parse_nccl_runs(text, allow_partial=allow_partial, source=source)
    if collective:
        wanted = program_collective(collective)
        chosen = [run for run in runs if run["collective"] == wanted]
        if not chosen:
            unnamed = [run for run in runs if run["collective"] is None]
            if len(runs) == 1 and unnamed:
                return runs[0]  # the header did not name it (nccl-tests before 2.14): trust the caller
            raise ConfigError("collective", "no %s test in the output; found: %s" % (wanted, ", ".join(str(run["collective"]) for run in runs)))
        return chosen[-1]
    if len(runs) > 1:
        raise ConfigError("collective", "the output holds %d tests (%s): name the one to read" % (len(runs), ", ".join(str(run["collective"]) for run in runs)))
    return runs[0]


def _json_side(side, name, where):
    if side is None:
        return None
    if not isinstance(side, dict):
        raise NcclParseError("%s.%s must be an object, got %r" % (where, name, side), None, SOURCE + " (JSON)")
    result = {}
    for key, target in (("time", "time_us"), ("cpu_time", "time_us"), ("alg_bw", "algbw"), ("bus_bw", "busbw")):
        if key in side:
            result[target] = _json_number(side[key], "%s.%s.%s" % (where, name, key))
    wrong = side.get("nwrong")
    result["wrong"] = None if wrong is None else int(_json_number(wrong, "%s.%s.nwrong" % (where, name)) or 0)
    if "busbw" not in result:
        raise NcclParseError("%s.%s has no bus_bw" % (where, name), None, SOURCE + " (JSON)")
    return result


def _json_number(value, where):
    if isinstance(value, str) and value.strip().lower() in ("nan", "-nan", "inf", "-inf"):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise NcclParseError("%s must be a number, got %r" % (where, value), None, SOURCE + " (JSON)")
    return _finite(float(value))


def parse_nccl_json(data, allow_partial=False, source=SOURCE + " (JSON)"):
    """Parse the ``-J`` output file (text or loaded dict) into the same dict as :func:`parse_nccl_output`."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError as exc:
            line = getattr(exc, "lineno", None)
            raise NcclParseError("not valid JSON (truncated -J output?): %s" % getattr(exc, "msg", exc), line, source)
        except RecursionError:
            # the -J file nests a few levels; a document nested past the interpreter's limit is no nccl-tests output
            raise NcclParseError("the JSON nests too deep to be nccl-tests -J output", None, source)
    # A JSON escape makes characters the file's bytes never held (\udcff, \u0000): made safe here (module_utils/text.py).
    data = clean_tree(data)
    if not isinstance(data, dict):
        raise NcclParseError("the -J output must be a JSON object, got %s" % type(data).__name__, None, source)
    results = data.get("results")
    if not isinstance(results, list):
        raise NcclParseError("no 'results' list (truncated or not nccl-tests -J output)", None, source)
    run = _Run()
    args = data.get("args") or []
    run.program = os.path.basename(args[0]) if args and isinstance(args[0], str) else None
    code = data.get("nccl_version")
    run.nccl_code = code if isinstance(code, int) and not isinstance(code, bool) else None
    config = data.get("config") or {}
    if isinstance(config, dict):
        for key, target in (
            ("nthreads", "nthreads"),
            ("ngpus", "ngpus"),
            ("minimum_bytes", "min_bytes"),
            ("maximum_bytes", "max_bytes"),
            ("step_factor", "step_factor"),
            ("step_bytes", "step_bytes"),
            ("warmup_iters", "warmup_iters"),
            ("iterations", "iters"),
            ("aggregated_iterations", "agg_iters"),
            ("validation", "validation"),
            ("graph", "graph"),
        ):
            if isinstance(config.get(key), int):
                run.config[target] = config[key]
        for device in config.get("devices") or []:
            if isinstance(device, dict):
                run.devices.append(
                    {
                        "rank": device.get("rank"),
                        "group": device.get("group"),
                        "pid": device.get("pid"),
                        "host": device.get("hostname"),
                        "device": device.get("device"),
                        "pci": device.get("device_hex"),
                        "name": device.get("device_info"),
                    }
                )
    run.layout = _Layout(DEFAULT_COLUMNS, None)
    for index, item in enumerate(results):
        where = "results[%d]" % index
        if not isinstance(item, dict) or not isinstance(item.get("size"), int):
            raise NcclParseError("%s must be an object with an integer size, got %r" % (where, item), None, source)
        root = item.get("root")
        try:
            root = int(str(root).strip()) if root is not None else None
        except ValueError:
            raise NcclParseError("%s.root is %r, not an integer" % (where, root), None, source)
        run.rows.append(
            {
                "size": item["size"],
                "count": item.get("count"),
                "type": item.get("type"),
                "redop": item.get("redop"),
                "root": root,
                "oop": _json_side(item.get("out_of_place"), "out_of_place", where),
                "ip": _json_side(item.get("in_place"), "in_place", where),
            }
        )
    oob = data.get("out_of_bounds")
    if isinstance(oob, dict) and isinstance(oob.get("count"), int):
        run.out_of_bounds = oob["count"]
        run.out_of_bounds_check = "OK" if oob.get("okay") in (True, "true") else "FAILED"
    avg = data.get("average_bus_bandwidth")
    if isinstance(avg, dict) and "bandwidth" in avg:
        run.avg_busbw = _json_number(avg["bandwidth"], "average_bus_bandwidth.bandwidth")
        run.avg_seen = True
        okay = avg.get("okay")
        run.avg_check = None if okay in (None, "unchecked") else ("OK" if okay in (True, "true") else "FAILED")
    for error in data.get("errors") or []:
        _note(run.errors, "nccl-tests: %s" % error)
    if not run.rows:
        message = "no result rows in 'results' (the test stopped before its first size?)"
        if not allow_partial:
            raise NcclParseError(message, None, source)
        _note(run.problems, message)
    elif not run.avg_seen:
        message = "truncated: no 'average_bus_bandwidth' after %d results (last size %d)" % (len(run.rows), run.rows[-1]["size"])
        if not allow_partial:
            raise NcclParseError(message, None, source)
        _note(run.problems, message)
    result = _summarize(run, "json", None, None, 0, [])
    result["columns"] = []
    result["failed_hosts"] = {}
    result["warning_hosts"] = {}
    return result


def size_label(size):
    """8589934592 -> "8G", 1536 -> "1.5K": nccl-tests' binary suffixes."""
    if size is None:
        return "?"
    value = float(size)
    for unit in ("", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            text = ("%.1f" % value).rstrip("0").rstrip(".")
            return "%s%s" % (text, unit)
        value /= 1024.0
    return str(size)  # pragma: no cover


def parse_size(value, field="size"):
    """Bytes from an int or a string with nccl-tests' suffixes (K, M, G, T; binary; optional B or iB)."""
    if isinstance(value, bool):
        raise ConfigError(field, "must be a size in bytes such as 1073741824 or 1G, got %r" % (value,))
    if isinstance(value, int):
        if value < 0:
            raise ConfigError(field, "must be >= 0, got %r" % (value,))
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str):
        match = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*\Z", value, re.IGNORECASE)
        if match:
            scale = 1024 ** " KMGT".index(match.group(2).upper() or " ")
            return int(round(float(match.group(1)) * scale))
    raise ConfigError(field, "must be a size in bytes such as 1073741824 or 1G, got %r" % (value,))


def series(result):
    """Plot data of a parsed result: ``[[size, oop busbw, ip busbw], ...]`` sorted by size (None where absent)."""
    out = []
    for row in (result or {}).get("rows") or []:
        out.append([row["size"], (row.get("oop") or {}).get("busbw"), (row.get("ip") or {}).get("busbw")])
    return sorted(out, key=lambda item: item[0])
