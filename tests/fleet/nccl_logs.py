"""Container logs for the test fleet's pods: nccl-tests output as a real launcher prints it, and worker logs.

The test controller (controller.py) writes these into the fleet dir; the fake kubelet (fake_kubelet.py) serves
them, so `kubectl logs` / kubernetes.core.k8s_log read them through the real API server.

Launcher output follows nccl-tests 2.16.9's printf formats (src/util.cu: the version, start and device lines, the
three header lines, one row per size with `%12li  %12li  %8s  %6s  %6i` then per side `  %7s  %6.2f  %6.2f  %6s`,
the `# Out of bounds values` and `# Avg bus bandwidth` footer), with NCCL INFO lines before the table as mpirun
forwards them from the ranks (`<host>:<pid>:<tid> [<dev>] NCCL INFO ...`). Hostnames are the pods' hostnames
(`<trainjob>-node-0-<n>`), as in tests/unit/fixtures/nccl. Busbw follows a latency + bandwidth model that
reaches `peak_busbw` at the largest sizes.

Results (the spec's `nccl_log`, or the TrainJob annotation `gpufleet.test/nccl-log`):
    good             the whole sweep, peak busbw at the GPU's published level (PEAK_BUSBW)
    below-threshold  the whole sweep, peak at 60% of it, or `nccl_busbw`
    far-below        the whole sweep, peak at 25% of it
    truncated        cut in the middle of a row at three quarters of the sweep, then mpirun's abort naming the
                     last worker ("exited on signal 9 (Killed)"): the log of a rank killed mid-run
    none             the launcher prints nothing of nccl-tests (it never ran)
`nccl_busbw` (GB/s) pins the peak of any result.

Single-node output (the node stage: one process per pod runs `all_reduce_perf -g <gpus>` with no mpirun) is the
same printf format with one host and every rank's channel over P2P, at INTRA_NODE_BUSBW for the GPU, or the fleet
spec's `node_busbw` for that pod's node.

Transport (the spec's `nccl_transport`, or the TrainJob annotation `gpufleet.test/nccl-transport`): `expected` (the
default) prints the NCCL INFO lines of the transport the platform catalogue expects for the platform and GPU
(`Using network <net>`, the plugin's own lines, channels `via NET/<net>/...`), with the strings NCCL and the plugins
print (plugins/module_utils/judging/transport.py names their sources); `socket` prints NCCL's silent fall back to its
socket transport (`NET/Socket : Using ...`, `Using network Socket`, `via NET/Socket/0`), at the busbw TCP reaches;
`nvlink` (the agent's NVLink-only run on one NVLink domain, never a spec's choice) the socket net NCCL_NET=Socket
names, every channel over the multi-node NVLink (`via P2P/MNNVL`, NVIDIA/nccl src/transport/p2p.cc) and none via
NET, at the MNNVL busbw.
These lines are what the vendors' recipes and NCCL print, not a proof that the ranks load the plugin: that every rank
gets the platform's environment and finds the plugin directory first on its library path is proven apart, with real
Open MPI and sshd, by tests/e2e/test_mpi_launch.py; that the plugin then loads and prints them stays the vendors'
word (docs/platforms/mpi-launch.md).

Replays (the spec's `nccl_replay`, or the TrainJob annotation `gpufleet.test/nccl-replay`): instead of the model
above, the launcher prints what real clusters printed: published documents of the corpus tests/fixtures/real/nccl
(PROVENANCE.md names their sources), verbatim and in order (REPLAYS), with one change: each document's hosts
(REPLAY_HOSTS, in the order they first appear) take the fleet's worker hostnames in turn, so the verdict names the
fleet's pods and nodes. `healthy` picks the replay of the transport the platform catalogue expects (HEALTHY).
"""

import hashlib
import re
import shlex
from pathlib import Path

