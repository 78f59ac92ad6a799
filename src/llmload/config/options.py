"""Every llmload option, declared once: its flag, ``LLMLOAD_*`` variable, type, default and help.

From this one table come Locust's parser (``llmload.config.args``), ``llmload options``, the
options ``llmload sweep`` and ``llmload search`` pass on to Locust, docs/options.md and the keys
a Kubernetes ConfigMap may set (a test holds the last two to it). Checks live with the typed
config that uses a value (``llmload.config.settings`` and the workload specs), each naming its flag, so
they run once, wherever the value came from: command line, environment or ConfigMap.

The API key has no option at all, so it can never land in shell history, ``ps`` output or a
report: it is read from the environment variable named by ``--api-key-env``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_NOT_PASSED = object()


@dataclass(frozen=True, slots=True)
class Option:
    flag: str
    help: str
    kind: type = str  # bool: a switch, off unless given
    default: Any = None
    group: str = "workload"
    # llmload sweep|search take the option too, with this default, and pass it on to Locust
    sweep_default: Any = _NOT_PASSED

    @property
    def on_start_form(self) -> bool:
        """Shown on Locust's web UI start form, and so set per swarm: what a run asks, not where
        its results and metrics go or how a fleet talks."""
        return self.group in _PER_RUN_GROUPS

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def env(self) -> str:
        return "LLMLOAD_" + self.dest.upper()

    @property
    def in_sweep(self) -> bool:
        return self.sweep_default is not _NOT_PASSED

    def shown_default(self, default: Any = _NOT_PASSED) -> str:
        value = self.default if default is _NOT_PASSED else default
        if self.kind is bool:
            return "on" if value else "off"
        return "" if value is None else str(value)


_LEVELS = "1,2,4,8,16,32,64,128"
_PER_RUN_GROUPS = frozenset({"request", "workload", "checks"})

OPTIONS: tuple[Option, ...] = (
    # what each request asks
    Option("--model", "model name to request (default: the first of /v1/models)", group="request"),
    Option("--no-stream", "request non-streaming responses", bool, group="request"),
    Option(
        "--ignore-eos",
        "ask the server to ignore EOS so every request produces max-tokens",
        bool,
        group="request",
        sweep_default=True,
    ),
    Option("--extra-body", "JSON object merged into every request body", group="request"),
    Option("--extra-header", "extra request headers, 'Name: value' separated by ';'", group="request"),
    Option(
        "--api-key-env", "environment variable holding the API key", default="OPENAI_API_KEY", group="request"
    ),
    # the prompts and lengths
    Option(
        "--max-tokens",
        "output tokens per request: 128, uniform:64:256, normal:128:32, lognormal:128:0.5",
        default="128",
        sweep_default="256",
    ),
    Option(
        "--prompt-tokens",
        "synthetic prompt length in words (~tokens), fixed or a distribution like --max-tokens",
        default="128",
        sweep_default="128",
    ),
    Option("--output-jitter", "spread max-tokens by +-this fraction (seeded)", float, 0.0, sweep_default=0.1),
    Option(
        "--tokenize",
        "what --prompt-tokens counts: off (words), server (the server's /tokenize) or a tokenizer.json file",
        default="off",
    ),
    Option("--max-length", "cap of normal and lognormal length draws without their own :MAX", int, 32768),
    Option("--dataset", "JSONL of chat messages or ShareGPT JSON instead of synthetic prompts"),
    Option(
        "--seed", "seed for prompt lengths, offsets, dataset order and arrival times", int, 0, sweep_default=0
    ),
    Option(
        "--salt",
        "text mixed into every prompt's unique first word (default: new per run, so "
        "no run hits the prefix cache the previous one filled; the summary records it: give it "
        "back to resend a run's prompts exactly)",
    ),
    Option("--prefix-cache", "let prompts share a prefix (no unique salt): measures cache hits", bool),
    Option("--prefix-groups", "shared system prompts: groups of users sharing one (0: off)", int, 0),
    Option("--prefix-tokens", "length of each shared system prompt, in words (~tokens)", int, 512),
    Option("--prefix-share", "fraction of requests starting with their group's prompt", float, 1.0),
    Option("--turns", "conversation scenario: turns per conversation", int, 4),
    Option("--think-time-s", "conversation scenario: mean pause between turns (+-50 percent)", float, 0.0),
    Option("--images", "multimodal: image_url parts per chat request (0: none)", int, 0),
    Option(
        "--image-sizes",
        "multimodal: synthetic image sizes to draw from, e.g. 512x512,1024x768",
        default="512x512",
    ),
    Option("--image-format", "multimodal: png or jpeg (synthetic images)", default="jpeg"),
    Option("--image-dir", "multimodal: send the images in this directory instead of synthetic ones"),
    Option("--embedding-batch", "embeddings scenario: inputs per request, each of --prompt-tokens", int, 1),
    # stages
    Option(
        "--warmup-requests", "requests excluded as warm-up (default: the user count)", int, group="stages"
    ),
    Option("--warmup-s", "minimum warm-up duration in seconds", float, 0.0, group="stages"),
    Option(
        "--drain-s",
        "at the end, how long in-flight requests may take to finish",
        float,
        120.0,
        group="stages",
    ),
    Option(
        "--levels",
        "sweep: concurrency levels, comma-separated",
        default=_LEVELS,
        group="stages",
        sweep_default=_LEVELS,
    ),
    Option(
        "--stage-s",
        "sweep: measured window of each stage, in seconds",
        float,
        30.0,
        group="stages",
        sweep_default=30.0,
    ),
    Option(
        "--repeat",
        "sweep: run each level this many times and report the spread",
        int,
        1,
        group="stages",
        sweep_default=1,
    ),
    Option(
        "--rates",
        "sweep: open-loop request rates (req/s), comma-separated, not levels",
        group="stages",
        sweep_default=None,
    ),
    Option(
        "--ramp",
        "sweep: steps of --stage-s each instead of levels, no warm-up after the first: "
        "FROM:TO[:STEP] users or rate:FROM:TO[:STEP] req/s, e.g. 1:64:8",
        group="stages",
        sweep_default=None,
    ),
    Option(
        "--until-saturated",
        "sweep: stop after the level where output tok/s stops growing while latency climbs",
        bool,
        group="stages",
        sweep_default=False,
    ),
    # open loop
    Option(
        "--rate",
        "open loop (OpenLoopUser): requests per second over the whole fleet",
        float,
        group="open loop",
    ),
    Option(
        "--arrival",
        "open loop: constant, poisson or gamma inter-arrival times",
        default="poisson",
        group="open loop",
    ),
    Option(
        "--burstiness", "open loop: gamma shape (1: Poisson, <1: burstier)", float, 1.0, group="open loop"
    ),
    Option(
        "--max-in-flight", "open loop: arrivals beyond this wait in the client", int, 1024, group="open loop"
    ),
    # trace replay (the trace scenario)
    Option("--trace", "trace: the file to replay (Mooncake JSONL, Azure CSV or JSONL)", group="trace"),
    Option("--trace-format", "trace: mooncake, azure, jsonl or auto", str, "auto", group="trace"),
    Option("--trace-speed", "trace: replay speed (2: twice as fast)", float, 1.0, group="trace"),
    Option("--trace-window", "trace: replay START:END seconds of it, e.g. 60:120 or 60:", group="trace"),
    Option("--trace-loop", "trace: repeat it (its window) until the run time ends", bool, group="trace"),
    # what fails a run
    Option(
        "--slo",
        "objectives every stage must meet, e.g. 'ttft_p99_ms<=200,tpot_p50_ms<=50'",
        group="checks",
        sweep_default=None,
    ),
    Option(
        "--max-error-rate",
        "fail (exit 1) when a stage's failed/attempted exceeds this (0.01 "
        "or 1%; 1 accepts any rate and turns off the fail-fast stop)",
        default="1%",
        group="checks",
        sweep_default=None,
    ),
    Option("--fail-on-client-bound", "exit 4 when a stage was client-bound", bool, group="checks"),
    # what the tokens cost, and what the GPUs did
    Option(
        "--gpu-hour-cost",
        "USD per GPU-hour: turns tok/s into $ per million tokens (with --gpus)",
        float,
        group="cost",
        sweep_default=None,
    ),
    Option(
        "--gpus",
        "GPUs the deployment under test runs on (with --gpu-hour-cost)",
        int,
        1,
        group="cost",
        sweep_default=1,
    ),
    Option(
        "--deployment-hour-cost",
        "USD per hour of the whole deployment, instead of --gpu-hour-cost x --gpus",
        float,
        group="cost",
        sweep_default=None,
    ),
    Option(
        "--gpu-metrics",
        "a Prometheus endpoint with NVIDIA DCGM exporter names (http://node:9400/metrics): "
        "GPU utilisation, memory and power per stage",
        group="cost",
        sweep_default=None,
    ),
    # results and live metrics
    Option(
        "--results-dir",
        "directory under which each run writes its results",
        default="results",
        group="results",
        sweep_default="results",
    ),
    Option(
        "--run-id",
        "name of this run's results subdirectory (default: time-based)",
        group="results",
        sweep_default=None,
    ),
    Option(
        "--prometheus-port", "serve live Prometheus metrics on this port (0: off)", int, 0, group="results"
    ),
    Option(
        "--prometheus-host",
        "address the metrics endpoint binds (0.0.0.0 in pods)",
        default="127.0.0.1",
        group="results",
    ),
    Option(
        "--prometheus-linger-s",
        "keep serving metrics this long after the run ends",
        float,
        0.0,
        group="results",
    ),
    Option("--pushgateway-url", "push the final metrics snapshot to this Pushgateway", group="results"),
    Option("--pushgateway-delete", "delete the pushed group after the linger time", bool, group="results"),
    # distributed runs
    Option(
        "--report-interval-s", "distributed: seconds between a worker's reports", float, 1.0, group="fleet"
    ),
    Option(
        "--final-wait-s",
        "distributed: how long the master waits for final reports",
        float,
        30.0,
        group="fleet",
    ),
    # the connection
    Option(
        "--transport",
        "lean (HTTP/1.1 on gevent sockets) or httpx (HTTP/2, proxies)",
        default="lean",
        group="transport",
    ),
    Option("--connect-timeout", "seconds to open a connection", float, 10.0, group="transport"),
    Option(
        "--first-token-timeout",
        "seconds from sending to the first token (0: no limit)",
        float,
        300.0,
        group="transport",
    ),
    Option(
        "--stall-timeout",
        "seconds allowed between two reads after the first token (0: no limit)",
        float,
        120.0,
        group="transport",
    ),
    Option("--request-timeout", "seconds for a whole request (0: no limit)", float, 0.0, group="transport"),
    Option("--ca-file", "CA bundle to verify the target's TLS certificate with", group="transport"),
    Option("--insecure", "do not verify the target's TLS certificate", bool, group="transport"),
    Option("--http2", "use HTTP/2 (httpx transport only)", bool, group="transport"),
    Option("--proxy", "HTTP proxy URL (httpx transport only)", group="transport"),
)

BY_FLAG: Mapping[str, Option] = {o.flag: o for o in OPTIONS}
ENV_NAMES = frozenset(o.env for o in OPTIONS)
# LLMLOAD_* variables that are not options: read by the container entrypoint, not by Locust
ENTRYPOINT_ENV = frozenset({"LLMLOAD_ROLE", "LLMLOAD_MASTER_HOST", "LLMLOAD_MASTER_PORT"})


def add_arguments(
    group: Any, options: tuple[Option, ...] = OPTIONS, *, env: bool = True, sweep: bool = False
) -> None:
    """Declare ``options`` on an argparse (or configargparse, with ``env``) parser or group.

    ``sweep``: the defaults of ``llmload sweep|search``, and ``--no-X`` for a switch that is on.
    """
    for option in options:
        default = option.sweep_default if sweep else option.default
        extra: dict[str, Any] = {"env_var": option.env} if env else {}
        text = option.help.replace("%", "%%")  # argparse formats help with %
        if sweep and option.shown_default(default) not in ("", "off"):
            text += f" (default {option.shown_default(default)})"
        if option.kind is bool:
            action: Any = "store_true"
            if sweep and default:
                import argparse

                action = argparse.BooleanOptionalAction
            added = group.add_argument(option.flag, action=action, default=bool(default), help=text, **extra)
        else:
            added = group.add_argument(option.flag, type=option.kind, default=default, help=text, **extra)
        # Locust's web UI lists the actions that carry this mark (its own parser sets it on
        # arguments added to the parser itself, not to a group)
        added.include_in_web_ui = env and option.on_start_form


def to_argv(values: Any, options: tuple[Option, ...]) -> list[str]:
    """The command-line arguments that give ``options`` the values they have in ``values``."""
    argv: list[str] = []
    for option in options:
        value = getattr(values, option.dest)
        if option.kind is bool:
            argv += [option.flag] if value else []
        elif value is not None:
            argv += [option.flag, str(value)]
    return argv


def defaults() -> dict[str, Any]:
    """Every option's value when none is given, by its parsed name."""
    return {o.dest: bool(o.default) if o.kind is bool else o.default for o in OPTIONS}


