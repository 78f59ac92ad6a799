"""What the simulator says about itself: the endpoints a client uses to recognise an engine.

A ``vllm`` profile answers ``/version`` as vLLM does and has no ``/get_server_info`` (404, as on
vLLM); one with launch arguments also serves them as vLLM's development-mode ``/server_info``
(``vllm-eagle3`` shows its ``speculative_config``). An ``sglang`` profile answers
``/get_server_info`` with its launch arguments (so ``sglang-nograph`` shows
``disable_cuda_graph: true``) and ``/version`` as SGLang does.
"""

from __future__ import annotations

import dataclasses

from llmload.sim.config import SimConfig
from llmload.sim.jsonvalue import JSON


def version(config: SimConfig) -> dict[str, JSON]:
    return {"version": config.profile.version}


def models(config: SimConfig, created: int) -> dict[str, JSON]:
    """The served models, the default first; adapters name it as ``parent``, as vLLM lists its
    LoRA modules."""
    data: list[JSON] = [
        {
            "id": name,
            "object": "model",
            "created": created,
            "owned_by": config.profile.engine,  # as the imitated engine answers
            "root": name,
            "parent": None if name == config.model else config.model,
            "max_model_len": 131072,
        }
        for name in config.served_models
    ]
    return {"object": "list", "data": data}


def sim_settings(config: SimConfig) -> dict[str, JSON]:
    """The simulator's own parameters, for anyone who wants to know what they are talking to."""
    timing = dataclasses.asdict(config.timing) if config.timing else None
    return {
        "profile": config.profile.name,
        "params": None if timing else dataclasses.asdict(config.params),
        "fixed_timing": timing,
        "seed": config.seed,
        "reasoning_tokens": config.reasoning_tokens,
        "tokens_per_word": str(config.tokens_per_word),
        "served_models": list(config.served_models),
        "adapter_switch_ns": config.adapter_switch_ns,
        "replicas": config.replicas,
        "router": config.router,
        "session_header": config.session_header,
    }


def server_info(config: SimConfig, port: int) -> dict[str, JSON] | None:
    """SGLang's ``/get_server_info``; None for engines that do not serve it."""
    if config.profile.engine != "sglang":
        return None
    info: dict[str, JSON] = {
        "model_path": config.model,
        "served_model_name": config.model,
        "host": config.host,
        "port": port,
        "max_running_requests": config.params.max_running,
        "max_total_num_tokens": config.params.kv_budget_tokens,
        "disable_cuda_graph": False,
        "disable_radix_cache": config.timing is not None or config.params.prefix_cache_tokens == 0,
        "version": config.profile.version,
    }
    info.update(dict(config.profile.launch_args))
    info["llmload_sim"] = sim_settings(config)
    return info


def vllm_server_info(config: SimConfig) -> dict[str, JSON] | None:
    """vLLM's ``/server_info`` (served with ``VLLM_SERVER_DEV_MODE=1``), its config as JSON
    sections; None for a profile without launch arguments, as vLLM outside development mode."""
    if config.profile.engine != "vllm" or not config.profile.launch_args:
        return None
    return {"vllm_config": dict(config.profile.launch_args), "llmload_sim": sim_settings(config)}
