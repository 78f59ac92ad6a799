"""The warning that prompts meant to be unique were answered from a prefix cache, and the
workloads whose prompts are not meant to be."""

from __future__ import annotations

from dataclasses import replace

from llmload.config.asked import WorkloadConfig
from llmload.results.build import cache_warning
from llmload.workload.agents import AgentSpec


def test_recorded_agent_sessions_share_their_prompts_by_design() -> None:
    synthetic = WorkloadConfig()
    said = cache_warning(0.96, synthetic, "usage")
    assert said is not None and said.startswith("usage: the prefix cache served 96%")
    assert cache_warning(0.4, synthetic, "usage") is None
    # tau-bench's sessions share a 1,000-word policy and 14 tools, and each is replayed again
    replay = replace(synthetic, agent=AgentSpec(trace="sessions.jsonl"))
    assert cache_warning(0.96, replay, "usage") is None