def from_form(values: Any) -> None:
    """Give ``values`` (parsed options) their declared types again after Locust's web UI start
    form set them: it sends every field as text, and leaves text where the default was None
    (an empty field for ``--model``, ``"8"`` for ``--warmup-requests``)."""
    from llmload.errors import ConfigError

    for o in OPTIONS:
        value = getattr(values, o.dest, None)
        if not isinstance(value, str):
            continue
        text = value.strip()
        if not text and o.default is None:
            setattr(values, o.dest, None)
        elif o.kind in (int, float):
            try:
                setattr(values, o.dest, o.kind(text))
            except ValueError:
                raise ConfigError(o.flag, value, f"expected a number ({o.kind.__name__})") from None


def sweep_options() -> tuple[Option, ...]:
    return tuple(o for o in OPTIONS if o.in_sweep)


def groups() -> Iterator[tuple[str, list[Option]]]:
    seen: dict[str, list[Option]] = {}
    for option in OPTIONS:
        seen.setdefault(option.group, []).append(option)
    yield from seen.items()


def markdown() -> str:
    """docs/options.md's tables, one per group; ``sweep``: the default of ``llmload sweep``
    for the options it passes on."""
    out = []
    for name, options in groups():
        out += [
            f"### {name}",
            "",
            "| option | variable | default | sweep | what it does |",
            "|---|---|---|---|---|",
        ]
        for o in options:
            default = o.shown_default()
            swept = o.shown_default(o.sweep_default) if o.in_sweep else ""
            cells = [
                f"`{o.flag}`",
                f"`{o.env}`",
                f"`{default}`" if default else "",
                f"`{swept}`" if swept else ("" if not o.in_sweep else "yes"),
                o.help.replace("|", "\\|"),
            ]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