RESULTS = ("good", "below-threshold", "far-below", "truncated", "none")
# Peak out-of-place busbw (GB/s) of a healthy 2-node all_reduce, per GPU: AWS p5 443.7 (awsome-distributed-training),
# A3 Mega ~340, ND H100 v5 ~450, GB200 network-only (no MNNVL) ~45; other GPUs a plausible level.
PEAK_BUSBW = {"h100": 441.9, "h200": 452.3, "b200": 631.2, "gb200": 47.8, "gb300": 388.0, "a100": 186.4}
PEAK_BUSBW_PLATFORM = {("gcp", "h100"): 337.6, ("azure", "h100"): 452.0}
# With multi-node NVLink the busbw is NVLink's: GB200 NVL72 834.6 (coreweave/nccl-tests), GB300 ~895 (AICR).
PEAK_BUSBW_MNNVL = {"gb200": 812.5, "gb300": 889.1}
FACTOR = {"below-threshold": 0.6, "far-below": 0.25}
# A healthy pair's busbw with NVLink off (NCCL_P2P_DISABLE=1: every byte through the NICs) beside its whole run's: the
# NICs' line rate over the published 2-node figure, GCP A3 Mega's 8 x 200 Gb/s (200 GB/s) over its 2x8 H100
# all_reduce's 338.8 GB/s (tests/fixtures/real/nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log): below the 2-node
# thresholds, which are taken from runs with NVLink ("On two nodes, NCCL uses the tree (or nvlstree) algorithm which
# can indeed go beyond the network bottleneck", NVIDIA/nccl-tests#196).
NETWORK_ONLY = 0.59
# A healthy node's own all_reduce over all its GPUs (the node stage: all_reduce_perf -g <gpus>, one process, no
# network): NVLink/NVSwitch busbw per GPU, a little above the single-node thresholds of _lib/thresholds.yaml (H100 ~480
# with NVLS per NVIDIA/nccl-tests#212; the others plausible levels of the same records).
INTRA_NODE_BUSBW = {"h100": 482.6, "h200": 476.3, "b200": 836.2, "gb200": 712.4, "gb300": 715.8, "a100": 236.1}
GPU_NAMES = {
    "h100": "NVIDIA H100 80GB HBM3",
    "h200": "NVIDIA H200",
    "b200": "NVIDIA B200",
    "gb200": "NVIDIA GB200",
    "gb300": "NVIDIA GB300",
    "a100": "NVIDIA A100-SXM4-80GB",
}
TRANSPORTS = ("expected", "socket")
# The NICs each transport's NIC list names (four per node, as the InfiniBand one): EFA devices of the form aws-ofi-nccl
# names them (`GUID of rdmap16s27`, tests/fixtures/real/nccl-nics), the GPU NICs GKE's GPUDirect recipes give the pods
# (eth1.., GoogleCloudPlatform/container-engine-accelerators gpudirect-tcpx/nccl-test-latest.yaml).
# EFA: a P5's 32 EFA devices in aws-ofi-nccl's 8 groups of 4, one NCCL device per group (one per GPU), named by the
# group's first device; PCI addresses 0000:<bus>:00.0, named rdmap<bus in decimal>s0 (rdma-core's PCI naming,
# tests/fixtures/real/nccl-nics/PROVENANCE.md).
EFA_BUSES = [[0x30 + 0x10 * group + device for device in range(4)] for group in range(8)]
EFA_GROUPS = [["rdmap%ds0" % bus for bus in buses] for buses in EFA_BUSES]
NICS = {
    "ib": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
    "efa": [name for group in EFA_GROUPS for name in group],
    "tcpx": ["eth1", "eth2", "eth3", "eth4"],
    "tcpxo": ["eth1", "eth2", "eth3", "eth4"],
}
# Per transport id of the platform catalogue: the net's name and the plugin lines each rank prints before it, with the
# NIC lists as the code that prints them formats them: aws-ofi-nccl's `GUID of %s: %016lx` per device
# (src/platform-aws.cpp), GPUDirect-TCPX's `NET/GPUDirectTCPX : Using` with ` [%d]%s:%s` per NIC (src/connect.cc),
# FasTrak's `Using ` with `[%d]%s:%s` per NIC and no blank between (tcpdirect_plugin/fastrak_offload/common.cc).
NETS = {
    "efa": (
        "Libfabric",
        ["NET/Plugin: Loaded net plugin Libfabric (v10)", "NET/OFI Selected provider is efa, fabric is efa-direct (found %d nics)" % len(NICS["efa"])]
        + ["NET/OFI NIC group %d device #%d 0000:%02x:00.0" % (g, d, bus) for g, buses in enumerate(EFA_BUSES) for d, bus in enumerate(buses)]
        + ["NET/OFI GUID of %s: %016x" % (group[0], 0x9131BA5D0000F700 + i) for i, group in enumerate(EFA_GROUPS)],
    ),
    "tcpxo": (
        "FasTrak",
        [
            "NET/FasTrak 2026-11-30T07:12:01.120394-08:00: Initializing network FasTrak, version: 1.0.21",
            "NET/FasTrak 2026-11-30T07:12:01.120817-08:00: Using "
            + "".join("[%d]%s:10.%d.%%(node)d.2<0>" % (i, nic, 10 + i) for i, nic in enumerate(NICS["tcpxo"])),
        ],
    ),
    "gib": ("gIB", ["NET/gIB : Initializing gIB v1.0.5"]),
    "tcpx": (
        "GPUDirectTCPX_v7",
        [
            "NET/GPUDirectTCPX/CUDA : cuDevices count 8",
            "NET/GPUDirectTCPX : Using" + "".join(" [%d]%s:10.%d.%%(node)d.2<0>" % (i, nic, 10 + i) for i, nic in enumerate(NICS["tcpx"])),
        ],
    ),
    "ib": ("IB", ["NET/IB : Using " + "".join("[%d]%s:1/IB " % (i, nic) for i, nic in enumerate(NICS["ib"])) + "; OOB eth0:10.244.%(node)d.17<0>"]),
    "socket": ("Socket", ["NET/IB : No device found.", "NET/Socket : Using [0]eth0:10.244.%(node)d.17<0>"]),
}
# The variable each transport's run uses to limit a run to some NICs (_lib/nccl/isolation.yaml, copied: the fleet
# does not import the collection): (name, the value that allows every NIC, whether an exact list starts with "=").
NIC_VARIABLES = {"ib": ("NCCL_IB_HCA", "", True), "efa": ("FI_EFA_IFACE", "all", False)}
# The platform/GPU's transport as _lib/platforms/<platform>/platform.yaml's default shapes name it (copied: the fleet
# does not import the collection); anything else: ib.
EXPECTED = {("aws", "gb300"): "ib", ("gcp", "h100"): "tcpxo", ("gcp", "h200"): "gib", ("gcp", "b200"): "gib", ("gcp", "gb200"): "gib"}
EXPECTED_PLATFORM = {"aws": "efa"}
SOCKET_BUSBW = 3.1  # what the AWS H100 pair reached over TCP
GPUS_PER_NODE = {"gb200": 4, "gb300": 4}
BUS_IDS = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text, default):
    m = re.match(r"^(\d+)([KMGT]?)$", str(text or "").strip(), re.I)
    if not m:
        return default
    return int(m.group(1)) * _SUFFIX.get(m.group(2).upper(), 1)


