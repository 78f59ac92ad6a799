"""The run's tenants as one process sends them (``--tenants``): each request's tenant, drawn by
weight, and its prompt from the tenant's own lengths."""

from __future__ import annotations

from dataclasses import replace

from llmload.config.asked import WorkloadConfig
from llmload.config.tenants import Tenant, pick
from llmload.run.sources import prompt_source
from llmload.workload.prompts import Prompt, PromptSource


class Tenancy:
    """Built once per process: a prompt source per tenant that sets its own lengths, the run's
    for the others."""

    def __init__(self, workload: WorkloadConfig, prompts: PromptSource) -> None:
        self._tenants = workload.tenants
        self._seed = workload.seed
        self._prompts = {t.name: _source(workload, t) or prompts for t in self._tenants}

    def next(self, user_index: int, request_index: int) -> tuple[Tenant, Prompt]:
        tenant = pick(self._tenants, self._seed, user_index, request_index)
        return tenant, self._prompts[tenant.name].get(user_index, request_index)


def _source(workload: WorkloadConfig, tenant: Tenant) -> PromptSource | None:
    if tenant.prompt_tokens is None and tenant.max_tokens is None:
        return None
    own = workload
    if tenant.prompt_tokens is not None:
        own = replace(own, prompt_tokens=tenant.prompt_tokens, prompt_lengths=None)
    if tenant.max_tokens is not None:
        own = replace(own, max_tokens=tenant.max_tokens, output_lengths=None, output_jitter=0.0)
    return prompt_source(own)
