# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Task evaluations per host of a real ansible-playbook run, for the benchmarks (bench_whole_run.py, bench_scale.py).

A task evaluation is one task queued for one host: ansible-core's strategy forks a worker for it and sends the
`v2_runner_on_start` callback, whether the task then runs, skips (its `when:` is evaluated in the worker), fails or
is an include. That is what a task costs the controller per host, so it is what the count is about. Not counted:
`meta` tasks (run in the strategy itself, no worker) and the tasks of hosts that already failed or ended. A
`run_once` task counts once, for the host it ran on; a loop counts once per host, not per item.

    from task_count import enable, read, summarize, describe
    env = enable(env, callback_dir, out_path)   # before ansible-playbook
    summary = summarize(read(out_path))         # after it; describe(summary, target=26) for one line

The callback writes {host: {action: count}} (the action as the task names it, e.g. ansible.builtin.include_tasks)
to the file named by BENCH_TASK_COUNT when the playbook ends.
"""

import json
import os
import statistics
from pathlib import Path

NAME = "bench_task_count"
CALLBACK = """
import json, os
from ansible.plugins.callback import CallbackBase

class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = %r
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        self.counts = {}

    # Sent by the strategy each time it queues a task for a host (a worker per task and host).
    def v2_runner_on_start(self, host, task):
        per_host = self.counts.setdefault(host.get_name(), {})
        per_host[task.action] = per_host.get(task.action, 0) + 1

    def v2_playbook_on_stats(self, stats):
        with open(os.environ["BENCH_TASK_COUNT"], "w") as handle:
            json.dump(self.counts, handle, sort_keys=True)
""" % (NAME,)


def enable(env, callback_dir, out_path):
    """ENV (a dict, not changed) plus the counting callback: written into CALLBACK_DIR, added to the callback path
    and to the enabled callbacks (any already there stay), its output going to OUT_PATH."""
    callback_dir = Path(callback_dir)
    callback_dir.mkdir(parents=True, exist_ok=True)
    (callback_dir / ("%s.py" % NAME)).write_text(CALLBACK)
    env = dict(env)
    paths = [p for p in env.get("ANSIBLE_CALLBACK_PLUGINS", "").split(os.pathsep) if p]
    if str(callback_dir) not in paths:
        paths.append(str(callback_dir))
    enabled = [c for c in env.get("ANSIBLE_CALLBACKS_ENABLED", "").split(",") if c.strip()]
    if NAME not in enabled:
        enabled.append(NAME)
    env.update(ANSIBLE_CALLBACK_PLUGINS=os.pathsep.join(paths), ANSIBLE_CALLBACKS_ENABLED=",".join(enabled), BENCH_TASK_COUNT=str(out_path))
    return env


def read(out_path):
    """{host: {action: count}} as the callback wrote it; {} when the run wrote nothing (it never reached its end)."""
    path = Path(out_path)
    return json.loads(path.read_text()) if path.exists() else {}


def summarize(counts):
    """Per host totals: hosts, min, median, max, the host with the most and its count by action (most first)."""
    if not counts:
        return {"hosts": 0, "min": None, "median": None, "max": None, "max_host": None, "by_action": {}}
    totals = dict((host, sum(actions.values())) for host, actions in counts.items())
    max_host = max(sorted(totals), key=lambda host: totals[host])
    by_action = sorted(counts[max_host].items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "hosts": len(totals),
        "min": min(totals.values()),
        "median": statistics.median(totals.values()),
        "max": totals[max_host],
        "max_host": max_host,
        "by_action": dict(by_action),
    }


def describe(summary, target=None):
    """One line: the per-host counts, the busiest host's actions and, with TARGET, whether its max meets it."""
    if not summary["hosts"]:
        return "task evaluations per host: none counted (the run did not reach its end)"
    short = ", ".join("%s %d" % (action.rsplit(".", 1)[-1], n) for action, n in summary["by_action"].items())
    line = "task evaluations per host: max %d (%s), median %g, min %d over %d hosts; %s's by action: %s" % (
        summary["max"],
        summary["max_host"],
        summary["median"],
        summary["min"],
        summary["hosts"],
        summary["max_host"],
        short,
    )
    if target is not None:
        line += " (target <= %d per host) %s" % (target, "ok" if summary["max"] <= target else "MISSED")
    return line