def trainer_words(trainjob):
    """The TrainJob's command and args as words (a `bash -c` script is split like the shell would)."""
    trainer = (trainjob.get("spec") or {}).get("trainer") or {}
    words = []
    for item in list(trainer.get("command") or []) + list(trainer.get("args") or []):
        item = str(item)
        if "\n" in item or " " in item:
            try:
                words.extend(shlex.split(item, comments=False))
            except ValueError:
                words.extend(item.split())
        else:
            words.append(item)
    return words


def nccl_command(trainjob):
    """{program, collective, min_bytes, max_bytes, step, iters, warmup} of the nccl-tests run, or None."""
    words = trainer_words(trainjob)
    # The NGC images' binaries carry nccl-tests' MPI suffix (all_reduce_perf_mpi: _lib/images.yaml).
    program = next((w.rsplit("/", 1)[-1] for w in words if re.search(r"(^|/)[a-z_]+_perf(_mpi)?$", w)), None)
    if not program:
        return None
    at = max(i for i, w in enumerate(words) if w.endswith(program))
    opts = {}
    rest = words[at + 1 :]
    for i, w in enumerate(rest[:-1]):
        if w in ("-b", "-e", "-f", "-n", "-w", "-c", "-g"):
            opts[w] = rest[i + 1]
    return {
        "program": program,
        "collective": re.sub(r"_perf(_mpi)?$", "", program),
        "min_bytes": parse_size(opts.get("-b"), 8),
        "max_bytes": parse_size(opts.get("-e"), 1 << 30),
        "step": max(2, int(opts.get("-f", 2)) if str(opts.get("-f", "2")).isdigit() else 2),
        "iters": int(opts["-n"]) if str(opts.get("-n", "")).isdigit() else 20,
        "warmup": int(opts["-w"]) if str(opts.get("-w", "")).isdigit() else 5,
        "check": int(opts["-c"]) if str(opts.get("-c", "")).isdigit() else 1,
        # GPUs per process: 1 under mpirun; the node stage's single process drives every local GPU.
        "gpus": int(opts["-g"]) if str(opts.get("-g", "")).isdigit() else 1,
    }


