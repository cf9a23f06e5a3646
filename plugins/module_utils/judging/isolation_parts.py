# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The isolation's finer rounds: after judging/isolation.py named the bad nodes (or found none), which part of them.

Pure, like judging/isolation.py: :func:`next_step` is called again with every part result so far until it returns
its conclusions. What a run changes comes from ``_lib/nccl/isolation.yaml`` (its header says where NCCL documents
each variable); no platform is named here.

Three probes, in this order (docs/isolation.md, "Finding the bad part"):

1. paths: each culprit's slow pair again, network-only (every NVLink path off; judged beside a control, the same run on
   two good nodes in the same round, since the 2-node thresholds are above what a healthy pair reaches without
   NVLink), and, when the pair is in one
   multi-node NVLink domain (the catalogue's domain label equal on both nodes, and the run enabled MNNVL),
   NVLink-only: network-only passes and NVLink-only is slow: ``nvlink``; the reverse: ``fabric``; both slow:
   ``both``; both pass: ``not_reproduced`` (neither path alone). An NVLink-only run counts only when its log proves
   it stayed on NVLink (:func:`nvlink_proof`), else the conclusion is ``undetermined``. Without an NVLink-only run
   the network-only run decides alone (``nvlink`` or ``fabric``) and the reason says NVLink was not proved good.
2. rails: a ``fabric`` or ``both`` culprit's pair once per NIC NCCL opened (its log's own list; the transport must have a
   documented one-NIC variable), one NIC per run, each held to one NIC's share of the pair's thresholds (the probe's
   ``of``: the judge divides them by it) and to the node's other NICs: the NICs whose run is slow are named.
3. links: no single node at fault. A pair slow although both its nodes passed with others (``unexplained``) is a
   link between the two nodes' topology domains (the first topology label whose values differ); every node
   passing in pairs while the run failed (``not_reproduced``) splits the run's nodes by the first topology label
   with two or more values and runs each group alone: every group passes, so the link between them is named.

A part result: {nodes, verdict (pass, warn, fail, error), probe: {kind: paths | rails | links, ...}, ...}.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpufleet.burnin.plugins.module_utils.errors import ConfigError
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging import transport as transport_lines
from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.outcomes import median
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.platform_catalog import load_platform_catalog
from ansible_collections.gpufleet.burnin.plugins.module_utils.rendering.templating import LIB_DIR, read_yaml_file

CATALOG_FILE = os.path.join(LIB_DIR, "nccl", "isolation.yaml")
SLOW = ("warn", "fail")
KINDS = ("paths", "rails", "links")
# NCCL's device list is one line; longer lines are not NCCL's (pod output is untrusted: read bounded).
MAX_LINE = 4096
MAX_NICS = 64
_cached = {}


def catalog():
    """_lib/nccl/isolation.yaml, read once."""
    if "catalog" not in _cached:
        data = read_yaml_file(CATALOG_FILE, "the isolation catalogue")
        if not isinstance(data, dict) or not isinstance((data.get("paths") or {}).get("network_only"), dict):
            raise ConfigError(CATALOG_FILE, "must hold paths.network_only")
        _cached["catalog"] = data
    return _cached["catalog"]


def network_only_env(cat=None):
    return [dict(item) for item in ((cat or catalog())["paths"]["network_only"].get("env") or [])]


def nvlink_only(cat=None):
    """The catalogue's NVLink-only recipe ({domain_label, env}), or None when it has none."""
    rule = (cat or catalog())["paths"].get("nvlink_only")
    return rule if isinstance(rule, dict) and rule.get("env") and rule.get("domain_label") else None


def nvlink_only_env(cat=None):
    return [dict(item) for item in (nvlink_only(cat) or {}).get("env") or []]


def nvlink_proof(texts):
    """What a run's logs (TEXTS) say about staying on NVLink: {info_lines, mnnvl (True when NCCL reported MNNVL used),
    net: {net name: count of channels ``via NET/<name>``}} (judging/transport.py's parse)."""
    parsed = transport_lines.parse_transport(dict(enumerate(text for text in texts or [] if isinstance(text, str))))
    net = {}
    for entry in parsed["hosts"].values():
        for name, count in entry["channels"].items():
            net[name] = net.get(name, 0) + count
    return {"info_lines": parsed["info_lines"], "mnnvl": parsed["mnnvl"] is True, "net": net}


