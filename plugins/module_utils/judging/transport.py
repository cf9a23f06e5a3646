# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""Transport proof: which network plugin and transport NCCL used, read from its INFO lines, and the check of it.

NCCL names the network a communicator uses once per rank (``Using network <name>``) and the path of each ring or
tree connection (``Channel 00/0 : 0[0] -> 8[0] [send] via NET/<name>/<dev>[/GDRDMA]``); plugins add their own lines
(``NET/OFI ...``, ``NET/gIB ...``, ``NET/FasTrak ...``). The strings matched here, with where they are printed:

- ``Using network %s``: NVIDIA/nccl src/init.cc, ``INFO(NCCL_INIT, ...)`` with the net's ``name``;
- ``Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s`` (and ``[receive]``): NVIDIA/nccl
  src/transport/net.cc, ``INFO(NCCL_INIT|NCCL_NET, ...)``; ``via P2P/%s%s%s`` with ``MNNVL`` or ``CUMEM``:
  src/transport/p2p.cc, ``INFO(NCCL_INIT|NCCL_P2P, ...)``;
- ``NET/Plugin: Loaded net plugin %s (v%d)``: NVIDIA/nccl src/plugin/net/net_v*.cc, ``INFO(NCCL_INIT|NCCL_NET, ...)``
  (a plugin loaded is not a plugin used: the ``Using network`` line decides);
- ``NET/IB : Using%s %s; OOB %s:%s`` (devices as ``[0]mlx5_0:1/IB`` or ``/RoCE``): src/transport/net_ib;
  ``NET/Socket : Using%s``: src/transport/net_socket.cc; the built-in nets are named ``IB`` and ``Socket``;
- aws-ofi-nccl (aws/aws-ofi-nccl): every INFO line starts ``NET/OFI `` (include/nccl_ofi_log.h); ``Selected
  provider is %s, fabric is %s (found %d nics)`` (src/nccl_ofi_net.c; older releases ``Selected Provider is %s (found
  %d nics)``); the net is named ``Libfabric``, or ``AWS Libfabric`` / ``OFI`` when NCCL_NET says so
  (src/nccl_ofi_interface_nvidia.c; ``AWS Libfabric`` up to 1.11.0);