def _jitter(seed, spread):
    h = int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return 1.0 + (h - 0.5) * 2 * spread


def _time(us):
    return "%7.2f" % us if us < 10000 else "%7.1f" % us


def peak_for(result, platform, gpu, busbw=None, mnnvl=False):
    if busbw is not None:
        return float(busbw)
    base = PEAK_BUSBW_PLATFORM.get((platform, gpu), PEAK_BUSBW.get(gpu, 200.0))
    if mnnvl and gpu in PEAK_BUSBW_MNNVL:
        base = PEAK_BUSBW_MNNVL[gpu]
    return round(base * FACTOR.get(result, 1.0), 1)


def intra_node_busbw(gpu):
    """The peak busbw of a healthy node's own all_reduce (INTRA_NODE_BUSBW)."""
    return INTRA_NODE_BUSBW.get(gpu, 300.0)


def expected_transport(platform, gpu):
    return EXPECTED.get((platform, gpu)) or EXPECTED_PLATFORM.get(platform) or "ib"


def nics_used(env, platform, gpu):
    """The NICs of the platform's transport a run with ENV may use (every NIC unless its NIC variable lists some)."""
    net = expected_transport(platform, gpu)
    nics = NICS.get(net, [])
    name, every, exact = NIC_VARIABLES.get(net, (None, None, False))
    value = env.get(name, every) if name else every
    if not name or value == every:
        return list(nics)
    if exact and not value.startswith("="):
        return list(nics)  # a prefix list: not what the isolation sets; every NIC may match
    return [nic for nic in nics if nic in value.lstrip("=").split(",")]


def opened_nics(net_lines, net_id, nics):
    """NET_LINES of the transport NET_ID as a run limited to NICS (a subset of NICS[net_id]) prints them: NCCL's
    `NET/IB : Using` line lists only those (numbered from 0), aws-ofi-nccl prints a GUID line for each of them only."""
    if net_id == "ib":
        return ["NET/IB : Using " + "".join("[%d]%s:1/IB " % (i, nic) for i, nic in enumerate(nics)) + "; OOB eth0:10.244.%(node)d.17<0>"]
    if net_id == "efa":
        # aws-ofi-nccl on the devices FI_EFA_IFACE leaves: the groups of those, renumbered, a GUID line per group.
        groups = [[(bus, name) for bus, name in zip(buses, names) if name in nics] for buses, names in zip(EFA_BUSES, EFA_GROUPS)]
        groups = [group for group in groups if group]
        return (
            [net_lines[0], "NET/OFI Selected provider is efa, fabric is efa-direct (found %d nics)" % len(nics)]
            + ["NET/OFI NIC group %d device #%d 0000:%02x:00.0" % (g, d, bus) for g, group in enumerate(groups) for d, (bus, unused) in enumerate(group)]
            + ["NET/OFI GUID of %s: %016x" % (group[0][1], 0x9131BA5D0000F700 + i) for i, group in enumerate(groups)]
        )
    return net_lines