def _unproven(proof):
    """Why an NVLink-only run's PROOF does not show it stayed on NVLink, or "" when it does."""
    if not isinstance(proof, dict) or not proof.get("info_lines"):
        return "its log has no NCCL INFO lines, so it cannot be shown to have stayed on NVLink"
    if proof.get("net"):
        return "its log shows network channels (%s): it did not stay on NVLink" % ", ".join(
            "via NET/%s x%d" % (name, count) for name, count in sorted(proof["net"].items())
        )
    if not proof.get("mnnvl"):
        return "NCCL did not report multi-node NVLink used (no MNNVL 1, no P2P/MNNVL channel)"
    return ""


def nvlink_pair(first, second, context, cat=None):
    """Why FIRST and SECOND get no NVLink-only run ("" when they do): the catalogue's recipe, the run's MNNVL
    (context mnnvl) and the nodes' domain label (context labels)."""
    rule = nvlink_only(cat)
    if rule is None:
        return "the catalogue has no NVLink-only recipe"
    if not context.get("mnnvl"):
        return "the run did not enable multi-node NVLink (burnin_enable_mnnvl), so a pair has no NVLink path between its nodes"
    labels = context.get("labels")
    if labels is None:
        return "the nodes' labels could not be read"
    key = rule["domain_label"]
    a, b = (labels.get(first) or {}).get(key), (labels.get(second) or {}).get(key)
    if a is None or b is None:
        return "%s is not labelled on both nodes: no multi-node NVLink domain known" % key
    if a != b:
        return "the nodes are in different NVLink domains (%s %s and %s)" % (key, a, b)
    return ""


def peer_percent(cat=None):
    """How far below its peers (a one-NIC run's sibling NICs, a network-only run's control pair) a finer run is slow:
    the catalogue's peers.percent."""
    value = ((cat or catalog()).get("peers") or {}).get("percent")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 100:
        raise ConfigError("%s peers.percent" % CATALOG_FILE, "must be a number above 0 and below 100, got %r" % (value,))
    return float(value)


def control_pair(good, busy):
    """Two nodes of GOOD (proved good by the pair rounds) that no job of the round holds (BUSY), or None."""
    free = sorted(node for node in good if node not in busy)
    return free[:2] if len(free) >= 2 else None


def rail_of(transport, cat=None):
    """The catalogue's one-NIC rule for TRANSPORT (judging/transport.py's id), or None (no rule, or ``not_probed``)."""
    rule = ((cat or catalog()).get("rails") or {}).get(transport or "")
    return rule if isinstance(rule, dict) and rule.get("variable") else None


def rail_gap(transport, cat=None):
    """Why TRANSPORT's rails are not re-run: the catalogue's ``not_probed`` for it, or that it has no rule."""
    rule = ((cat or catalog()).get("rails") or {}).get(transport or "")
    if isinstance(rule, dict) and rule.get("not_probed"):
        return "%s: %s" % (transport, rule["not_probed"])
    return "the transport %s has no documented one-NIC variable" % (transport or "unknown")


def nics_in(texts, transport, cat=None):
    """The NIC names NCCL (or its net plugin) says it opened, in its order ([] when the transport has no rule or no
    line names one): from the first line of TEXTS that lists them, or, for a rule with ``each_line``, one name from
    every line that names one. Bounded: lines longer than MAX_LINE are skipped, MAX_NICS kept; one pass per line."""
    rule = rail_of(transport, cat)
    if not rule:
        return []
    pattern = re.compile(rule["nics"])
    item = re.compile(rule["nic"]) if rule.get("nic") else None
    names = []
    for text in texts or []:
        for line in (text or "").splitlines():
            if len(line) > MAX_LINE:
                continue
            found = pattern.search(line)
            if not found:
                continue
            listed = found.group("nics")
            if item:
                names.extend(m.group("nic") for m in item.finditer(listed))
            else:
                names.append(listed)
            names = list(dict.fromkeys(names))[:MAX_NICS]
            if not rule.get("each_line") or len(names) >= MAX_NICS:
                return names
    return names


