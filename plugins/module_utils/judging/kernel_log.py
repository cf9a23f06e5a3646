# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""A GPU node's kernel log for the run's window: the driver's Xid lines, each on its node's GPU with the catalog's action.

The dcgm-diag workload with ``kernel_log: true`` (templates/workloads/dcgm-diag.yaml; a privileged pod, since
/dev/kmsg is the node's, not the container's) prints, after dcgmi's output:

- ``# gpufleet-burnin gpu <index>, <pci.bus_id>`` per GPU, from the node's own ``nvidia-smi --query-gpu=index,pci.bus_id``;
- ``# gpufleet-burnin kmsg: <message>`` per /dev/kmsg record since the pod started (records carry microseconds since
  boot; the pod keeps those at or after its start) that holds ``NVRM: Xid``.

The driver names the GPU by its PCI address (``NVRM: Xid (PCI:0000:dc:00): 45, ...``: domain, bus, device;
NVIDIA/open-gpu-kernel-modules nvErrorLog_va), nvidia-smi as ``00000000:DC:00.0``: both are read as (domain, bus,
device). Each Xid, and each earlier Xid a line names as its cause, is judged by NVIDIA's catalog (judging/actions.py):
a critical action (reset, reboot, drain, replace) fails the node, a warning warns it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import actions

XID_MARK = "# gpufleet-burnin kmsg: "
GPU_MARK = "# gpufleet-burnin gpu "
MAX_LINES = 200  # kernel lines kept per node: a storm of Xid 45 (NVIDIA/NVSentinel#1748) stays bounded
_RE_GPU = re.compile(r"^# gpufleet-burnin gpu (?P<index>\d{1,3}), *(?P<pci>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2})(?:\.\d)?\s*\Z")
_RE_XID_PCI = re.compile(r"NVRM: Xid \(PCI:(?P<pci>[0-9A-Fa-f]{1,8}:[0-9A-Fa-f]{1,2}:[0-9A-Fa-f]{1,2})")
_VERDICT_OF = {"critical": "fail", "warning": "warn"}


def _pci(text):
    """(domain, bus, device) of ``0000:dc:00`` or ``00000000:DC:00``."""
    return tuple(int(part, 16) for part in text.split(":"))


def read(text):
    """{enabled, gpus: {(domain, bus, device): index}, lines: [kernel Xid line]} of a pod's log TEXT."""
    gpus, lines, enabled = {}, [], False
    for raw in (text or "").splitlines():
        if not raw.startswith("# gpufleet-burnin "):
            continue
        if raw.startswith(XID_MARK):
            enabled = True
            if len(lines) < MAX_LINES:
                lines.append(raw[len(XID_MARK) :][:300])
        elif raw.startswith(GPU_MARK):
            enabled = True
            match = _RE_GPU.match(raw)
            if match:
                gpus[_pci(match.group("pci"))] = int(match.group("index"))
    return {"enabled": enabled, "gpus": gpus, "lines": lines}


def judge(text):
    """The node's kernel Xids: {xids: [{xid, gpu, pci, line, caused_by?, rule, severity, action}], verdict (pass,
    warn, fail), reason, lines} or None when the log holds no kernel section (the reader is off)."""
    kernel = read(text)
    if not kernel["enabled"]:
        return None
    found = []
    for line in kernel["lines"]:
        for item in actions.xids_in(line):
            match = _RE_XID_PCI.search(line)
            pci = match.group("pci") if match else None
            gpu = kernel["gpus"].get(_pci(pci)) if pci else None
            codes = [item["xid"]] + list(item.get("caused_by") or [])
            decided = actions.decide([actions.xid_signal(code) for code in codes])
            entry = {"xid": item["xid"], "gpu": gpu, "pci": pci, "line": line, "rule": decided["action_rule"]}
            entry.update(severity=decided["severity"], action=decided["action"])
            if item.get("caused_by"):
                entry["caused_by"] = list(item["caused_by"])
            key = (entry["xid"], entry["gpu"], entry["pci"], tuple(entry.get("caused_by") or ()))
            if key not in [(e["xid"], e["gpu"], e["pci"], tuple(e.get("caused_by") or ())) for e in found]:
                found.append(entry)
    if not found:
        return {"xids": [], "verdict": "pass", "reason": "no Xid in the kernel log of the run's window", "lines": []}
    rank = {"fail": 2, "warn": 1, "pass": 0}
    verdict = max((_VERDICT_OF.get(entry["severity"], "pass") for entry in found), key=lambda name: rank[name])
    parts = []
    for entry in found[:6]:
        where = ("GPU %d" % entry["gpu"]) if entry["gpu"] is not None else ("PCI %s" % entry["pci"] if entry["pci"] else "a GPU")
        cause = (" caused by Xid %s" % "/".join(str(code) for code in entry["caused_by"])) if entry.get("caused_by") else ""
        parts.append("%s: kernel Xid %d%s (%s: %s)" % (where, entry["xid"], cause, entry["severity"], entry["action"]))
    reason = "; ".join(parts) + (" (and %d more)" % (len(found) - 6) if len(found) > 6 else "")
    return {"xids": found, "verdict": verdict, "reason": reason, "lines": [entry["line"] for entry in found]}


__all__ = ["GPU_MARK", "XID_MARK", "judge", "read"]
