"""An NVIDIA DCGM exporter's view of the simulated GPU, so ``--gpu-metrics`` has ground truth.

The model is the simplest that behaves like a GPU under a serving engine: it draws ``IDLE_W``
watts while no step runs and ``BUSY_W`` while one does, so its energy since start is exact from
two totals, ``IDLE_W * elapsed + (BUSY_W - IDLE_W) * busy`` (busy: the steps finished so far).
Utilisation is the share of the last second spent in steps, which is what DCGM's ``GPU_UTIL``
measures over its sampling interval (the share of time a kernel ran), and power follows it; a
gauge of the last second, not of the time since the last scrape, so two scrapers of one
endpoint do not disturb each other. Memory is the weights plus the KV cache in use. Only the
batching model has steps: under fixed timing the GPU reads idle.

Names, units and labels are dcgm-exporter's: ``DCGM_FI_DEV_GPU_UTIL`` (%),
``DCGM_FI_DEV_FB_USED`` (MiB), ``DCGM_FI_DEV_POWER_USAGE`` (W) and
``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` (mJ since the driver loaded), labelled by ``gpu``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from llmload.sim.truth import Truth

IDLE_W = 90.0
BUSY_W = 600.0
WEIGHTS_MIB = 16_000.0
KV_POOL_MIB = 60_000.0


_SAMPLE_NS = 1_000_000_000  # the utilisation gauge's interval


class SimGpu:
    def __init__(self, truth: Truth, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self._truth = truth
        self._clock = clock
        self._start_ns = clock()

    def energy_mj(self, now_ns: int) -> float:
        elapsed_s = (now_ns - self._start_ns) / 1e9
        return (IDLE_W * elapsed_s + (BUSY_W - IDLE_W) * self._truth.busy_ns_total / 1e9) * 1e3

    def _busy_share(self, now_ns: int) -> float:
        """The share of the last second that steps ran (steps are kept newest last)."""
        since = now_ns - _SAMPLE_NS
        busy = 0
        for end, _tokens, _lateness, duration in reversed(self._truth.steps):
            if end <= since:
                break
            busy += min(end, now_ns) - max(end - duration, since)
        return min(1.0, max(0, busy) / _SAMPLE_NS)

    def render(self, kv_usage: float) -> list[str]:
        now = self._clock()
        util = self._busy_share(now)
        labels = 'gpu="0",UUID="GPU-llmload-sim",modelName="llmload-sim"'
        rows = (
            ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", round(100 * util, 3)),
            ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
             round(WEIGHTS_MIB + KV_POOL_MIB * kv_usage, 1)),
            ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", IDLE_W + (BUSY_W - IDLE_W) * util),
            ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
             "Total energy consumption since boot (in mJ).", round(self.energy_mj(now), 3)),
        )  # fmt: skip
        lines = []
        for name, kind, help_text, value in rows:
            lines += [
                f"# HELP {name} {help_text}",
                f"# TYPE {name} {kind}",
                f"{name}{{{labels}}} {float(value)!r}",
            ]
        return lines