def pci_device_name(address, template):
    """The name the kernel gives the RDMA device at PCI ADDRESS (``0000:56:00.0``) by TEMPLATE (``rdmap{bus}s{slot}``:
    bus and slot in decimal, rdma-core's PCI naming), or None for an address it does not fit (another function)."""
    found = re.match(r"^[0-9a-f]{4}:([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])\Z", address or "")
    if not found or found.group(3) != "0":
        return None
    return template.replace("{bus}", str(int(found.group(1), 16))).replace("{slot}", str(int(found.group(2), 16)))


def topology_groups(texts, transport, cat=None):
    """(groups by host, found, why) from the net plugin's topology lines (the rule's ``groups``): {host: [[device
    names of group 0], [of group 1], ...]} (host: the line's text before its first colon, one per rank or node),
    the first ``found N nics`` count (or None), and why a device cannot be named (or ""). Bounded as nics_in."""
    rule = rail_of(transport, cat) or {}
    if not rule.get("groups"):
        return {}, None, ""
    pattern, found_re = re.compile(rule["groups"]), re.compile(rule.get("found") or r"(?!)")
    hosts, found = {}, None
    for text in texts or []:
        for line in (text or "").splitlines():
            if len(line) > MAX_LINE:
                continue
            match = pattern.search(line)
            if match:
                name = pci_device_name(match.group("pci"), rule["device_name"])
                if name is None:
                    return {}, found, "its log names EFA device %s, whose name the PCI naming does not give" % match.group("pci")
                groups = hosts.setdefault(line[: match.start()].split(":", 1)[0].strip(), {})
                if len(groups) < MAX_NICS or int(match.group("group")) in groups:
                    members = groups.setdefault(int(match.group("group")), {})
                    if len(members) < MAX_NICS:
                        members.setdefault(int(match.group("device")), name)
                continue
            counted = found_re.search(line)
            if counted and found is None:
                found = int(counted.group("count"))
    out = dict((host, [[group[d] for d in sorted(group)] for unused, group in sorted(groups.items())]) for host, groups in hosts.items())
    return out, found, ""


def rail_groups_in(texts, transport, nics, cat=None):
    """({nic: [its devices]}, why): the devices behind each NCCL network device NICS names (nics_in), for a transport
    whose rule has ``groups`` (aws-ofi-nccl: one NCCL device per group of EFA devices, named by its first). Read from
    the plugin's own topology lines of one host (the first whose groups' first devices are NICS); a log that prints
    ``found N nics`` with N equal to the NCCL devices has one device per group. Else ({}, why the grouping cannot
    be read). A rule without ``groups``: each NIC is its own group."""
    rule = rail_of(transport, cat)
    if not rule or not nics:
        return {}, ""
    if not rule.get("groups"):
        return dict((nic, [nic]) for nic in nics), ""
    hosts, found, why = topology_groups(texts, transport, cat)
    if why:
        return {}, why
    for members in hosts.values():
        by_first = dict((devices[0], devices) for devices in members)
        if len(members) == len(nics) and all(nic in by_first for nic in nics):
            return dict((nic, by_first[nic]) for nic in nics), ""
    if hosts:
        return {}, "its log's aws-ofi-nccl topology (NIC group lines) does not group the %d NCCL devices it names" % len(nics)
    if found == len(nics):
        return dict((nic, [nic]) for nic in nics), ""
    return {}, (
        "its log names %d NCCL devices but not the EFA devices of each (no aws-ofi-nccl `NIC group` topology lines%s): "
        "one NCCL device alone cannot be selected" % (len(nics), ", found %d nics" % found if found is not None else "")
    )


def rail_env(transport, nic, cat=None, devices=None):
    """The env of a run on NCCL network device NIC alone: its whole group (DEVICES, default NIC) in the rule's
    variable, comma-separated (FI_EFA_IFACE: "A comma-delimited list of EFA device ... names")."""
    rule = rail_of(transport, cat)
    return [{"name": rule["variable"], "value": ",".join(rule["value"].replace("{nic}", item) for item in (devices or [nic]))}]


def topology_labels(cat=None):
    """The node labels naming topology domains, coarsest first: the catalogue's ``topology.labels``, every platform's
    ``topology_labels`` (its catalogue, folder-name order) and the catalogue's ``topology.finest``."""
    topology = (cat or catalog()).get("topology") or {}
    platforms = [label for info in load_platform_catalog().values() for label in info["topology_labels"]]
    return list(topology.get("labels") or []) + platforms + list(topology.get("finest") or [])


