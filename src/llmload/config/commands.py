"""The options of the llmload commands themselves, declared once, beside Locust's in ``OPTIONS``.

``OPTIONS`` (``config/options.py``) holds what a Locust run takes and the ``RunConfig`` field each
sets. The commands that start servers, wait for them and start Locust (sweep, search, demo,
wait, tune, calibrate) take more: where the server is, how long to wait for it, how many worker
processes. Each of those is declared here, once, with the same ``Option`` type, and every
command's parser declares the flags it takes from here by name (``declare``): a flag cannot mean
one thing to ``llmload wait`` and another to ``llmload sweep``, and
``tests/unit/config/test_flags_declared.py`` fails on a flag in ``src/`` that names no option.
Locust never sees these; no ``RunConfig`` field comes from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llmload.config.options import BY_FLAG, Option, add_arguments
from llmload.errors import ConfigError


def processes(text: str) -> int | None:
    """``--processes``: ``auto`` (None) or a count (0: one process, as Locust's default)."""
    if text == "auto":
        return None
    try:
        count = int(text)
    except ValueError:
        raise ConfigError("--processes", text, "give auto or a number of processes (0: one)") from None
    if count < 0:
        raise ConfigError("--processes", text, "give auto or a number >= 0")
    return count


def output_format(text: str) -> str:
    """``--format``: the short names the commands once took (text, md) still mean theirs."""
    return {"text": "console", "md": "markdown"}.get(text, text)


_GROUP = "command"

COMMAND_OPTIONS: tuple[Option, ...] = (
    # the server under test
    Option("--host", "the server's base URL, e.g. http://gpu-box:8000", group=_GROUP),
    Option("--sim", "start `llmload sim --profile PROFILE` as the server", group=_GROUP, metavar="PROFILE"),
    Option("--sim-arg", "extra simulator argument (repeat it for more)", group=_GROUP, repeated=True),
    # waiting until it generates (target/wait.py)
    Option("--no-wait", "do not wait for the server first", bool, group=_GROUP),
    Option(
        "--wait-timeout",
        "seconds to wait for the server to generate before giving up (llmload wait: exit 6)",
        float,
        900.0,
        group=_GROUP,
        aliases=("--timeout",),  # llmload wait's first name for it
    ),
    Option(
        "--log",
        "the server's log file, watched while waiting: its newest line and its age are shown",
        group=_GROUP,
    ),
    Option(
        "--log-stall",
        "give up once --log has not changed this many seconds (llmload wait: exit 7)",
        float,
        group=_GROUP,
    ),
    # the load generator on this machine
    Option(
        "--processes",
        "worker processes on this machine (Locust --processes; 0: one), or auto: as many as the "
        "planned load needs by this machine's measured capacity (llmload calibrate), refused "
        "before the run when its free cores cannot carry it",
        processes,
        "auto",
        group=_GROUP,
    ),
    Option("--locustfile", "a scenario's name (llmload scenarios) or a locustfile", group=_GROUP),
    # llmload demo: the simulator and Locust run it starts
    Option("--profile", "the simulator's profile (llmload sim --profile)", default="vllm", group=_GROUP),
    Option("--users", "concurrent streams (Locust -u/--users)", int, 32, group=_GROUP),
    Option("--run-time", "measured run time (Locust -t/--run-time)", default="30s", group=_GROUP),
    # llmload search: the level it bisects for
    Option("--min", "lowest level to try", float, 1, group=_GROUP),
    Option("--max", "highest level to try", float, 256, group=_GROUP),
    Option(
        "--by",
        "search over concurrency (users) or open-loop request rate",
        default="concurrency",
        group=_GROUP,
        allowed=("concurrency", "rate"),
    ),
    Option("--tolerance", "rates: stop once the interval is narrower than this", float, 0.05, group=_GROUP),
    Option(
        "--slo-tier",
        "one answer per tier: the highest level meeting these rules (in --slo's grammar, "
        "e.g. 'ttft_p90_ms<=1000'), --slo and --max-error-rate; repeatable, the probes shared",
        group=_GROUP,
        repeated=True,
        metavar="RULES",
    ),
    # llmload tune: the experiment's directory, and what it reruns
    Option("--name", "the experiment's directory under --results-dir (default: its name)", group=_GROUP),
    Option("--resume", "continue an experiment: skip what ended", bool, group=_GROUP),
    Option("--retry-failed", "with --resume: rerun failed configurations", bool, group=_GROUP),
    Option("--set", "override a parameter", group=_GROUP, repeated=True, metavar="NAME=VALUE"),
    Option(
        "--max-answer-drift",
        "do not recommend a configuration whose probe answers changed more (0.1 or 10%); "
        "turns the quality guard on when the experiment has no [quality] table",
        group=_GROUP,
        metavar="SHARE",
    ),
    Option("--dry-run", "print each configuration's commands and stop", bool, group=_GROUP),
    # llmload calibrate: the measurement of one worker process (its defaults are calibrate's)
    Option("--streams", "streams of the measurement", int, group=_GROUP),
    Option("--seconds", "its run time", int, group=_GROUP),
    Option("--show", "print the cached figure; measure nothing", bool, group=_GROUP),
    # the commands over results: compare, report, history, gate
    Option(
        "--format",
        "what is written: console (or text), markdown (or md) or html; each command says which it writes",
        output_format,
        "console",
        group=_GROUP,
        allowed=("console", "markdown", "html"),
    ),
    Option(
        "--out",
        "write there instead: compare, into this file (default: stdout); report, into this "
        "directory (default: RUN_DIR)",
        Path,
        group=_GROUP,
        metavar="PATH",
    ),
    Option(
        "--baseline",
        "the baseline: a run pinned as NAME (llmload history pin RUN --as NAME); the gate also "
        "takes rolling:N, the last N comparable runs, over its policy's",
        group=_GROUP,
        metavar="NAME|rolling:N",
    ),
    Option("--policy", "the gate's policy, a TOML file (default: the built-in one)", Path, group=_GROUP),
    Option("--junit", "also write the gate's cells as JUnit XML here", Path, group=_GROUP, metavar="PATH"),
    Option("--reason", "why the regression is accepted", group=_GROUP, required=True),
    Option("--accepted-by", "who accepts it (default: the user's login name)", group=_GROUP, metavar="WHO"),
    Option("--as", "the baseline's name, e.g. main", group=_GROUP, required=True, metavar="NAME"),
    Option(
        "--metric",
        "the trend's metric (default: output_tok_per_s; a wrong name lists them)",
        group=_GROUP,
        metavar="NAME",
    ),
    Option("--level", "the trend at one level: users (32) or requests per second (2.5/s)", group=_GROUP),
    Option(
        "--html",
        "also write the trend as a self-contained page: the metric (and output tok/s, TTFT p99, "
        "TPOT p50) at each level, change points marked",
        Path,
        group=_GROUP,
        metavar="PATH",
    ),
    Option(
        "--stages",
        "concurrency levels for the latency rows, e.g. 1,32,128 (default: the lowest, a middle "
        "and the highest common level)",
        group=_GROUP,
    ),
    Option(
        "--png",
        "also draw every chart as <name>.png (needs the report extra: pip install 'llmload[report]')",
        bool,
        group=_GROUP,
    ),
)

COMMAND_BY_FLAG: Mapping[str, Option] = {o.flag: o for o in COMMAND_OPTIONS}


def option_of(flag: str) -> Option:
    """The one declaration of ``flag`` (or of a flag it is an alias of), of either table."""
    for option in (*COMMAND_OPTIONS, *BY_FLAG.values()):
        if flag == option.flag or flag in option.aliases:
            return option
    raise KeyError(flag)


def declare(group: Any, *flags: str, defaults: Mapping[str, Any] | None = None) -> None:
    """Declare ``flags`` on a command's argparse parser or group, each as its option says; the
    options of Locust's table with their sweep defaults (a command passes them on to Locust)."""
    add_arguments(group, tuple(option_of(f) for f in flags), env=False, sweep=True, defaults=defaults)
