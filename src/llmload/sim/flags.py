"""Every flag of ``llmload sim``, declared once (its parser is built from this table alone).

The simulator is a server, a program of its own: its ``--host`` is the address it binds and its
``--model`` the names it serves, as a real engine's are, where the commands' ``--host`` is the
server they load and ``--model`` the one they ask for. So its flags are a table apart from the
commands' (``config/options.py``, ``config/commands.py``), with the same declaration type.
Checks and conversions live where the value is used (``sim/cli.py``), each naming its flag.
"""

from __future__ import annotations

from pathlib import Path

from llmload.flags import Flag
from llmload.sim.faults import modes_text
from llmload.sim.profiles import profile_names
from llmload.sim.router import ROUTER_POLICIES, SESSION_HEADER

_TIMING = "fixed timing (no batching): both or neither"
_MODEL = "batching model (override the profile's solved values)"
_SLOWER = "a slower engine, by a known factor"
_SPEC = "speculative decoding (a drafter over the batching model)"
_REPLICAS = "replicas (independent engines behind a built-in router)"

SIM_FLAGS: tuple[Flag, ...] = (
    Flag("--host", "address to bind (default 127.0.0.1)", default="127.0.0.1"),
    Flag("--port", "port; 0 picks a free one", int, 8000),
    Flag("--profile", "the engine imitated (default vllm)", default="vllm", allowed=tuple(profile_names())),
    # what it serves
    Flag(
        "--model",
        "served model names: the first is the default (base) model, any others LoRA adapters "
        "on it (default: the profile's)",
        aliases=("--served-models",),
        metavar="NAME[,NAME...]",
    ),
    Flag(
        "--adapter-switch-ms",
        "a step whose batch holds an adapter the previous step did not is this much longer, "
        "per such adapter (default 0)",
        float,
        0.0,
    ),
    Flag("--seed", "seed of every random choice", int, 0),
    Flag("--ttft-ms", "first token this long after arrival", float, group=_TIMING),
    Flag("--step-ms", "then one event every this many ms", float, group=_TIMING),
    Flag("--step-base-ms", "fixed cost of a decode step", float, group=_MODEL),
    Flag("--step-per-seq-ms", "cost per running sequence", float, group=_MODEL),
    Flag("--step-per-seq2-ms", "cost per running sequence squared", float, group=_MODEL),
    Flag("--prefill-per-token-ms", "cost per admitted prompt token", float, group=_MODEL),
    Flag("--max-running", "running sequences cap; more queue", int, group=_MODEL),
    Flag("--kv-budget-tokens", "KV-cache tokens (preemption)", int, group=_MODEL),
    Flag(
        "--no-prefix-cache",
        "prefill every prompt token, as with prefix caching disabled",
        bool,
        group=_MODEL,
    ),
    Flag(
        "--prefix-cache-tokens",
        "prefix cache capacity in tokens (default: the KV budget)",
        int,
        group=_MODEL,
    ),
    Flag(
        "--slowdown",
        "every step and prefill takes FACTOR times as long (1.05: tok/s about 5% lower)",
        float,
        1.0,
        group=_SLOWER,
        metavar="FACTOR",
    ),
    Flag(
        "--prefill-slowdown",
        "prefill alone takes FACTOR times as long (TTFT up; with fixed timing, --ttft-ms)",
        float,
        1.0,
        group=_SLOWER,
        metavar="FACTOR",
    ),
    # what the imitated model writes: chunking and a reasoning model's thinking
    Flag("--tokens-per-chunk", "tokens per event after the first", int),
    Flag(
        "--reasoning-tokens",
        "a reasoning model: every chat answer first streams N tokens as reasoning_content",
        int,
        0,
    ),
    Flag(
        "--tokens-per-word",
        "prompt tokens per word, e.g. 1.3 as a real tokenizer counts English (default 1)",
        default="1",
    ),
    Flag("--draft-tokens", "tokens the drafter proposes per step", int, group=_SPEC),
    Flag(
        "--draft-acceptance",
        "chance each draft token is accepted, in turn (default 0.7)",
        float,
        group=_SPEC,
    ),
    Flag("--draft-ms", "one drafter pass (default 5% of the step base)", float, group=_SPEC),
    Flag(
        "--draft-verify-cost",
        "a verified draft token's share of a sequence's per-step cost (default 0.75)",
        float,
        group=_SPEC,
    ),
    Flag(
        "--replicas",
        "engines, each with its own batch, KV budget and prefix cache (default 1)",
        int,
        1,
        group=_REPLICAS,
    ),
    Flag(
        "--router",
        "round-robin, or session: a session key's requests to one replica",
        default="round-robin",
        group=_REPLICAS,
        allowed=ROUTER_POLICIES,
    ),
    Flag(
        "--session-header",
        "the request header with the session key (default X-Session-Affinity; X-Session-ID "
        "is read when it is absent)",
        default=SESSION_HEADER,
        group=_REPLICAS,
    ),
    # the ground truth it writes and the faults it answers with
    Flag("--emit-timestamps", "send_ns in every chunk", bool),
    Flag("--request-log", "append per-request ground truth (JSONL)", Path),
    Flag("--fault", f"MODE[,MODE...] for every request: {modes_text()}"),
    Flag("--fault-rate", "share of requests faulted", float, 1.0),
    Flag("--fault-first", "fault only the first N requests to arrive (e.g. a slow warm-up)", int, 0),
    # how the server runs and what it exposes beside the API
    Flag("--startup-delay-s", "simulated model loading", float, 0.0),
    Flag("--hang", "accept connections, never answer", bool),
    Flag("--log-file", "server log (loading progress)", Path),
    Flag(
        "--realtime",
        "run at SCHED_FIFO priority 1 if permitted, so CPU contention cannot delay steps",
        bool,
    ),
    Flag("--dcgm", "/metrics also has a simulated GPU's DCGM gauges", bool),
    Flag("--no-tokenize-route", "no POST /tokenize (404), as a gateway or a hosted API answers", bool),
    Flag(
        "--enable-per-request-metrics",
        "vLLM's flag: each answer's final usage event (or body) carries its own timing "
        "`metrics` (the vLLM profiles' default here)",
        bool,
    ),
    Flag(
        "--no-per-request-metrics",
        "answer as a vLLM started without --enable-per-request-metrics does",
        bool,
    ),
    Flag("--certfile", "TLS certificate (PEM): serve https", Path),
    Flag("--keyfile", "TLS private key (PEM)", Path),
    Flag(
        "--api-key",
        "vLLM's --api-key: the /v1 routes answer 401 without 'Authorization: Bearer KEY' "
        "(or Anthropic's x-api-key: KEY)",
    ),
)