def split_by_domain(nodes, labels, keys):
    """(key, {value: [nodes]}) for the first KEY whose values split NODES in two or more groups (every node labelled),
    or (None, {})."""
    for key in keys:
        values = dict((node, (labels.get(node) or {}).get(key)) for node in nodes)
        if None in values.values() or len(set(values.values())) < 2:
            continue
        groups = {}
        for node in nodes:
            groups.setdefault(values[node], []).append(node)
        return key, groups
    return None, {}


def domains_between(first, second, labels, keys):
    """{key, domains: [a, b]} of the first topology label whose values differ for the two nodes, or None."""
    for key in keys:
        a, b = (labels.get(first) or {}).get(key), (labels.get(second) or {}).get(key)
        if a is not None and b is not None and a != b:
            return {"key": key, "domains": [a, b]}
    return None


def _slowest_pair(culprit, good):
    """The culprit's slowest slow pair with a good partner (the run its finer probes repeat)."""
    slow = [r for r in culprit.get("evidence") or [] if r.get("verdict") in SLOW and set(r["nodes"]) - {culprit["node"]} <= good]
    measured = [r for r in slow if isinstance(r.get("busbw"), (int, float))]
    return min(measured, key=lambda r: r["busbw"]) if measured else (slow[0] if slow else None)


def _evidence(result):
    keys = ("round", "nodes", "trainjob", "verdict", "busbw", "size", "reason", "env")
    return dict((key, result[key]) for key in keys if key in result)


def _of(results, kind, **match):
    return [r for r in results if r["probe"]["kind"] == kind and all(r["probe"].get(k) == v for k, v in match.items())]


def _text(result):
    busbw = result.get("busbw")
    return "%s %s%s" % ("+".join(result["nodes"]), result["verdict"], " %.1f GB/s" % busbw if isinstance(busbw, (int, float)) else "")


def _check(results):
    for index, result in enumerate(results):
        if result.get("verdict") not in ("pass", "warn", "fail", "error"):
            raise ConfigError("part_results[%d].verdict" % index, "must be pass, warn, fail or error, got %r" % (result.get("verdict"),))
        if ((result.get("probe") or {}).get("kind")) not in KINDS:
            raise ConfigError("part_results[%d].probe.kind" % index, "must be one of %s" % ", ".join(KINDS))


