"""What the catalogue's gpu-burn workload prints on a fleet node (templates/workloads/gpu-burn.yaml, the role's gpu
stage): the lines of _lib/workloads/gpu-burn.py.j2, one per GPU with its index and UUID, its bf16 matmul TFLOPS and
memory copy GB/s.

Every GPU reaches its architecture's published measurement (`expected` of _lib/gpu-thresholds.yaml), within 1 %
(a spread fixed per node and GPU); a GPU the fleet spec's `slow_gpus: {<node>: [<index>, ...]}` lists for the node
(its name or `<cluster>-gpu-<i>`) multiplies at SLOW_FACTOR of it (a throttled GPU: below the fail threshold and
far below its siblings' median, NVML's HW thermal slowdown among its reasons at a lower SM clock and a higher
temperature), its memory copy unchanged. Every GPU prints its products, the memory its buffers filled and its
clocks, power, temperature and throttle reasons (a healthy GPU at full load: its power cap). An architecture without
a record prints FALLBACK.
A GPU's UUID is fixed by its node's name and its index (gpu_uuid), so a test can name it.
"""

import hashlib
from pathlib import Path

import yaml

THRESHOLDS = Path(__file__).resolve().parent.parent.parent / "_lib" / "gpu-thresholds.yaml"
SLOW_FACTOR = 0.6
FALLBACK = {"tflops": 1000.0, "gbps": 5000.0}
MARKER = "gpufleet-burnin gpu-burn on"


def is_gpu_burn(words):
    """Whether the pod's command words are the gpu-burn workload's script."""
    return MARKER in " ".join(words)


def gpu_uuid(node, index):
    digest = hashlib.sha256(("%s/%d" % (node, index)).encode()).hexdigest()
    return "GPU-%s-%s-%s-%s-%s" % (digest[:8], digest[8:12], digest[12:16], digest[16:20], digest[20:32])


def expected(gpu):
    data = yaml.safe_load(THRESHOLDS.read_text())
    records = (data.get("architectures") or {}).get(gpu) or {}
    return dict((figure, float((records.get(figure) or {}).get("expected") or FALLBACK[figure])) for figure in FALLBACK)


def gpu_log(host, node, gpus, gpu, slow=()):
    """The pod's log: the workload's header line, one line per GPU, its end line."""
    slow = set(int(index) for index in slow or ())
    base = expected(gpu)
    prefix = "# gpufleet-burnin gpu-burn on %s:" % host
    lines = ["%s %d GPUs, torch 2.10.0a0+stand-in, bf16 matmul 8192x8192 for 120 s on 90 %% of free memory, copy 1073741824 bytes x 50, nvml" % (prefix, gpus)]
    for index in range(gpus):
        jitter = 1.0 + (int(hashlib.sha256(("%s/%d" % (node, index)).encode()).hexdigest()[:4], 16) % 201 - 100) / 10000.0
        tflops = base["tflops"] * jitter * (SLOW_FACTOR if index in slow else 1.0)
        products = int(tflops * 1e12 * 120 / (2.0 * 8192**3)) // 10 * 10
        telemetry = (
            "sm_mhz 1140 power_w 512.0 temp_c 91 throttle sw_power_cap,hw_thermal_slowdown"
            if index in slow
            else "sm_mhz 1980 power_w 699.0 temp_c 68 throttle sw_power_cap"
        )
        lines.append(
            "%s gpu %d uuid %s tflops %.1f gbps %.1f errors 0 products %d mem_gib 71.8 %s"
            % (prefix, index, gpu_uuid(node, index), tflops, base["gbps"] * jitter, products, telemetry)
        )
    lines.append("%s done, %d of %d GPUs measured" % (prefix, gpus, gpus))
    return "\n".join(lines) + "\n"
