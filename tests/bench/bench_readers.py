# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark (not a test): the readers of pod output on large and adversarial input, seconds per reader.

Inputs: 50 MB of mixed text (the published documents of tests/fixtures/real/nccl and tests/fixtures/real/dcgm,
repeated) and 5 MB single lines of worst-case shapes (a repeated launcher prefix, brackets, braces, digits).
Each reader runs in a child process with a time limit, so a super-linear one prints "> LIMIT s" instead of hanging.
Target (issue 24): each <= 5 s on the project's 2-core machines.

Run with scripts/env.sh sourced:  python tests/bench/bench_readers.py [MB_MIXED [MB_LINE [LIMIT_S]]]
"""

from __future__ import absolute_import, division, print_function

import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "..", "fixtures", "real")


def _corpus():
    parts = []
    for sub in ("nccl", "dcgm"):
        folder = os.path.join(REAL, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith((".log", ".txt", ".json")):
                with open(os.path.join(folder, name)) as handle:
                    parts.append(handle.read())
    return "\n".join(parts)


def inputs(mb_mixed, mb_line):
    corpus = _corpus()
    mixed = (corpus + "\n") * (int(mb_mixed * 1e6) // (len(corpus) + 1) + 1)
    size = int(mb_line * 1e6)
    return [
        ("%d MB mixed text" % mb_mixed, mixed[: int(mb_mixed * 1e6)]),
        ("%d MB line of '0: '" % mb_line, "0: " * (size // 3)),
        ("%d MB line of '[1,0]<stdout>:'" % mb_line, "[1,0]<stdout>:" * (size // 14)),
        ("%d MB line of '{'" % mb_line, "{" * size),
        ("%d MB line of '[pod/'" % mb_line, "[pod/" * (size // 5)),
        ("%d MB line of digits and spaces" % mb_line, "1 " * (size // 2)),
    ]


def _readers():
    from ansible_collections.gpufleet.burnin.plugins.module_utils.cluster import pod_logs
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import dcgm, nccl_results, transport
    from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError

    def nccl(text):
        try:
            nccl_results.parse_nccl_runs(text, allow_partial=True)
        except BurninError:
            pass

    def dcgm_reader(text):
        try:
            dcgm.parse_diag_output(text)
        except BurninError:
            pass

    def bound(text):
        # What trainjob_logs keeps of a pod's log (the default cap), fed in the 64 KiB chunks it streams.
        data = text.encode("utf-8")
        log = pod_logs.LogBound()
        for start in range(0, len(data), 1 << 16):
            log.feed(data[start : start + (1 << 16)])
        log.result()

    return {
        "nccl_results.parse_nccl_runs": nccl,
        "transport.parse_transport": transport.parse_transport,
        "dcgm.parse_diag_output": dcgm_reader,
        "pod_logs.LogBound (16 MiB cap)": bound,
    }


def _child(reader, text, queue):
    start = time.time()
    _readers()[reader](text)
    queue.put(time.time() - start)


def timed(reader, text, limit):
    queue = multiprocessing.Queue()
    process = multiprocessing.Process(target=_child, args=(reader, text, queue))
    process.start()
    process.join(limit)
    if process.is_alive():
        process.terminate()
        process.join()
        return None
    return queue.get() if not queue.empty() else float("nan")


def main(argv):
    mb_mixed = float(argv[1]) if len(argv) > 1 else 50
    mb_line = float(argv[2]) if len(argv) > 2 else 5
    limit = float(argv[3]) if len(argv) > 3 else 60
    print("%-36s %-30s %s" % ("input", "reader", "seconds"))
    for label, text in inputs(mb_mixed, mb_line):
        for reader in sorted(_readers()):
            seconds = timed(reader, text, limit)
            print("%-36s %-30s %s" % (label, reader, "> %d" % limit if seconds is None else "%.2f" % seconds))
            sys.stdout.flush()


if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    main(sys.argv)