def next_step(conclusion, context, results=(), max_jobs=0):
    """The next round of part jobs, or the conclusions.

    CONCLUSION: judging/isolation.py's; CONTEXT: {transport (judging/transport.py id), nics: {node: [NIC names NCCL
    opened]}, labels: {node: {label: value}} (None: not read), nodes (the run's), known_good, pairs (the pair
    results), env_refused (why a run's NCCL variables cannot be changed, when they cannot)}; RESULTS: every part result so far;
    MAX_JOBS: part jobs still allowed. Returns {state: run, jobs: [{nodes, env, probe}]} or {state: done, parts:
    [conclusion...], pending: [what the budget left unprobed]}.
    """
    results = [dict(r, nodes=list(r["nodes"])) for r in results]
    _check(results)
    cat = catalog()
    labels = context.get("labels")
    keys = topology_labels(cat)
    parts, wanted = [], []
    good = set(conclusion.get("good") or []) | set(context.get("known_good") or [])
    for culprit in conclusion.get("culprits") or []:
        node = culprit["node"]
        base = _slowest_pair(culprit, good)
        if base is None:
            continue
        partner = [n for n in base["nodes"] if n != node][0]
        if context.get("env_refused"):
            parts.append(
                {"level": "path", "node": node, "conclusion": "not_probed", "reason": "%s: %s" % (node, context["env_refused"]), "paths": [], "jobs": 0}
            )
            continue
        network = [r for r in _of(results, "paths", node=node) if r["probe"].get("path", "network") == "network"]
        nvlink = [r for r in _of(results, "paths", node=node) if r["probe"].get("path") == "nvlink"]
        no_nvlink = nvlink_pair(node, partner, context, cat)
        if not network or (not no_nvlink and not nvlink):
            if not network:
                wanted.append({"nodes": [node, partner], "env": network_only_env(cat), "probe": {"kind": "paths", "node": node, "path": "network"}})
            if not no_nvlink and not nvlink:
                wanted.append({"nodes": [node, partner], "env": nvlink_only_env(cat), "probe": {"kind": "paths", "node": node, "path": "nvlink"}})
            continue
        control = [r for r in _of(results, "paths", node=node) if r["probe"].get("path") == "control"]
        part = _paths_conclusion(node, base, network[-1], nvlink[-1] if nvlink else None, no_nvlink, control[-1] if control else None, peer_percent(cat))
        parts.append(part)
        if part["conclusion"] not in ("fabric", "both"):
            continue
        rail = rail_of(context.get("transport"), cat)
        nics = list((context.get("nics") or {}).get(node) or [])
        if not rail or not nics:
            why = rail_gap(context.get("transport"), cat) if not rail else "its log lists no NIC"
            parts.append({"level": "nic", "node": node, "conclusion": "not_probed", "reason": "rails not re-run: %s" % why, "nics": [], "jobs": 0})
            continue
        grouping = (context.get("rail_groups") or {}).get(node) or {}
        groups = dict(grouping.get("groups") or {})
        if rail.get("groups") and not all(nic in groups for nic in nics):
            why = grouping.get("why") or "its log does not group its NCCL devices' EFA devices"
            parts.append({"level": "nic", "node": node, "conclusion": "not_probed", "reason": "rails not re-run: %s" % why, "nics": [], "jobs": 0})
            continue
        done = dict((r["probe"]["nic"], r) for r in _of(results, "rails", node=node))
        todo = [nic for nic in nics if nic not in done]
        if todo:
            nic = todo[0]
            # One NCCL device's whole rail group, held to 1/(NCCL devices) of the pair's thresholds ("of").
            probe = {"kind": "rails", "node": node, "nic": nic, "of": len(nics)}
            if len(groups.get(nic) or [nic]) > 1:
                probe["devices"] = list(groups[nic])
            wanted.append({"nodes": [node, partner], "env": rail_env(context.get("transport"), nic, cat, groups.get(nic)), "probe": probe})
            continue
        parts.append(_nic_part(node, nics, done, peer_percent(cat)))
    outcome = conclusion.get("outcome")
    if outcome == "unexplained":
        for pair in conclusion.get("unexplained") or []:
            parts.append(_pair_link(pair, labels, keys))
    elif outcome == "not_reproduced":
        part, jobs = _group_links(context.get("nodes") or [], labels, keys, results, context.get("pairs") or [])
        wanted.extend(jobs)
        if part:
            parts.append(part)
    if wanted:
        busy, jobs = set(), []
        for job in wanted:
            if busy & set(job["nodes"]):
                continue
            busy.update(job["nodes"])
            jobs.append(job)
        for job in list(jobs):
            # Each network-only run with its control: the same run on two good nodes, in the same round.
            pair = control_pair(good, busy) if job["probe"].get("path") == "network" else None
            if pair:
                busy.update(pair)
                jobs.append({"nodes": pair, "env": job["env"], "probe": dict(job["probe"], path="control")})
        if max_jobs > 0:
            return {"state": "run", "jobs": jobs[:max_jobs]}
        return {"state": "done", "parts": parts, "pending": [job["probe"] for job in wanted]}
    return {"state": "done", "parts": parts, "pending": []}


def _measured(run):
    return run is not None and run["verdict"] != "error" and isinstance(run.get("busbw"), (int, float))


def beside_control(network, control, percent):
    """(slow, why) of a NETWORK-only run: more than PERCENT below its CONTROL (the same run on two good nodes) when both
    were measured, else by its own verdict against the thresholds, which a run without NVLink may miss when healthy
    (_lib/nccl/isolation.yaml, peers)."""
    if _measured(network) and _measured(control):
        slow = network["busbw"] * 100.0 < control["busbw"] * (100.0 - percent)
        return slow, "%.1f GB/s network-only beside %.1f GB/s on the good pair %s (%s more than %g %% below)" % (
            network["busbw"],
            control["busbw"],
            "+".join(control["nodes"]),
            "is" if slow else "not",
            percent,
        )
    if control is None:
        return network["verdict"] in SLOW, "no control pair ran: network-only judged against the 2-node thresholds"
    return network["verdict"] in SLOW, "the control pair gave no result: network-only judged against the 2-node thresholds"


