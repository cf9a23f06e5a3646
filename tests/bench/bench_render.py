# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Benchmark (not a test): rendering through the action plugins for N hosts versus an empty
``ansible.builtin.set_fact`` over the same hosts, in the same run. Prints the ratio per N.

Each host is a cluster of one platform (round robin over PLATFORMS) and renders its own overrides, as the role
does: the seed plus that platform's layer (platform_overrides' ``platform`` option). BENCH_ALL_PLATFORMS=1 renders
every platform's entries for every host instead (the option unset, four times the data per host).

Target: <= 1.5x at 500 hosts. Run with scripts/env.sh sourced:  python tests/bench/bench_render.py [10 100 500]
"""

from __future__ import absolute_import, division, print_function

import os
import resource
import subprocess
import sys
import tempfile
import time

RENDER = """
- name: Render per host
  hosts: all
  gather_facts: false
  tasks:
    - name: Runtime
      gpufleet.burnin.training_runtime:
        entry_name: nccl
        image: img
        framework: mpi
        nodes: 2
        gpus_per_node: 8
        env: "{{ false | gpufleet.burnin.base_nccl_env }}"
    - name: Overrides
      gpufleet.burnin.platform_overrides:
        entry_name: nccl
        nodes: 2
        gpus_per_node: 8
        mlnx_per_node: 8
        framework: mpi
        platform: "{{ bench_platform | default(omit) }}"
"""
PLATFORMS = ("aws", "gcp", "azure", "oci", "coreweave", "nebius", "onprem", "togetherai")
BASELINE = """
- name: Empty set_fact per host
  hosts: all
  gather_facts: false
  tasks:
    - name: Runtime stand-in
      ansible.builtin.set_fact:
        nothing: 1
    - name: Overrides stand-in
      ansible.builtin.set_fact:
        nothing: 2
"""


def run(playbook, inventory, forks):
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory, "-f", str(forks), playbook]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


TARGET = 1.5  # render / set_fact wall time at 500 hosts


def measure(counts, forks=None, every=None, out=print):
    """Rows (hosts, set_fact s, render s, ratio, set_fact cpu s, render cpu s, cpu ratio) for each count of hosts,
    the best of two runs each; OUT prints each row as it is measured (tests/bench/bench_scale.py reuses this)."""
    forks = forks or int(os.environ.get("BENCH_FORKS", "5"))
    every = os.environ.get("BENCH_ALL_PLATFORMS") == "1" if every is None else every
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, text in (("render", RENDER), ("baseline", BASELINE)):
            paths[name] = os.path.join(tmp, name + ".yml")
            with open(paths[name], "w") as handle:
                handle.write(text)
        # Wall time is the target; CPU time (the playbook and all its workers) is steadier on a shared machine.
        out("%6s %12s %12s %7s %14s %14s %9s" % ("hosts", "set_fact s", "render s", "ratio", "set_fact cpu s", "render cpu s", "cpu ratio"))
        for count in counts:
            inventory = os.path.join(tmp, "hosts-%d.yml" % count)
            with open(inventory, "w") as handle:
                handle.write("all:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n  hosts:\n" % sys.executable)
                handle.writelines(
                    "    cluster-%04d: {%s}\n" % (index, "" if every else "bench_platform: %s" % PLATFORMS[index % len(PLATFORMS)]) for index in range(count)
                )
            baseline = min(run(paths["baseline"], inventory, forks) for _attempt in range(2))
            render = min(run(paths["render"], inventory, forks) for _attempt in range(2))
            row = (count, baseline[0], render[0], render[0] / baseline[0], baseline[1], render[1], render[1] / baseline[1])
            out("%6d %12.2f %12.2f %6.2fx %14.2f %14.2f %8.2fx" % row)
            rows.append(row)
    return rows


def verdict(rows, out=print):
    """The target's line for the 500-host row, if measured."""
    for row in rows:
        if row[0] == 500:
            out("render 500 hosts / set_fact floor: %.2fx (target <= %.1fx) %s" % (row[3], TARGET, "ok" if row[3] <= TARGET else "MISSED"))


def main():
    counts = [int(arg) for arg in sys.argv[1:]] or [10, 100, 500]
    verdict(measure(counts))


if __name__ == "__main__":
    main()
