"""The options of what a run asks: each request (model, API, stream, lengths) and the workload
its prompts come from (datasets, prefixes, turns, agents, tenants, images, rerank)."""

from __future__ import annotations

from llmload.config import values
from llmload.config.apikey import DEFAULT_ENV
from llmload.config.option import Option

WORKLOAD_OPTIONS: tuple[Option, ...] = (
    # what each request asks
    Option(
        "--model",
        "model name to request (default: the first of /v1/models)",
        group="request",
        to="request.model",
    ),
    Option(
        "--no-stream",
        "request non-streaming responses",
        bool,
        group="request",
        to="request.stream",
        parse=values.negate,
    ),
    Option(
        "--ignore-eos",
        "ask the server to ignore EOS so every request produces max-tokens",
        bool,
        group="request",
        sweep_default=True,
        to="request.ignore_eos",
    ),
    Option(
        "--api",
        "the API the chat users speak: chat (/v1/chat/completions), completions, responses "
        "(/v1/responses) or messages (Anthropic's /v1/messages); auto: the locustfile's own",
        default="auto",
        group="request",
        sweep_default="auto",
        to="request.api",
    ),
    Option(
        "--server-timings",
        "ask for the server's own timing of each request (vLLM's include_metrics) and join it to "
        "the client's: auto (when the server is vLLM), on, off (never ask; what a server sends "
        "unasked, as llama.cpp's timings, is still joined)",
        default="auto",
        group="request",
        sweep_default="auto",
        to="request.server_timings",
    ),
    Option(
        "--extra-body",
        "JSON object merged into every request body",
        group="request",
        to="request.extra_body",
        parse=values.extra_body,
    ),
    Option(
        "--extra-header",
        "extra request headers, 'Name: value' separated by ';'",
        group="request",
        to="request.extra_headers",
        parse=values.extra_headers,
    ),
    Option(
        "--api-key-env",
        "environment variable holding the API key (the key itself is never a flag)",
        default=DEFAULT_ENV,
        group="request",
        # llmload sweep|search|tune|wait read the key themselves to wait for the server and ask
        # its pace; None there: not passed on, so Locust reads LLMLOAD_API_KEY_ENV as they did
        sweep_default=None,
        to="request.api_key_env",
    ),
    # the prompts and lengths
    Option(
        "--max-tokens",
        "output tokens per request: 128, uniform:64:256, normal:128:32, lognormal:128:0.5",
        default="128",
        sweep_default="256",
        to="workload.output_lengths",
        parse=values.output_lengths,
    ),
    Option(
        "--prompt-tokens",
        "synthetic prompt length in the server's tokens (see --tokenize; words where it cannot count), "
        "fixed or a distribution like --max-tokens",
        default="128",
        sweep_default="128",
        to="workload.prompt_lengths",
        parse=values.prompt_lengths,
    ),
    Option(
        "--output-jitter",
        "spread max-tokens by +-this fraction (seeded)",
        float,
        0.0,
        sweep_default=0.1,
        to="workload.output_jitter",
    ),
    Option(
        "--tokenize",
        "what --prompt-tokens counts: auto (the server's /tokenize where it has one, else words), "
        "off (words), server (the server's /tokenize) or a tokenizer.json file",
        default="auto",
        to="workload.tokenize",
        parse=values.tokenize,
    ),
    Option(
        "--max-length",
        "cap of normal and lognormal length draws without their own :MAX",
        int,
        32768,
        to="workload.max_length",
    ),
    Option(
        "--dataset",
        "JSONL of chat messages or ShareGPT JSON instead of synthetic prompts",
        to="workload.dataset",
        parse=values.existing_file,
    ),
    Option(
        "--seed",
        "seed for prompt lengths, offsets, dataset order and arrival times",
        int,
        0,
        sweep_default=0,
        to="workload.seed",
    ),
    Option(
        "--salt",
        "text mixed into every prompt's unique first word (default: new per run, so "
        "no run hits the prefix cache the previous one filled; the summary records it: give it "
        "back to resend a run's prompts exactly)",
        to="workload.salt",
        parse=values.text_or_empty,
    ),
    Option(
        "--prefix-cache",
        "let prompts share a prefix (no unique salt): measures cache hits",
        bool,
        to="workload.prefix_cache",
    ),
    Option(
        "--prefix-groups",
        "shared system prompts: groups of users sharing one (0: off)",
        int,
        0,
        to="workload.prefix.groups",
    ),
    Option(
        "--prefix-tokens",
        "length of each shared system prompt, in words (~tokens)",
        int,
        512,
        to="workload.prefix.tokens",
    ),
    Option(
        "--prefix-share",
        "fraction of requests starting with their group's prompt",
        float,
        1.0,
        to="workload.prefix.share",
    ),
    Option(
        "--turns",
        "conversation and agent scenarios: turns per conversation or session",
        int,
        4,
        to="workload.conversation.turns",
    ),
    Option(
        "--think-time-s",
        "conversation scenario: mean pause between turns (+-50 percent)",
        float,
        0.0,
        to="workload.conversation.think_time_s",
    ),
    Option(
        "--conversation-state",
        "conversation scenario: resend the history each turn, or keep it on the server "
        "(server: the Responses API's previous_response_id; needs --api responses)",
        str,
        "resend",
        to="workload.conversation.state",
    ),
    Option(
        "--agent-trace",
        "agent scenario: replay the recorded sessions of this JSONL file (AIPerf's session "
        "trace: session_id, messages, assistant_responses live or recorded, output_length, "
        "delay, tools, extra)",
        str,
        "",
        to="workload.agent.trace",
        parse=values.agent_trace,
    ),
    Option(
        "--tool-result-tokens",
        "agent scenario: words of each tool result added to a session's history",
        int,
        64,
        to="workload.agent.tool_result_tokens",
    ),
    Option(
        "--tool-latency-ms",
        "agent scenario: mean client-side tool time between turns (+-50 percent)",
        float,
        0.0,
        to="workload.agent.tool_latency_ms",
    ),
    Option(
        "--fan-out",
        "agent scenario: sub-agents run in parallel after turn --fan-out-at (0: none)",
        int,
        0,
        to="workload.agent.fan_out",
    ),
    Option(
        "--fan-out-at",
        "agent scenario: the turn after which sub-agents run",
        int,
        1,
        to="workload.agent.fan_out_at",
    ),
    Option(
        "--sub-agent-turns", "agent scenario: turns of each sub-agent", int, 2, to="workload.agent.sub_turns"
    ),
    Option(
        "--cancel",
        "share of requests the client closes after --cancel-after, as a user who moves on "
        "(counted as cancelled: neither ok nor failed)",
        float,
        0.0,
        to="workload.cancel.share",
    ),
    Option(
        "--cancel-after",
        "when a cancelled request is closed: MS, or LO-HI drawn uniformly, from its start",
        str,
        "500",
        to="workload.cancel.after_ms",
        parse=values.cancel_after,
    ),
    Option(
        "--tenants",
        "a TOML file of tenants sharing the server, each with its weight, model or LoRA adapter, "
        "headers, lengths and SLO (docs/workloads.md#tenants)",
        str,
        "",
        to="workload.tenants",
        parse=values.tenants,
    ),
    Option(
        "--session-header",
        "headers that carry a session's key (agent and conversation scenarios), for routers "
        "that keep a session on one replica; none: send none",
        str,
        "X-Session-Affinity,X-Session-ID",
        group="request",
        to="request.session_headers",
        parse=values.header_names,
    ),
    Option(
        "--images",
        "multimodal: image_url parts per chat request (0: none)",
        int,
        0,
        to="workload.images.count",
    ),
    Option(
        "--image-sizes",
        "multimodal: synthetic image sizes to draw from, e.g. 512x512,1024x768",
        default="512x512",
        to="workload.images.sizes",
        parse=values.image_sizes,
    ),
    Option(
        "--image-format",
        "multimodal: png or jpeg (synthetic images)",
        default="jpeg",
        to="workload.images.format",
    ),
    Option(
        "--image-dir",
        "multimodal: send the images in this directory instead of synthetic ones",
        to="workload.images.directory",
    ),
    Option(
        "--embedding-batch",
        "embeddings scenario: inputs per request, each of --prompt-tokens",
        int,
        1,
        to="workload.embedding_batch",
    ),
    Option(
        "--rerank-documents",
        "rerank scenario: documents per request, each of --prompt-tokens, ordered by one query",
        int,
        8,
        to="workload.rerank_documents",
    ),
)