def _paths_conclusion(node, base, network, nvlink, no_nvlink, control=None, percent=10.0):
    """The path part of NODE from its network-only run (beside its CONTROL, when one ran) and its NVLink-only run (None
    when none was made: NO_NVLINK says why)."""
    runs = [network] + ([nvlink] if nvlink else []) + ([control] if control else [])
    if network["verdict"] == "error":
        return _path_part(node, "undetermined", base, runs, "the network-only run gave no result: %s" % (network.get("reason") or ""))
    network_slow, beside = beside_control(network, control, percent)
    if nvlink is None:
        if network_slow:
            why = "slow network-only too: its network path is at fault (%s; NVLink not proved good: %s)" % (beside, no_nvlink)
            return _path_part(node, "fabric", base, runs, why)
        why = "slow with its NVLink paths, good network-only: its NVLink (or NVSwitch) is at fault (%s; no NVLink-only run: %s)" % (beside, no_nvlink)
        return _path_part(node, "nvlink", base, runs, why)
    if nvlink["verdict"] == "error":
        return _path_part(node, "undetermined", base, runs, "the NVLink-only run gave no result: %s" % (nvlink.get("reason") or ""))
    unproven = _unproven(nvlink.get("nvlink_proof"))
    if unproven:
        return _path_part(node, "undetermined", base, runs, "the NVLink-only run does not count: %s" % unproven)
    nvlink_slow = nvlink["verdict"] in SLOW
    if network_slow and nvlink_slow:
        why = "slow network-only and slow NVLink-only: its NVLink and its network path are both at fault (%s)" % beside
        return _path_part(node, "both", base, runs, why)
    if network_slow:
        why = "slow network-only, passes NVLink-only: its network path is at fault, its NVLink proved good (%s)" % beside
        return _path_part(node, "fabric", base, runs, why)
    if nvlink_slow:
        return _path_part(node, "nvlink", base, runs, "good network-only, slow NVLink-only: its NVLink (or NVSwitch) is at fault (%s)" % beside)
    return _path_part(
        node,
        "not_reproduced",
        base,
        runs,
        "good network-only and passes NVLink-only: neither path alone reproduces the slow pair (the two together, or a passing fault; %s)" % beside,
    )


def _path_part(node, verdict, base, runs, reason):
    labels = {"network": "network-only", "nvlink": "NVLink-only", "control": "control network-only"}
    texts = "; ".join("%s %s" % (labels[run["probe"].get("path", "network")], _text(run)) for run in runs)
    evidence = [dict(_evidence(base), path="all")]
    for run in runs:
        item = dict(_evidence(run), path=run["probe"].get("path", "network"))
        if "nvlink_proof" in run:
            item["proof"] = run["nvlink_proof"]
        evidence.append(item)
    return {
        "level": "path",
        "node": node,
        "conclusion": verdict,
        "reason": "%s: %s (%s; %s)" % (node, reason, _text(base), texts),
        "paths": evidence,
        "jobs": len(runs),
    }


def below_siblings(busbw, percent):
    """{nic: (its busbw, the median of the others)} of the NICs whose run (BUSBW: {nic: GB/s}) is more than PERCENT below
    the median of the node's other NIC runs (exactly at it is not)."""
    below = {}
    for nic, value in busbw.items():
        others = [other for name, other in busbw.items() if name != nic]
        if others and value * 100.0 < median(others) * (100.0 - percent):
            below[nic] = (value, median(others))
    return below