- gIB: ``Using network gIB`` and ``NET/gIB : Initializing gIB v1.0.5`` (Google Cloud, "Run NCCL on Compute Engine
  instances", docs.cloud.google.com/ai-hypercomputer/docs/nccl/test-vms);
- GPUDirect-TCPXO: the FasTrak plugin logs ``NET/FasTrak <time>: ...`` and ``Initializing network FasTrak, version:
  %d.%d.%d`` (google/nccl-plugin-gpudirect-tcpxo tcpdirect_plugin/fastrak_offload/init.cc); its net is FasTrak;
- GPUDirect-TCPX: lines ``NET/GPUDirectTCPX ...`` (google/nccl-plugin-gpudirecttcpx, ``"NET/" PRODUCT_NAME`` with
  ``PRODUCT_NAME "GPUDirectTCPX"``); its net name starts with GPUDirectTCPX;
- NVLS: ``NVLS multicast support is %savailable on dev %d`` (src/transport/nvls.cc, INFO(NCCL_INIT)): NVLS could be
  used; ``NVLS comm %p headRank %d nHeads %d ...`` (same file, INFO(NCCL_INIT|NCCL_NVLS)): NVLS buffers were set up;
- MNNVL: ``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d`` (src/init.cc, INFO(NCCL_INIT)).

Every line above is logged under the INIT or NET subsystem: the base env's ``NCCL_DEBUG=INFO`` and
``NCCL_DEBUG_SUBSYS=NET,INIT`` (rendering/nccl_env.py) keep them. A log without NCCL INFO lines proves nothing: the
transport is then ``unknown`` and the check is a note, never a failure.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import log_lines, nccl_names, nccl_results

# Transport ids (what the platform catalogue's ``transport`` keys name) -> label; which NCCL net and plugin names
# are which transport is the sourced table _lib/nccl/networks.yaml (judging/nccl_names.py).
TRANSPORTS = {
    "efa": {"label": "EFA through aws-ofi-nccl", "detail": "the OFI net plugin"},
    "ib": {"label": "IB verbs", "detail": "NCCL's net_ib or the HPC-X RDMA/SHARP plugin, InfiniBand or RoCE"},
    "gib": {"label": "gIB", "detail": "Google's RDMA net plugin"},
    "tcpxo": {"label": "GPUDirect-TCPXO", "detail": "the FasTrak net plugin"},
    "tcpx": {"label": "GPUDirect-TCPX", "detail": "the GPUDirectTCPX net plugin"},
    "socket": {"label": "plain TCP sockets", "detail": "NCCL's net_socket"},
}
UNKNOWN = "unknown"
# Which subsystem each matched line is logged under (NCCL_DEBUG_SUBSYS must name one of them).
SUBSYSTEMS = {
    "network": ("INIT",),
    "channel": ("INIT", "NET"),
    "plugin": ("INIT", "NET"),
    "ofi": ("INIT", "NET"),
    "nvls": ("INIT",),
    "comm": ("INIT",),
    "p2p": ("INIT", "P2P"),
}

_RE_USING = re.compile(r"^Using network (?P<name>\S.*?)\s*\Z")
# "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0", and the older "Ring 00 : 15 -> 0 [send] via NET/Socket/0"
# (NCCL 2.4-2.6, ranks without the device in brackets: tests/fixtures/real/nccl/nccl2.4-ring-via-net-socket.log).
_RE_CHANNEL_NET = re.compile(
    r"^(?:Channel|Ring) \d+(?:/\d+)? : \d+(?:\[[0-9a-fx]+\])? -> \d+(?:\[[0-9a-fx]+\])? \[(?:send|receive)\] via NET/(?P<name>[^/]{1,100})/\d+"
)
_RE_CHANNEL_P2P = re.compile(r"^Channel \d+(?:/\d+)? : \d+\[[0-9a-fx]+\] -> \d+\[[0-9a-fx]+\] via P2P/(?P<kind>[A-Za-z]+)")
_RE_PLUGIN = re.compile(r"^NET/Plugin ?: Loaded net plugin (?P<name>\S.*?) \(v\d+\)")
_RE_OFI_PROVIDER = re.compile(r"^NET/OFI Selected [Pp]rovider is (?P<provider>[^,\s]+)(?:, fabric is (?P<fabric>[^\s(]+))?")
_RE_IB_USING = re.compile(r"^NET/IB : Using(?P<devices>.*?);\s*OOB")
_RE_PLUGIN_LINE = re.compile(r"^NET/(?P<name>gIB|FasTrak|GPUDirectTCPX)\b")
_RE_NVLS_SUPPORT = re.compile(r"^NVLS multicast support is (?P<not>not )?available on dev \d+")
_RE_NVLS_COMM = re.compile(r"^NVLS comm \S+ headRank -?\d+ nHeads \d+|^Connected NVLS tree")  # the latter: NCCL 2.18-2.19
_RE_COMM = re.compile(r"^comm \S+ rank \d+ nRanks \d+ nNodes (?P<nnodes>\d+) localRanks \d+ localRank \d+ MNNVL (?P<mnnvl>\d+)")
MAX_EVIDENCE = 20
# What a pod's NCCL ran (versions()): NCCL's own ``NCCL version %s`` (src/init.cc, INFO(NCCL_INIT), the build after
# ``+``), the net plugins' version lines. Bounded: a version is at most 40 characters, a node keeps at most
# MAX_VERSIONS distinct plugin values.
_RE_NCCL_VERSION = re.compile(r"^NCCL version (?P<version>\d{1,3}\.\d{1,3}\.\d{1,4}(?:[-+][\w.+-]{1,40})?)")
# aws-ofi-nccl: ``NET/OFI Initializing aws-ofi-nccl %s`` (1.7 and later), ``NET/OFI Using aws-ofi-nccl %s`` (older).
_RE_OFI_VERSION = re.compile(r"^NET/OFI (?:Initializing|Using) aws-ofi-nccl (?P<version>[\w.+-]{1,40})")
_RE_GIB_VERSION = re.compile(r"^NET/gIB ?: Initializing gIB (?P<version>v?[\w.+-]{1,40})")
# nccl-tests' preamble names the library it loaded as NCCL_VERSION_CODE (``nccl-library=22807``): the version when
# no INFO line printed it (NCCL_DEBUG unset).
_RE_NT_LIBRARY = re.compile(r"^#\s*nccl-tests version \S{1,40}(?:\s+\([0-9a-f]{1,40}\))?(?:\s+nccl-headers=\d{1,9})?\s+nccl-library=(?P<library>\d{1,9})")
_RE_FASTRAK_VERSION = re.compile(r"^NET/FasTrak\b.{0,80}?Initializing network FasTrak, version: (?P<version>[\w.+-]{1,40})")
MAX_VERSIONS = 4


def transport_of(network):
    """The transport id of an NCCL net name (``Libfabric`` -> ``efa``, ``IBext_v6`` -> ``ib``), or None for a name
    _lib/nccl/networks.yaml does not know."""
    return nccl_names.transport_of(network)


def _provider_transport(provider):
    """aws-ofi-nccl's provider -> transport: ``efa`` is EFA; any other (tcp, sockets) is the fall back ofi-<name>."""
    base = (provider or "").split(";")[0]
    return nccl_names.catalog()["ofi_providers"].get(base) or ("ofi-%s" % base)


def label(tid):
    return TRANSPORTS[tid]["label"] if tid in TRANSPORTS else (tid or "unknown")


def _host_entry(hosts, host, log):
    if host not in hosts:
        hosts[host] = {
            "host": host,
            "logs": [],
            "networks": [],
            "channels": {},
            "plugins": [],
            "provider": None,
            "fabric": None,
            "ib_link": None,
            "nvls_support": None,
            "nvls_comm": False,
            "mnnvl": None,
            "nnodes": None,
            "lines": [],
            "plugin_failures": [],
        }
    entry = hosts[host]
    if log and log not in entry["logs"]:
        entry["logs"].append(log)
    return entry


def _add(values, value):
    if value not in values:
        values.append(value)


def parse_transport(logs):
    """Transport evidence from NCCL INFO lines.

    ``logs``: {log name (pod): text} or one text. Lines may carry launcher prefixes (``[1,0]<stdout>:``, ``0: ``,
    kubectl's) as nccl_results reads them. Returns {info_lines, hosts: {host: {logs, networks, channels (net name ->
    count), plugins, provider, fabric, ib_link, nvls_support, nvls_comm, mnnvl, nnodes, lines, transport}},
    transports (sorted ids seen), nvls (used, available, not available or None), mnnvl (True, False or None)}.
    """
    if logs is None:
        logs = {}
    if not isinstance(logs, dict):
        logs = {None: logs}
    hosts = {}
    info_lines = 0
    for log in sorted(logs, key=str):
        text = logs[log]
        if not isinstance(text, str):
            continue
        for raw in text.splitlines():
            if "NCCL INFO" not in raw and "NCCL WARN" not in raw:
                continue  # only INFO lines (and WARNs of a plugin that failed) are read: skip the rest before any regex
            line = log_lines.strip(raw.rstrip("\r\n")).strip()
            match = log_lines.nccl_line(line)
            if not match:
                continue
            if match["level"] == "WARN":
                failed = nccl_names.plugin_failure(match["msg"])
                if failed:
                    failures = _host_entry(hosts, match["host"], log)["plugin_failures"]
                    if len(failures) < 3:
                        failures.append(dict(failed, line=line[:300]))
                continue
            if match["level"] != "INFO":
                continue
            info_lines += 1
            _read_line(_host_entry(hosts, match["host"], log), match["msg"], line)
    for entry in hosts.values():
        names = entry["networks"] or sorted(entry["channels"], key=lambda name: -entry["channels"][name])
        entry["unknown_names"] = [name for name in names if transport_of(name) is None]
        known = sorted(set(transport_of(name) for name in names if transport_of(name)))
        entry["transport"] = known[0] if len(known) == 1 else ("mixed" if known else (UNKNOWN if names else None))
        entry["network"] = names[0] if len(names) == 1 else (", ".join(names) if names else None)
        if entry["provider"] and (entry["transport"] == "efa" or not names):
            # The provider decides inside the OFI plugin; without a 'Using network' line the NET/OFI provider line
            # still shows the plugin's net initialised, and NCCL uses the first net that does (_lib/nccl/networks.yaml).
            entry["transport"] = _provider_transport(entry["provider"])
            entry["network"] = entry["network"] or "OFI (provider %s)" % entry["provider"]
    seen = sorted(set(entry["transport"] for entry in hosts.values() if entry["transport"]))
    nvls = None
    if any(entry["nvls_comm"] for entry in hosts.values()):
        nvls = "used"
    elif any(entry["nvls_support"] for entry in hosts.values()):
        nvls = "available"
    elif any(entry["nvls_support"] is False for entry in hosts.values()):
        nvls = "not available"
    flags = [entry["mnnvl"] for entry in hosts.values() if entry["mnnvl"] is not None]
    return {"info_lines": info_lines, "hosts": hosts, "transports": seen, "nvls": nvls, "mnnvl": (any(flags) if flags else None)}


def _read_line(entry, msg, line):  # pylint: disable=too-many-branches
    kept = None
    match = _RE_USING.match(msg)
    if match:
        _add(entry["networks"], match.group("name"))
        kept = line
    match = kept is None and _RE_CHANNEL_NET.match(msg)
    if match:
        name = match.group("name")
        entry["channels"][name] = entry["channels"].get(name, 0) + 1
        if entry["channels"][name] == 1:
            kept = line
    match = kept is None and _RE_CHANNEL_P2P.match(msg)
    if match and match.group("kind") == "MNNVL":
        entry["mnnvl"] = True
    match = _RE_PLUGIN.match(msg)
    if match:
        _add(entry["plugins"], match.group("name"))
        kept = line
    match = _RE_OFI_PROVIDER.match(msg)
    if match:
        entry["provider"], entry["fabric"] = match.group("provider"), match.group("fabric")
        kept = line
    match = _RE_IB_USING.match(msg)
    if match:
        links = set(re.findall(r"/(IB|RoCE)\b", match.group("devices")))
        entry["ib_link"] = "/".join(sorted(links)) or None
    match = _RE_PLUGIN_LINE.match(msg)
    if match:
        _add(entry["plugins"], match.group("name"))
    match = _RE_NVLS_SUPPORT.match(msg)
    if match:
        entry["nvls_support"] = entry["nvls_support"] or not match.group("not")
    if _RE_NVLS_COMM.match(msg):
        entry["nvls_comm"] = True
    match = _RE_COMM.match(msg)
    if match:
        entry["nnodes"] = int(match.group("nnodes"))
        entry["mnnvl"] = bool(entry["mnnvl"]) or match.group("mnnvl") == "1"
    if kept and len(entry["lines"]) < 3:
        entry["lines"].append(kept[:300])


def _describe(entry):
    parts = ["network %s" % (entry["network"] or "?")]
    if entry["provider"]:
        parts.append("provider %s" % entry["provider"])
    if entry["ib_link"] and entry["transport"] == "ib":
        parts.append("link %s" % entry["ib_link"])
    if entry["transport"] in TRANSPORTS:
        parts.append(TRANSPORTS[entry["transport"]]["detail"])
    return "%s (%s)" % (label(entry["transport"]), ", ".join(parts))


def _where(items):
    """``host (pod p, node n)`` for each evidence item, at most 6."""
    parts = []
    for item in items[:6]:
        extra = ", ".join("%s %s" % (key, item[key]) for key in ("pod", "node") if item.get(key) and item[key] != item["host"])
        parts.append("%s%s" % (item["host"], (" (%s)" % extra) if extra else ""))
    return ", ".join(parts) + (", ..." if len(items) > 6 else "")


def check(evidence, expected=None, facts=None, locate=None):
    """The ``transport`` check of a verdict from :func:`parse_transport`'s ``evidence``.

    ``expected``: {transport, source} from the platform catalogue (rendering/platform_catalog.expected_transport),
    or None. ``facts``: platform, gpu_architecture, instance_type, nodes, mnnvl. ``locate``: host -> {pod, node}.
    A mismatch on a multi-node run fails, naming the expected and the seen transport and where it was seen; no NCCL
    INFO lines, no network named or no expectation is a note (``note: true``), which never fails the verdict.
    """
    facts = facts or {}
    if expected is not None and (not isinstance(expected, dict) or expected.get("transport") not in TRANSPORTS):
        raise ConfigError("expected_transport", "must name one of %s, got %r" % (", ".join(sorted(TRANSPORTS)), expected))
    locate = locate or (lambda host: {})
    where_facts = "/".join(str(facts.get(key)) for key in ("platform", "gpu_architecture") if facts.get(key)) or "this cluster"
    if facts.get("instance_type"):
        where_facts += " (%s)" % facts["instance_type"]
    out = {
        "name": "transport",
        "expected": expected["transport"] if expected else None,
        "expected_source": (expected or {}).get("source"),
        "seen": None,
        "nvls": evidence.get("nvls"),
        "mnnvl": evidence.get("mnnvl"),
        "evidence": [],
    }
    hosts = [entry for host, entry in sorted(evidence.get("hosts", {}).items()) if entry.get("transport")]
    for entry in [entry for entry in hosts if entry["transport"] != UNKNOWN][:MAX_EVIDENCE]:
        item = {
            "host": entry["host"],
            "transport": entry["transport"],
            "network": entry["network"],
            "provider": entry["provider"],
            "logs": entry["logs"],
            "lines": entry["lines"],
        }
        item.update(dict((key, value) for key, value in (locate(entry["host"]) or {}).items() if key in ("pod", "node")))
        out["evidence"].append(item)
    extras = _extras(evidence)
    failed = _plugin_failed(evidence, expected, facts, locate)
    if failed:
        out.update(failed)
        return out
    if not evidence.get("info_lines"):
        out.update(
            verdict="pass",
            note=True,
            seen="unknown",
            reason="transport unknown: the logs carry no NCCL INFO lines " "(NCCL_DEBUG is not INFO), so the network that carried the traffic is not proven",
        )
        return out
    plugins = sorted(set(name for entry in evidence.get("hosts", {}).values() for name in entry.get("plugins") or []))
    loaded = (" (net plugin(s) loaded: %s; a plugin loaded is not a plugin used)" % ", ".join(plugins)) if plugins else ""
    if not hosts:
        out.update(
            verdict="pass",
            note=True,
            seen="unknown",
            reason="transport unknown: the NCCL INFO lines name no network " "('Using network' is logged under NCCL_DEBUG_SUBSYS INIT)%s%s" % (loaded, extras),
        )
        return out
    unknown = sorted(set(name for entry in hosts for name in entry.get("unknown_names") or []))
    unknown_text = "; NCCL named network(s) %s, which _lib/nccl/networks.yaml does not map to a transport" % ", ".join(unknown) if unknown else ""
    hosts = [entry for entry in hosts if entry["transport"] != UNKNOWN]
    if not hosts:
        # A name the table does not know proves nothing either way: a note, never a failure.
        out.update(verdict="pass", note=True, seen="unknown", reason="transport unknown%s%s%s" % (unknown_text, loaded, extras))
        return out
    extras = unknown_text + extras
    seen = sorted(set(entry["transport"] for entry in hosts))
    out["seen"] = seen[0] if len(seen) == 1 else "mixed"
    if expected is None:
        out.update(
            verdict="pass",
            note=True,
            reason="inter-node transport %s on %d host(s); the platform catalogue names no "
            "expected transport for %s%s" % ("; ".join(sorted(set(_describe(e) for e in hosts))), len(hosts), where_facts, extras),
        )
        return out
    want = expected["transport"]
    wrong = [item for item in out["evidence"] if item["transport"] != want]
    wrong_all = [entry for entry in hosts if entry["transport"] != want]
    counts = [entry["nnodes"] for entry in hosts if entry["nnodes"] is not None]
    single = facts.get("nodes") == 1 or (bool(counts) and all(count == 1 for count in counts))
    if wrong_all:
        seen_text = "; ".join(sorted(set(_describe(entry) for entry in wrong_all)))
        reason = "inter-node transport is not the expected one: expected %s (%s) for %s (%s), seen %s on %d of %d host(s): %s" % (
            label(want),
            TRANSPORTS[want]["detail"],
            where_facts,
            expected.get("source") or "platform catalogue",
            seen_text,
            len(wrong_all),
            len(hosts),
            _where(wrong),
        )
        if single:
            out.update(verdict="pass", note=True, reason="%s - a single-node run, so no inter-node traffic was carried%s" % (reason, extras))
        else:
            out.update(verdict="fail", reason=reason + extras)
    else:
        out.update(verdict="pass", reason="inter-node transport %s as expected for %s on %d host(s)%s" % (_describe(hosts[0]), where_facts, len(hosts), extras))
    if facts.get("mnnvl") is True and evidence.get("mnnvl") is False and not single:
        out["verdict"] = "fail"
        out.pop("note", None)
        out["reason"] += "; MNNVL was enabled but NCCL reported MNNVL 0 (the NVLink domain was not used)"
    return out


def _plugin_failed(evidence, expected, facts, locate):
    """The check's verdict and reason when the expected fabric's net plugin failed to initialize on some host
    (_lib/nccl/warnings.yaml plugin_init) and that host did not use the expected transport after all; None otherwise.
    A plugin the platform does not expect, or a single-node run, is no failure (a note names it)."""
    entries = [entry for host, entry in sorted(evidence.get("hosts", {}).items()) if entry.get("plugin_failures")]
    if not entries:
        return None
    want = (expected or {}).get("transport")
    bad = [entry for entry in entries if want and entry.get("transport") != want and any(item["transport"] == want for item in entry["plugin_failures"])]
    if not bad:
        return None
    where = []
    for entry in bad[:6]:
        place = dict((key, value) for key, value in (locate(entry["host"]) or {}).items() if key in ("pod", "node") and value and value != entry["host"])
        where.append("%s%s" % (entry["host"], (" (%s)" % ", ".join("%s %s" % item for item in sorted(place.items()))) if place else ""))
    first = bad[0]["plugin_failures"][0]
    reason = "the net plugin of the expected transport %s failed to initialize on %d host(s) %s: %s (%s)" % (
        label(want),
        len(bad),
        ", ".join(where) + (", ..." if len(bad) > 6 else ""),
        first["what"],
        first["line"],
    )
    if facts.get("nodes") == 1:
        return {"verdict": "pass", "note": True, "seen": "unknown", "reason": reason + " - a single-node run, so no inter-node traffic was carried"}
    return {"verdict": "fail", "seen": bad[0].get("transport") or "unknown", "reason": reason}


def _extras(evidence):
    parts = []
    if evidence.get("nvls"):
        parts.append("NVLS %s" % evidence["nvls"])
    if evidence.get("mnnvl") is not None:
        parts.append("MNNVL %s" % ("used" if evidence["mnnvl"] else "not used"))
    return (" (%s)" % ", ".join(parts)) if parts else ""


def _plugin_version(msg):
    """The net plugin an INFO message names with its version: ``aws-ofi-nccl 1.14.2``, ``gIB v1.0.5``, ``FasTrak
    1.0.3``, ``<name> (v<api>)`` of NCCL's ``Loaded net plugin`` line, ``internal`` when NCCL found none; or None."""
    if not msg.startswith("NET/"):
        return None
    for pattern, name in ((_RE_OFI_VERSION, "aws-ofi-nccl"), (_RE_GIB_VERSION, "gIB"), (_RE_FASTRAK_VERSION, "FasTrak")):
        match = pattern.match(msg)
        if match:
            return "%s %s" % (name, match.group("version"))
    if not msg.startswith("NET/Plugin"):
        return None
    match = _RE_PLUGIN.match(msg)
    if match:
        return match.group(0)[match.group(0).index("Loaded net plugin ") + 18 :][:100]
    # "No plugin found ..., using internal implementation", "Using internal network plugin." (NCCL 2.19 and later).
    return "internal" if "sing internal" in msg else None


def versions(text):
    """What one pod's NCCL ran, from its INFO lines (judging/drift.py compares it across nodes): {nccl: the NCCL
    version with its build (``2.21.5+cuda12.4``), net_plugin: the net plugins' versions (``aws-ofi-nccl 1.14.2``,
    ``FastSocket (v6)``, ``internal``; several, sorted, joined by ``, ``)}, each only when printed. One pass, only
    lines with an NCCL marker or a bare ``NCCL version`` looked at further."""
    found = {}
    plugins = set()
    library = None
    if not isinstance(text, str):
        return found
    for raw in text.splitlines():
        if "NCCL INFO" not in raw and "NCCL version" not in raw and "nccl-library=" not in raw:
            continue
        line = log_lines.strip(raw.rstrip("\r\n")).strip()
        match = log_lines.nccl_line(line) if " NCCL " in line else None
        if match and match["level"] != "INFO":
            continue
        # Without NCCL's marker only a bare version line (vLLM prints one) and nccl-tests' preamble count: a plugin line
        # needs the marker, as parse_transport reads them (a program's own text cannot pass for NCCL's).
        msg = match["msg"] if match else line
        version = _RE_NCCL_VERSION.match(msg)
        if version:
            found.setdefault("nccl", version.group("version"))
            continue
        tests = None if match else _RE_NT_LIBRARY.match(msg)
        if tests:
            library = library or nccl_results.nccl_version_from_code(tests.group("library"))
            continue
        plugin = _plugin_version(msg) if match else None
        if plugin and (plugin in plugins or len(plugins) < MAX_VERSIONS):
            plugins.add(plugin)
    if library and "nccl" not in found:
        found["nccl"] = library
    if plugins:
        # A plugin that loaded says more than NCCL's own nets: "internal" only when no plugin is named.
        named = sorted(plugins - {"internal"}) or ["internal"]
        found["net_plugin"] = ", ".join(named)
    return found


__all__ = ["TRANSPORTS", "check", "label", "parse_transport", "transport_of", "versions"]
