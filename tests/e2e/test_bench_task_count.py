# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""tests/bench/task_count.py: the benchmarks' count of task evaluations per host, from a real ansible-playbook run of a
small playbook whose count is known (skips, includes, a loop, run_once, meta, a host that includes nothing)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")

PLAYBOOK = """
- name: Counted
  hosts: all
  gather_facts: false
  tasks:
    - name: A fact
      ansible.builtin.set_fact:
        counted: 1
    - name: Skipped everywhere (still a worker per host)
      ansible.builtin.debug:
        msg: never
      when: false
    - name: Meta (no worker)
      ansible.builtin.meta: noop
    - name: Include on h1 only
      ansible.builtin.include_tasks: included.yml
      when: inventory_hostname == 'h1'
    - name: A loop of three items (one evaluation per host)
      ansible.builtin.debug:
        msg: "{{ item }}"
      loop: [1, 2, 3]
    - name: Once
      ansible.builtin.debug:
        msg: once
      run_once: true
"""
INCLUDED = """
- name: Included one
  ansible.builtin.set_fact:
    one: 1
- name: Included two
  ansible.builtin.debug:
    msg: two
"""


def _task_count():
    spec = importlib.util.spec_from_file_location("gpufleet_bench_task_count", os.path.join(BENCH, "task_count.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_counts_a_real_run(tmp_path):
    task_count = _task_count()
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    (tmp_path / "included.yml").write_text(INCLUDED)
    (tmp_path / "hosts.yml").write_text(
        "all:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n  hosts:\n    h1: {}\n    h2: {}\n" % sys.executable
    )
    out = tmp_path / "counts.json"
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_CALLBACK"))
    env = task_count.enable(env, tmp_path / "callbacks", out)
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    subprocess.run([playbook, "-i", "hosts.yml", "play.yml"], cwd=str(tmp_path), env=env, check=True, stdout=subprocess.DEVNULL)
    counts = task_count.read(out)
    # h1: set_fact, the skipped debug, the include, its two tasks, the loop, run_once's task; h2 neither included
    # tasks nor the run_once task (it ran on h1), but its include was evaluated (and skipped).
    assert dict((host, sum(a.values())) for host, a in counts.items()) == {"h1": 7, "h2": 4}
    assert counts["h1"]["ansible.builtin.include_tasks"] == 1 and counts["h1"]["ansible.builtin.debug"] == 4
    summary = task_count.summarize(counts)
    assert (summary["max"], summary["max_host"], summary["min"], summary["median"]) == (7, "h1", 4, 5.5)
    assert summary["by_action"] == {"ansible.builtin.debug": 4, "ansible.builtin.set_fact": 2, "ansible.builtin.include_tasks": 1}
    assert task_count.describe(summary, target=6).endswith("(target <= 6 per host) MISSED")
    assert task_count.describe(summary, target=7).endswith("ok")


def test_enable_keeps_other_callbacks(tmp_path):
    task_count = _task_count()
    env = task_count.enable({"ANSIBLE_CALLBACK_PLUGINS": "/x", "ANSIBLE_CALLBACKS_ENABLED": "timer"}, tmp_path, tmp_path / "c.json")
    assert env["ANSIBLE_CALLBACK_PLUGINS"] == "/x" + os.pathsep + str(tmp_path)
    assert env["ANSIBLE_CALLBACKS_ENABLED"] == "timer,bench_task_count"
    assert task_count.read(tmp_path / "missing.json") == {}
    assert task_count.describe(task_count.summarize({})).startswith("task evaluations per host: none counted")