def _nic_part(node, nics, done, percent):
    """The NIC part of NODE from its one-NIC runs (DONE: {nic: result}): a run is slow when its verdict (against one
    NIC's share of the pair's thresholds) is, or when it is PERCENT below its siblings' median."""
    measured = dict((nic, done[nic]["busbw"]) for nic in nics if _measured(done[nic]))
    below = below_siblings(measured, percent)
    slow = [nic for nic in nics if done[nic]["verdict"] in SLOW or nic in below]
    errors = [nic for nic in nics if done[nic]["verdict"] == "error"]
    cleared = [nic for nic in nics if nic not in slow and nic not in errors]
    if slow and cleared:
        verdict, reason = "found", "slow on NIC(s) %s alone, good on %s" % (", ".join(slow), ", ".join(cleared))
        under = [
            "%s %.1f GB/s, %.0f %% below the median %.1f GB/s of the others" % (nic, below[nic][0], 100.0 * (1 - below[nic][0] / below[nic][1]), below[nic][1])
            for nic in slow
            if nic in below
        ]
        if under:
            reason += " (%s; more than %g %% below its siblings is slow)" % ("; ".join(under), percent)
    elif slow and not errors:
        verdict, reason = "every_rail", "slow on every NIC alone: not one rail (the node's network as a whole, or its partner's switch)"
    elif not errors:
        verdict, reason = "not_reproduced", "good on each NIC alone: no single rail is slow"
    else:
        # A NIC run without a result (aws-ofi-nccl may refuse one EFA device where its platform expects more:
        # _lib/nccl/isolation.yaml) proves nothing of its rail: neither all rails good nor the others the slow ones.
        verdict = "undetermined"
        reason = "%s on the others" % (
            "slow on NIC(s) %s alone, none good" % ", ".join(slow) if slow else "good on %s" % ", ".join(cleared) if cleared else "nothing"
        )
    if errors:
        first = done[errors[0]].get("reason") or "no reason given"
        reason += "; no result on NIC(s) %s (%s)" % (", ".join(errors), first[:200])
    groups = dict((nic, list((done[nic].get("probe") or {}).get("devices") or [])) for nic in nics)
    grouped = ["%s = %s" % (nic, ", ".join(groups[nic])) for nic in slow if groups[nic]]
    if grouped:
        # aws-ofi-nccl names each NCCL device by the first EFA device of its group: the run used the whole group.
        reason += "; each NIC is one NCCL device, run on its whole EFA rail group (%s)" % "; ".join(grouped)
    evidence = [dict(_evidence(done[nic]), nic=nic, **({"devices": groups[nic]} if groups[nic] else {})) for nic in nics]
    for item in evidence:
        if item["nic"] in below:
            item["below_siblings"] = round(below[item["nic"]][1], 1)
    return {
        "level": "nic",
        "node": node,
        "conclusion": verdict,
        "reason": "%s: %s" % (node, reason),
        "nics": slow,
        "cleared": cleared,
        "errors": errors,
        "runs": evidence,
        "jobs": len(nics),
    }


def _pair_link(pair, labels, keys):
    first, second = pair
    if labels is None:
        return {"level": "link", "conclusion": "undetermined", "nodes": list(pair), "reason": "the nodes' labels could not be read", "links": [], "jobs": 0}
    between = domains_between(first, second, labels, keys)
    if between is None:
        return {
            "level": "link",
            "conclusion": "nodes",
            "nodes": list(pair),
            "reason": "%s and %s are slow together though each passes with others, and share every topology domain: the path between the two nodes"
            % (first, second),
            "links": [{"key": None, "domains": [], "nodes": list(pair)}],
            "jobs": 0,
        }
    return {
        "level": "link",
        "conclusion": "found",
        "nodes": list(pair),
        "reason": "%s+%s slow though each passes with others: the link between %s %s and %s"
        % (first, second, between["key"], between["domains"][0], between["domains"][1]),
        "links": [dict(between, nodes=list(pair))],
        "jobs": 0,
    }


