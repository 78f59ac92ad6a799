"""The GPUs under the server, from NVIDIA's DCGM exporter (``--gpu-metrics URL``), per stage.

dcgm-exporter publishes one series per GPU (label ``gpu``). A stage reports utilisation as the
mean over GPUs (a node is as busy as its GPUs on average), memory and power as sums (the
deployment's), each as mean and max over the stage's scrapes. Energy is the increase of the
energy counter over the stage (``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION``, mJ) when the exporter
has it, else mean power times the scrapes' window; divided by the output tokens the client
read in the stage's window it is the energy per token. The scrapes' window and the client's
differ by a poll (milliseconds in a window of seconds).
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.results.summary_stage import GpuStage, MeanMax
from llmload.target.promtext import Sample
from llmload.target.scrape import Snapshot

_UTIL = "DCGM_FI_DEV_GPU_UTIL"
_MEMORY = "DCGM_FI_DEV_FB_USED"
_POWER = "DCGM_FI_DEV_POWER_USAGE"
_ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"


def reduce(samples: Sequence[Sample], t_s: float, bad_lines: int = 0) -> Snapshot:
    by_name: dict[str, list[float]] = {}
    gpus: set[str] = set()
    for s in samples:
        name = s.name.removesuffix("_total")  # the parser names a counter as OpenMetrics does
        if name in (_UTIL, _MEMORY, _POWER, _ENERGY):
            by_name.setdefault(name, []).append(s.value)
            gpus.add(s.label("gpu") or s.label("UUID") or "")
    values: dict[str, float] = {"gpus": float(len(gpus))}
    if util := by_name.get(_UTIL):
        values["util_pct"] = sum(util) / len(util)
    for key, name in (("memory_used_mib", _MEMORY), ("power_w", _POWER), ("energy_mj", _ENERGY)):
        if found := by_name.get(name):
            values[key] = sum(found)
    return Snapshot(t_s, values, bad_lines)


def _mean_max(samples: Sequence[Snapshot], key: str) -> MeanMax | None:
    seen = [s.values[key] for s in samples if key in s.values]
    return MeanMax(mean=round(sum(seen) / len(seen), 3), max=round(max(seen), 3)) if seen else None


def summarize(
    first: Snapshot, last: Snapshot, samples: Sequence[Snapshot], output_tokens: int
) -> GpuStage | None:
    """The stage's GPUs from its scrapes (``first`` and ``last`` bound it); None when the
    endpoint carried no DCGM metric at all."""
    gauges = list(samples) or [first, last]
    gpus = int(max(s.values.get("gpus", 0) for s in gauges))
    if not gpus:
        return None
    window_s = last.t_s - first.t_s
    power = _mean_max(gauges[1:] or gauges, "power_w")  # a gauge's value covers the interval before it
    energy: float | None = None
    if "energy_mj" in first.values and "energy_mj" in last.values:
        delta = last.values["energy_mj"] - first.values["energy_mj"]
        energy = delta / 1e3 if delta >= 0 else None  # a counter that went back: the exporter restarted
    elif power is not None and window_s > 0:
        energy = power.mean * window_s
    return GpuStage(
        gpus=gpus,
        util_pct=_mean_max(gauges[1:] or gauges, "util_pct"),
        memory_used_mib=_mean_max(gauges, "memory_used_mib"),
        power_w=power,
        energy_j=None if energy is None else round(energy, 3),
        joules_per_output_token=None
        if energy is None or output_tokens <= 0
        else round(energy / output_tokens, 6),
    )