# The NCCL of the nccl-tests images the catalogue names (ncclv2.27.7, built for CUDA 12.9).
NCCL_VERSION = "2.27.7+cuda12.9"


def launcher_log(
    result,
    hosts,
    gpus_per_node,
    platform,
    gpu,
    cmd,
    busbw=None,
    seed="",
    finished=True,
    mnnvl=False,
    transport="expected",
    nics=None,
    network_only=False,
    nccl_version=None,
):
    """The launcher's log text for `result` (see RESULTS). `hosts`: the worker pods' hostnames, in rank order.

    `finished` False gives what a running launcher has printed so far (up to the middle of the sweep). `transport`:
    `expected` or `socket` (see TRANSPORTS). `nics`: the NICs of the transport a run limited to some may use (the
    isolation's one-NIC runs, nics_used): its NIC list names only those, and its busbw is their share of the pair's
    (a pair's traffic is spread over every NIC: 46-48 GB/s per NDR NIC, NVIDIA/nccl-tests#290). `network_only`: the
    run turned NVLink off (NCCL_P2P_DISABLE=1): NETWORK_ONLY of its busbw, what its NICs carry. `nccl_version`: the
    version NCCL's INFO line prints (default NCCL_VERSION, the image's).
    """
    if result == "none" or cmd is None:
        return "+ mpirun: nccl-tests did not run\n" if result == "none" else ""
    nranks = max(1, len(hosts) * gpus_per_node)
    net_id = "socket" if transport in ("socket", "nvlink") else expected_transport(platform, gpu)
    net_name, net_lines = NETS[net_id]
    if transport == "socket" and busbw is None:
        busbw = SOCKET_BUSBW
    peak = peak_for(result, platform, gpu, busbw, mnnvl)
    if network_only:
        peak = round(peak * NETWORK_ONLY, 1)
    if nics is not None and NICS.get(net_id) and transport == "expected":
        net_lines = opened_nics(net_lines, net_id, nics)
        peak = round(peak * len(nics) / len(NICS[net_id]), 1)
    coll = cmd["collective"]
    factor = {
        "all_reduce": 2.0 * (nranks - 1) / nranks,
        "reduce_scatter": (nranks - 1) / nranks,
        "all_gather": (nranks - 1) / nranks,
        "alltoall": (nranks - 1) / nranks,
    }.get(coll, 1.0) or 1.0
    redop = "sum" if coll in ("all_reduce", "reduce_scatter", "reduce") else "none"
    gpu_name = GPU_NAMES.get(gpu, "NVIDIA " + gpu.upper())
    lines = []
    first = hosts[0] if hosts else "localhost"
    pid0 = 57

    def info(host, pid, dev, text):
        lines.append("%s:%d:%d [%d] NCCL INFO %s" % (host, pid, pid, dev, text))

    info(first, pid0, 0, "Bootstrap : Using eth0:10.244.1.17<0>")
    info(first, pid0, 0, "cudaDriverVersion 12080")
    info(first, pid0, 0, "NCCL version %s" % (nccl_version or NCCL_VERSION))
    for n, host in enumerate(hosts):
        for dev in range(gpus_per_node):
            for text in net_lines:
                info(host, pid0 + n * 4 + dev, dev, text % {"node": n + 1} if "%(" in text else text)
            info(host, pid0 + n * 4 + dev, dev, "Using network %s" % net_name)
    # NCCL_DEBUG=INFO (the base env): every rank reports its rings and channels before the first collective.
    for n, host in enumerate(hosts):
        for dev in range(gpus_per_node):
            rank = n * gpus_per_node + dev
            pid = pid0 + n * 4 + dev
            info(
                host,
                pid,
                dev,
                "comm 0x55d1c3a0 rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"
                % (rank, nranks, len(hosts), gpus_per_node, dev, 1 if mnnvl else 0),
            )
            for channel in range(64 // max(gpus_per_node, 1)):
                peer = (rank + 1) % nranks
                if transport == "nvlink":
                    # src/transport/p2p.cc: "Channel %02d : %d[%d] -> %d[%d] via P2P/MNNVL%s" across the domain.
                    info(host, pid, dev, "Channel %02d : %d[%d] -> %d[%d] via P2P/MNNVL" % (channel, rank, dev, peer, peer % gpus_per_node))
                    continue
                via = "P2P/CUMEM" if peer // gpus_per_node == n else ("NET/Socket/0" if net_id == "socket" else "NET/%s/%d/GDRDMA" % (net_name, channel % 4))
                info(
                    host,
                    pid,
                    dev,
                    "Channel %02d/0 : %d[%d] -> %d[%d] %svia %s" % (channel, rank, dev, peer, peer % gpus_per_node, "[send] " if "NET" in via else "", via),
                )
            info(host, pid, dev, "Connected all rings, use ring PXN 0 GDR 1")
            info(
                host,
                pid,
                dev,
                "ncclCommInitRank comm 0x55d1c3a0 rank %d nranks %d cudaDev %d nvmlDev %d busId %s000 commId "
                "0x7d9c3ab1e4f2c610 - Init COMPLETE" % (rank, nranks, dev, dev, BUS_IDS[dev % len(BUS_IDS)]),
            )
    lines += [
        "# nccl-tests version 2.16.9 nccl-headers=22707 nccl-library=22707",
        "# Collective test starting: %s" % cmd["program"],
        "# nThread 1 nGpus %d minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0"
        % (cmd.get("gpus", 1), cmd["min_bytes"], cmd["max_bytes"], cmd["step"], cmd["warmup"], cmd["iters"], cmd["check"]),
        "#",
        "# Using devices",
    ]
    rank = 0
    for n, host in enumerate(hosts):
        for dev in range(gpus_per_node):
            lines.append(
                "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%s:00] %s" % (rank, pid0 + n * 4 + dev, host, dev, BUS_IDS[dev % len(BUS_IDS)], gpu_name)
            )
            rank += 1
    lines += [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
    ]
    sizes = []
    size = cmd["min_bytes"]
    while size <= cmd["max_bytes"]:
        sizes.append(size)
        size *= cmd["step"]
    cut = len(sizes) if finished and result != "truncated" else max(1, (len(sizes) * 3) // 4)
    latency = 38.0 if nranks > gpus_per_node else 12.0
    peak_algbw = peak / factor
    total, count_bw = 0.0, 0
    for index, size in enumerate(sizes[: cut + (1 if result == "truncated" and finished else 0)]):
        count = size // 4 // (nranks if coll == "all_gather" else 1)
        cells = []
        for side in ("oop", "ip"):
            us = (latency + size / (peak_algbw * 1e3)) * _jitter("%s/%s/%d" % (seed, side, size), 0.004)
            algbw = size / us / 1e3
            bus = algbw * factor
            total += bus
            count_bw += 1
            cells.append("  %7s  %6.2f  %6.2f  %6s" % (_time(us), algbw, bus, "0"))
        row = "%12d  %12d  %8s  %6s  %6d" % (size, max(count, 0), "float", redop, -1) + "".join(cells)
        if result == "truncated" and finished and index == cut:
            row = row[: len(row) - 26]  # the rank died while the in-place half of this row was being printed
        lines.append(row)
    if result == "truncated" and finished:
        victim = hosts[-1] if hosts else "localhost"
        lines += [
            "--------------------------------------------------------------------------",
            "Primary job  terminated normally, but 1 process returned",
            "a non-zero exit code. Per user-direction, the job has been aborted.",
            "--------------------------------------------------------------------------",
            "--------------------------------------------------------------------------",
            "mpirun noticed that process rank %d with PID 0 on node %s exited on signal 9 (Killed)." % (nranks - 1, victim),
            "--------------------------------------------------------------------------",
        ]
    elif finished:
        lines += [
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : %g " % (total / max(count_bw, 1)),
            "#",
            "# Collective test concluded: %s" % cmd["program"],
        ]
        info(first, pid0, 0, "comm 0x5611d8f0 rank 0 nranks %d cudaDev 0 busId 18000 - Destroy COMPLETE" % nranks)
        lines.append("#")
    return "\n".join(lines) + "\n"


CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "real"
# name -> the corpus documents the launcher prints, one after the other. A published INFO excerpt alone holds no
# result table, so a healthy run is the transport's INFO lines followed by a published complete, healthy 2-node table.
HEALTHY_TABLE = "nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log"
REPLAYS = {
    # NVIDIA/nccl#1357: HPC-X's RDMA plugin, `Using network IBext`, SHARP collnet: healthy InfiniBand.
    "ib-plugin": ["nccl/hpcx-ibext-sharp-collnet-info.log", HEALTHY_TABLE],
    # aws-ofi-nccl on P5en: `Selected Provider is efa`, `Using network Libfabric`: healthy EFA.
    "efa": ["nccl/aws-ofi-efa-p5en-libfabric-info.log", HEALTHY_TABLE],
    # aws/aws-k8s-tester#464: EKS workers where NCCL fell back to `Using network Socket`, `via NET/Socket/0`.
    "socket-fallback": ["nccl/eks-tag-output-indented-socket-fallback.log"],
    # aws-ofi-nccl on its tcp provider instead of EFA: a fall back inside the plugin.
    "ofi-tcp-fallback": ["nccl/aws-ofi-nccl2.4-provider-tcp-fallback.log"],
    # NVIDIA/nccl-tests#322: the table stops after 16 GiB, `Test NCCL failure` lines name the hosts, no footer.
    "crash": ["nccl/hca-all-reduce-crash-test-nccl-failure.log"],
    # IB completion errors (NCCL WARN ... error 4) on two of three hosts, no table.
    "ib-error": ["nccl/ib-completion-error-4-three-hosts.log"],
}
# The hosts each replayed document names, in the order they first appear (read off the text by hand; the unit test
# tests/unit/plugins/module_utils/test_fleet_replay.py checks that no other host name is left after the rewrite).
REPLAY_HOSTS = {
    "nccl/hpcx-ibext-sharp-collnet-info.log": ["qh100-gpu19", "qh100-gpu20"],
    "nccl/gcp-a3mega-all-reduce-2x8-h100-pass.log": ["ztan-mig-235z", "ztan-mig-gq73"],
    "nccl/aws-ofi-efa-p5en-libfabric-info.log": ["8h200-2", "8h200-3"],
    "nccl/eks-tag-output-indented-socket-fallback.log": ["multi-node-nccl-test-worker-0", "multi-node-nccl-test-worker-1"],
    "nccl/aws-ofi-nccl2.4-provider-tcp-fallback.log": ["ip-192-168-16-255", "ip-192-168-29-243"],
    "nccl/hca-all-reduce-crash-test-nccl-failure.log": ["HCA-128", "HCA-108", "HCA-107"],
    "nccl/ib-completion-error-4-three-hosts.log": ["H100-2", "H100-1", "H100-5"],
}
# `healthy`: the replay of the transport the platform catalogue expects (expected_transport); transports without a
# published excerpt in the corpus have none.
HEALTHY = {"ib": "ib-plugin", "efa": "efa"}


def replay_names():
    return tuple(sorted(REPLAYS)) + ("healthy",)


def replay_documents(name, platform=None, gpu=None):
    """The corpus documents (paths under CORPUS) of replay NAME; ValueError naming the allowed values."""
    if name == "healthy":
        net = expected_transport(platform, gpu)
        if net not in HEALTHY:
            raise ValueError("no published healthy %s output in the corpus for %s/%s (replays: %s)" % (net, platform, gpu, ", ".join(sorted(HEALTHY))))
        name = HEALTHY[net]
    if name not in REPLAYS:
        raise ValueError("nccl replay must be one of %s, got %r" % (", ".join(replay_names()), name))
    return list(REPLAYS[name])


def rewrite_hosts(text, sources, hosts):
    """TEXT with the i-th of SOURCES replaced by HOSTS[i % len(HOSTS)] wherever it stands as a whole host name."""
    if not hosts or not sources:
        return text
    mapping = dict((src, hosts[i % len(hosts)]) for i, src in enumerate(sources))
    # Longest first, so that one host name that is the prefix of another is not replaced inside it.
    pattern = re.compile(r"(?<![\w.-])(%s)(?![\w-])" % "|".join(re.escape(src) for src in sorted(mapping, key=len, reverse=True)))
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def replay_log(name, hosts, platform=None, gpu=None, finished=True):
    """The launcher's log for replay NAME (REPLAYS): the documents' text, their hosts rewritten to HOSTS (the worker
    pods' hostnames in rank order). `finished` False gives the first half of its lines (a launcher still running)."""
    parts = []
    for doc in replay_documents(name, platform, gpu):
        text = (CORPUS / doc).read_text(encoding="utf-8")
        parts.append(rewrite_hosts(text, REPLAY_HOSTS.get(doc, []), hosts))
    text = "".join(part if part.endswith("\n") else part + "\n" for part in parts)
    if not finished:
        lines = text.splitlines(True)
        text = "".join(lines[: max(1, len(lines) // 2)])
    return text


def worker_log(host, index):
    """What an MPI worker (sshd) prints."""
    return (
        "Server listening on 0.0.0.0 port 22.\nServer listening on :: port 22.\n"
        "Accepted publickey for root from 10.244.1.%d port %d ssh2: RSA SHA256:gpufleet-test\n" % (10 + index, 40122 + index)
    )


def plain_log(framework, host, rank, gpus_per_node, world, gpu, finished=True):
    """torch / exec workloads: what the catalog's torch-smoke and exec-example print."""
    if framework == "exec":
        lines = [
            "GPU %d: %s (UUID: GPU-%s)" % (i, GPU_NAMES.get(gpu, gpu), hashlib.sha256(("%s/%d" % (host, i)).encode()).hexdigest()[:8])
            for i in range(gpus_per_node)
        ]
        if finished:
            lines.append("# gpufleet-burnin exec-example on %s: %d GPUs, expected %d" % (host, gpus_per_node, gpus_per_node))
        return "\n".join(lines) + "\n"
    lines = []
    if finished:
        for local in range(gpus_per_node):
            lines.append("# gpufleet-burnin torch-smoke rank %d on %s: 0 wrong elements" % (rank * gpus_per_node + local, host))
        if rank == 0:
            peak = PEAK_BUSBW.get(gpu, 200.0) * 0.8
            lines.append(
                "# gpufleet-burnin torch-smoke: world %d, torch 2.8.0a0, NCCL (2, 27, 7), all_reduce 268435456 bytes: "
                "busbw %.2f GB/s, 0 wrong elements" % (world, peak)
            )
    return "\n".join(lines) + ("\n" if lines else "")


__all__ = [
    "INTRA_NODE_BUSBW",
    "RESULTS",
    "TRANSPORTS",
    "expected_transport",
    "nics_used",
    "intra_node_busbw",
    "launcher_log",
    "nccl_command",
    "plain_log",
    "replay_log",
    "replay_names",
    "worker_log",
    "peak_for",
]