def _group_links(nodes, labels, keys, results, pairs=()):
    """The links probe of a run whose nodes all passed in pairs: (its conclusion or None, the jobs still to run).

    The run's nodes are split by the first topology label with two or more values; each group of two or more nodes
    runs alone. A group slow alone: the fault is inside it. Two groups that pass alone: the link between them (the
    whole failed). More groups: one pair across each two domains (a pair of the node rounds that spanned them
    counts), the slow ones name the links."""
    if labels is None:
        return {"level": "link", "conclusion": "undetermined", "reason": "the nodes' labels could not be read", "links": [], "jobs": 0}, []
    key, groups = split_by_domain(nodes, labels, keys)
    if key is None:
        return {
            "level": "link",
            "conclusion": "not_probed",
            "reason": "the run's nodes share every topology domain: no two groups to tell apart",
            "links": [],
            "jobs": 0,
        }, []
    runs = _of(results, "links", key=key)
    ran = dict((r["probe"]["domain"], r) for r in runs if "domain" in r["probe"])
    todo = [
        {"nodes": members, "env": [], "probe": {"kind": "links", "key": key, "domain": value}}
        for value, members in sorted(groups.items())
        if len(members) >= 2 and value not in ran
    ]
    if todo:
        return None, todo
    evidence = [dict(_evidence(ran[value]), domain=value) for value in sorted(groups) if value in ran]
    slow = [value for value in sorted(groups) if value in ran and ran[value]["verdict"] in SLOW]
    if len(slow) == 1 and len(groups[slow[0]]) > 2:
        # One group slow alone: the fault is inside it; its own domains (the next labels) are split the same way.
        inner, jobs = _group_links(groups[slow[0]], labels, keys[keys.index(key) + 1 :], results, pairs)
        if inner is None or inner["conclusion"] in ("found", "inside"):
            if inner is not None:
                inner = dict(inner, runs=evidence + inner.get("runs", []), jobs=len(runs) + inner["jobs"])
            return inner, jobs
    if slow:
        return {
            "level": "link",
            "conclusion": "inside",
            "reason": "the group of %s %s is slow alone: the fault is inside that domain, not between domains" % (key, ", ".join(slow)),
            "links": [],
            "runs": evidence,
            "jobs": len(runs),
        }, []
    if any(run["verdict"] == "error" for run in ran.values()):
        return {"level": "link", "conclusion": "undetermined", "reason": "a group's run gave no result", "links": [], "runs": evidence, "jobs": len(runs)}, []
    domains = sorted(groups)
    if len(domains) == 2:
        return {
            "level": "link",
            "conclusion": "found",
            "reason": "each %s group passes alone (%s) but the run over all failed: the link between %s"
            % (key, "; ".join("%s: %s" % (value, _text(ran[value])) for value in domains if value in ran) or "one node each", " and ".join(domains)),
            "links": [{"key": key, "domains": domains, "groups": dict((value, groups[value]) for value in domains)}],
            "runs": evidence,
            "jobs": len(runs),
        }, []
    domain_of = dict((node, value) for value, members in groups.items() for node in members)
    crossed = {}
    for result in list(pairs) + [r for r in runs if "domains" in r["probe"]]:
        spanned = sorted(set(domain_of.get(node) for node in result["nodes"]) - {None})
        if len(spanned) == 2:
            crossed.setdefault(tuple(spanned), result)
    todo, used = [], set()
    for index, first in enumerate(domains):
        for second in domains[index + 1 :]:
            if (first, second) in crossed:
                continue
            a = next((n for n in groups[first] if n not in used), groups[first][0])
            b = next((n for n in groups[second] if n not in used), groups[second][0])
            used.update((a, b))
            todo.append({"nodes": [a, b], "env": [], "probe": {"kind": "links", "key": key, "domains": [first, second]}})
    if todo:
        return None, todo
    slow_links = sorted(link for link, result in crossed.items() if result["verdict"] in SLOW)
    evidence += [dict(_evidence(result), domains=list(link)) for link, result in sorted(crossed.items())]
    if not slow_links:
        return {
            "level": "link",
            "conclusion": "not_reproduced",
            "reason": "every %s group passes alone and every pair across two of them passes: no link between two domains is slow in pairs" % key,
            "links": [],
            "runs": evidence,
            "jobs": len(runs),
        }, []
    return {
        "level": "link",
        "conclusion": "found",
        "reason": "slow across %s %s, good within each and across the others: the link(s) between them"
        % (key, "; ".join("%s - %s (%s)" % (link[0], link[1], _text(crossed[link])) for link in slow_links)),
        "links": [{"key": key, "domains": list(link), "nodes": list(crossed[link]["nodes"])} for link in slow_links],
        "runs": evidence,
        "jobs": len(runs),
    }, []


def summary(parts):
    """One line of the parts found, for the cluster's reason ("" when none was found)."""
    found = []
    for part in parts:
        if part["level"] == "path" and part["conclusion"] in ("nvlink", "fabric", "both"):
            found.append("%s %s" % (part["node"], part["conclusion"]))
        elif part["level"] == "nic" and part["conclusion"] == "found":
            found.append("%s NIC %s" % (part["node"], ", ".join(part["nics"])))
        elif part["level"] == "link" and part["conclusion"] == "found":
            found.extend("link %s %s" % (link["key"], " - ".join(link["domains"])) for link in part["links"])
    return ", ".join(found)
