# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nccl_results
short_description: Parse nccl-tests output (text table or -J JSON)
version_added: 0.1.0
author: gpufleet.burnin maintainers
description:
  - Reads the result table of an nccl-tests run (C(all_reduce_perf), C(all_gather_perf), ...) - one row per message size
    with out-of-place and in-place time, algbw, busbw and C(#wrong) - the C(# Avg bus bandwidth) footer, the preamble
    (nccl-tests version, collective, sizes, device list) and the NCCL version, or the JSON file written with C(-J).
  - "Tolerates NCCL INFO and WARN lines anywhere, launcher prefixes (C([1,0]<stdout>:) from C(mpirun --tag-output), C(0: )
    from C(srun --label), C(kubectl logs --prefix) and C(--timestamps)), the layouts of nccl-tests 2.10 to 2.17 (no C(root)
    column, C(error) column, C(cputime), C(timestamp), per-iteration columns) and a log cut at the start."
  - Fails naming the line on truncated or malformed output, unless O(allow_partial) is set.
positional: collective
options:
  _input:
    description: The output - a log as text or a list of lines, the C(-J) file's text, or that JSON already loaded.
    type: raw
    required: true
  collective:
    description: The test to read when the log holds several (C(all_reduce) or C(all_reduce_perf)).
    type: str
  allow_partial:
    description: Return truncated or malformed output as C(complete=false) with the reasons in C(problems) instead of failing.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Read the launcher's log
  kubernetes.core.k8s_log:
    name: "{{ launcher_pod }}"
    namespace: burnin
  register: launcher_log

- name: Parse it
  ansible.builtin.set_fact:
    nccl: "{{ launcher_log.log | gpufleet.burnin.nccl_results }}"

- name: Show the peak
  ansible.builtin.debug:
    msg: "{{ nccl.peak_busbw }} GB/s at {{ nccl.largest_size }} bytes, average {{ nccl.avg_busbw }} GB/s, {{ nccl.wrong_total }} wrong"
"""

RETURN = r"""
_value:
  description: The parsed result.
  type: dict
  contains:
    format:
      description: C(text) or C(json).
      type: str
    program:
      description: The nccl-tests program, when the output names it (nccl-tests 2.14 and later, or C(-J)).
      type: str
      sample: all_reduce_perf
    collective:
      description: The program without C(_perf).
      type: str
      sample: all_reduce
    nccl_version:
      description: The NCCL library version, from the NCCL INFO line or the header's library code.
      type: str
      sample: 2.27.7
    nccl_tests_version:
      description: The nccl-tests version from the header.
      type: str
    rows:
      description:
        - One per message size, sorted by size - C(size) (bytes), C(count), C(type), C(redop), C(root), and C(oop) and C(ip)
          (out-of-place and in-place), each C(time_us), C(algbw), C(busbw) (GB/s) and C(wrong) (null for C(N/A)), or null.
      type: list
      elements: dict
    avg_busbw:
      description: The C(# Avg bus bandwidth) value (GB/s).
      type: float
    avg_busbw_check:
      description: C(OK) or C(FAILED) when C(NCCL_TESTS_MIN_BW) was set, else null.
      type: str
    out_of_bounds:
      description: The C(# Out of bounds values) count.
      type: int
    wrong_total:
      description: The sum of C(#wrong) over every row and side.
      type: int
    wrong_sizes:
      description: The sizes with C(#wrong) above 0.
      type: list
      elements: int
    largest_size:
      description: The largest message size (bytes).
      type: int
    peak_busbw:
      description: Out-of-place busbw at the largest size (in-place when there is no out-of-place column).
      type: float
    peak_busbw_in_place:
      description: In-place busbw at the largest size.
      type: float
    max_busbw:
      description: The highest busbw of any row and side.
      type: float
    devices:
      description: The ranks of the device list - rank, group, pid, host, device, pci, name.
      type: list
      elements: dict
    hosts:
      description: The hosts of the device list.
      type: list
      elements: str
    complete:
      description: Whether the table has rows and its footer, with no problem.
      type: bool
    errors:
      description: Failures the test or mpirun reported (C(Test NCCL failure), C(# error:), lost ranks).
      type: list
      elements: str
    warnings:
      description: NCCL WARN lines and notes such as an assumed column layout.
      type: list
      elements: str
    problems:
      description: With O(allow_partial), why the result is incomplete.
      type: list
      elements: str
    failed_hosts:
      description: Host to the first failure line naming it.
      type: dict
    warning_hosts:
      description: Host to its number of NCCL WARN lines.
      type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import BurninError


def nccl_results_filter(output, collective=None, allow_partial=False):
    # Imported on use: Ansible loads every filter file of the collection in each worker process.
    from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import parse_nccl_output

    if not isinstance(allow_partial, bool):
        raise AnsibleFilterError("gpufleet.burnin.nccl_results: allow_partial: must be true or false, got %r" % (allow_partial,))
    if collective is not None and not isinstance(collective, str):
        raise AnsibleFilterError("gpufleet.burnin.nccl_results: collective: must be a string such as all_reduce, got %r" % (collective,))
    try:
        return parse_nccl_output(output, collective=collective or None, allow_partial=allow_partial)
    except BurninError as exc:
        raise AnsibleFilterError("gpufleet.burnin.nccl_results: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"nccl_results": nccl_results_filter}