_GENERATED = "<!-- generated by `make docs` from src/llmload/config/options.py: edit that, not this -->"


def update_doc(path: Path) -> None:
    """Rewrite what follows the generated-marker line of ``path`` with ``markdown()``."""
    text = path.read_text(encoding="utf-8")
    head, marker, _ = text.partition(_GENERATED)
    if not marker:
        raise ValueError(f"{path}: no line {_GENERATED!r} to write the tables after")
    path.write_text(f"{head}{marker}\n\n{markdown()}".rstrip() + "\n", encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    """`llmload options`: every llmload option of the locustfiles, with its environment variable.

    Locust prints its ``--help`` before it imports a locustfile, so our options never show there.
    """
    if list(argv[:1]) == ["--update"]:  # `make docs`: the tables of docs/options.md
        update_doc(Path(argv[1]))
        return 0
    width = max(len(o.flag) for o in OPTIONS)
    env_width = max(len(o.env) for o in OPTIONS)
    print("llmload options (for locust -f locustfiles/*.py; each also an environment variable):")
    for name, options in groups():
        print(f"\n{name}:")
        for o in options:
            default = o.shown_default()
            shown = f" (default {default})" if default and default != "off" else ""
            print(f"  {o.flag:<{width}}  {o.env:<{env_width}}  {o.help}{shown}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
