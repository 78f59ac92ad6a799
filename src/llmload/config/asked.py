"""What a run asks: each request (endpoint, model, stream, API, headers, the key) and the
workload its prompts come from (lengths, datasets, prefixes, conversations, agents, tenants,
images). ``RunConfig`` (``llmload.config.settings``) holds them with how the run goes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from llmload.config.apikey import DEFAULT_ENV
from llmload.config.tenants import Tenant
from llmload.errors import ConfigError
from llmload.protocol.jsonvalue import JSON
from llmload.workload.agents import AgentSpec
from llmload.workload.cancel import CancelSpec
from llmload.workload.conversations import ConversationSpec
from llmload.workload.images import ImageSpec
from llmload.workload.lengths import Length, require_output_jitter
from llmload.workload.prefixes import PrefixSpec

Endpoint = Literal["chat", "completions", "embeddings", "responses", "messages", "rerank"]
# Whether requests ask for the server's own timing of each (vLLM's include_metrics): auto asks
# when the target's /v1/models says vLLM serves it.
ServerTimingsChoice = Literal["auto", "on", "off"]
PATHS: Mapping[Endpoint, str] = MappingProxyType(
    {
        "chat": "/v1/chat/completions",
        "completions": "/v1/completions",
        "embeddings": "/v1/embeddings",
        "responses": "/v1/responses",  # OpenAI's Responses API
        "messages": "/v1/messages",  # Anthropic's Messages API
        "rerank": "/v1/rerank",  # Jina's and Cohere's shape, as vLLM, SGLang and llama.cpp serve it
    }
)
# The API the built-in chat users speak (--api); auto: the user class's own (chat)
ApiChoice = Literal["auto", "chat", "completions", "responses", "messages"]


# The session headers routers and gateways key on: AIPerf's default, Cloudflare Workers AI's
# and OpenCode's (X-Session-Affinity), and the common X-Session-ID (NeMo Gym, crush, Z.ai).
DEFAULT_SESSION_HEADERS = ("X-Session-Affinity", "X-Session-ID")


@dataclass(frozen=True, slots=True)
class RequestConfig:
    endpoint: Endpoint = "chat"
    model: str | None = None  # None: the first model the target lists at /v1/models
    stream: bool = True
    ignore_eos: bool = False
    extra_body: Mapping[str, JSON] = field(default_factory=lambda: MappingProxyType({}))
    extra_headers: tuple[tuple[str, str], ...] = ()
    api_key: str | None = field(default=None, repr=False)
    api_key_env: str = DEFAULT_ENV  # where the key came from: named in hints, never its value
    server_timings: ServerTimingsChoice = "auto"
    api: ApiChoice = "auto"
    # The headers that carry a session's key (agent and conversation scenarios), for a router
    # that keeps a session on one replica; empty: none sent.
    session_headers: tuple[str, ...] = DEFAULT_SESSION_HEADERS

    @property
    def path(self) -> str:
        return PATHS[self.endpoint]

    def api_for(self, endpoint: Endpoint) -> Endpoint:
        """The endpoint a built-in user sends to: ``--api`` replaces chat, nothing else."""
        return endpoint if self.api == "auto" or endpoint != "chat" else self.api


@dataclass(frozen=True, slots=True)
class WorkloadConfig:
    """What the requests ask (docs/workloads.md): lengths, prompts, prefixes, conversations."""

    prompt_tokens: int = 128  # fixed length; with prompt_lengths, the largest a prompt asks
    max_tokens: int | None = 128  # the same for outputs (lost-worker bounds use the largest)
    output_jitter: float = 0.0
    dataset: str | None = None
    seed: int = 0
    # Mixed into every prompt's unique salt: a new one per run (unless given), so a second run
    # never sends the prompts of the first and a server's prefix cache cannot answer it.
    salt: str = ""
    prefix_cache: bool = False
    # --prompt-tokens / --max-tokens given as a distribution; None: the fixed length above
    prompt_lengths: Length | None = None
    output_lengths: Length | None = None
    max_length: int = 32768  # the cap of normal and lognormal draws without their own
    prefix: PrefixSpec = field(default_factory=PrefixSpec)
    conversation: ConversationSpec = field(default_factory=ConversationSpec)
    agent: AgentSpec = field(default_factory=AgentSpec)  # the agent scenario's sessions
    cancel: CancelSpec = field(default_factory=CancelSpec)  # --cancel: requests the client closes early
    tenants: tuple[Tenant, ...] = ()  # --tenants: a weighted mix of clients
    embedding_batch: int = 1  # inputs per /v1/embeddings request of the embeddings scenario
    rerank_documents: int = 8  # documents per /v1/rerank request of the rerank scenario
    # What --prompt-tokens counts: "off" (words), "server" (its /tokenize), a tokenizer.json, or
    # "auto" (the command line's default): "server" where the target has a /tokenize, else words.
    # Off here: a config built in code asks the server nothing unless told to.
    tokenize: str = "off"
    images: ImageSpec = field(default_factory=ImageSpec)  # --images: image_url parts per chat request

    def __post_init__(self) -> None:
        require_output_jitter(self.output_jitter, self.output_lengths is not None)
        if self.tokenize != "off" and (self.dataset is not None or self.prefix.groups or self.tenants):
            problem = "builds synthetic prompts to length: not with --dataset, --prefix-groups or --tenants"
            raise ConfigError("--tokenize", self.tokenize, problem)
        if self.embedding_batch < 1:
            raise ConfigError("--embedding-batch", self.embedding_batch, "must be 1 or more")
        if self.rerank_documents < 1:
            raise ConfigError("--rerank-documents", self.rerank_documents, "must be 1 or more")
        if self.dataset is not None and self.prompt_lengths is not None:
            problem = "the dataset gives the prompts: a prompt length distribution has no effect"
            raise ConfigError("--prompt-tokens", self.prompt_lengths, problem)
        if self.prefix_cache and self.prefix.groups:
            problem = "--prefix-cache shares whole prompts, --prefix-groups system prompts: pick one"
            raise ConfigError("--prefix-groups", self.prefix.groups, problem)
