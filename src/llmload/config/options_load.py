"""The options of how the load runs and is judged: stages and sweeps, the open loop, a trace's
replay, what fails a run, and what the tokens cost."""

from __future__ import annotations

from llmload.config import values
from llmload.config.option import Option

_LEVELS = "1,2,4,8,16,32,64,128"

LOAD_OPTIONS: tuple[Option, ...] = (
    # stages
    Option(
        "--warmup-requests",
        "requests excluded as warm-up (default: the user count)",
        int,
        group="stages",
        to="phases.warmup_requests",
    ),
    Option(
        "--warmup-s", "minimum warm-up duration in seconds", float, 0.0, group="stages", to="phases.warmup_s"
    ),
    Option(
        "--requests",
        "measure this many requests per stage (over workers, at least this many: the master "
        "hears their counts every --report-interval-s): the window closes once they were sent, the drain "
        "waits for them, and a plain run then ends; -t, or a sweep's --stage-s, stays the limit",
        int,
        group="stages",
        sweep_default=None,
        to="phases.window_requests",
    ),
    Option(
        "--drain-s",
        "at the end, how long in-flight requests may take to finish",
        float,
        120.0,
        group="stages",
        to="phases.drain_s",
    ),
    Option(
        "--levels",
        "sweep: concurrency levels, comma-separated",
        default=_LEVELS,
        group="stages",
        sweep_default=_LEVELS,
        to="sweep.levels",
        parse=values.levels,
    ),
    Option(
        "--stage-s",
        "sweep: measured window of each stage, in seconds",
        float,
        30.0,
        group="stages",
        sweep_default=30.0,
        to="sweep.window_s",
    ),
    Option(
        "--repeat",
        "sweep: run each level this many times and report the spread",
        int,
        1,
        group="stages",
        sweep_default=1,
        to="sweep.repeat",
    ),
    Option(
        "--rates",
        "sweep: open-loop request rates (req/s), comma-separated, not levels",
        group="stages",
        sweep_default=None,
        to="sweep.rates",
        parse=values.rates,
    ),
    Option(
        "--ramp",
        "sweep: steps of --stage-s each instead of levels, no warm-up after the first: "
        "FROM:TO[:STEP] users or rate:FROM:TO[:STEP] req/s, e.g. 1:64:8",
        group="stages",
        sweep_default=None,
        to="sweep.ramp",
        parse=values.ramp,
    ),
    Option(
        "--until-saturated",
        "sweep: stop after the level where output tok/s stops growing while latency climbs",
        bool,
        group="stages",
        sweep_default=False,
        to="sweep.until_saturated",
    ),
    # open loop
    Option(
        "--rate",
        "open loop (OpenLoopUser): requests per second over the whole fleet",
        float,
        group="open loop",
        to="open_loop.rate",
    ),
    Option(
        "--arrival",
        "open loop: constant, poisson or gamma inter-arrival times",
        default="poisson",
        group="open loop",
        to="open_loop.arrival",
    ),
    Option(
        "--burstiness",
        "open loop: gamma shape (1: Poisson, <1: burstier)",
        float,
        1.0,
        group="open loop",
        to="open_loop.burstiness",
    ),
    Option(
        "--max-in-flight",
        "open loop: arrivals beyond this wait in the client",
        int,
        1024,
        group="open loop",
        to="open_loop.max_in_flight",
    ),
    # trace replay (the trace scenario)
    Option(
        "--trace",
        "trace: the file to replay (Mooncake JSONL, Azure CSV or JSONL)",
        group="trace",
        to="trace.path",
    ),
    Option(
        "--trace-format",
        "trace: mooncake, azure, jsonl or auto",
        str,
        "auto",
        group="trace",
        to="trace.format",
    ),
    Option(
        "--trace-speed",
        "trace: replay speed (2: twice as fast)",
        float,
        1.0,
        group="trace",
        to="trace.replay.speed",
    ),
    Option(
        "--trace-window",
        "trace: replay START:END seconds of it, e.g. 60:120 or 60:",
        group="trace",
        to=("trace.replay.start_s", "trace.replay.end_s"),
        parse=values.trace_window,
    ),
    Option(
        "--trace-loop",
        "trace: repeat it (its window) until the run time ends",
        bool,
        group="trace",
        to="trace.replay.loop",
    ),
    # what fails a run
    Option(
        "--slo",
        "objectives every stage must meet, e.g. 'ttft_p99_ms<=200,tpot_p50_ms<=50'",
        group="checks",
        sweep_default=None,
        to="checks.slo",
        parse=values.slo,
    ),
    Option(
        "--max-error-rate",
        "fail (exit 1) when a stage's failed/attempted exceeds this (0.01 "
        "or 1%; 1 accepts any rate and turns off the fail-fast stop)",
        default="1%",
        group="checks",
        sweep_default=None,
        to="checks.max_error_rate",
        parse=values.max_error_rate,
    ),
    Option(
        "--fail-on-client-bound",
        "exit 4 when a stage was client-bound",
        bool,
        group="checks",
        to="checks.fail_on_client_bound",
    ),
    # what the tokens cost, and what the GPUs did
    Option(
        "--gpu-hour-cost",
        "USD per GPU-hour: turns tok/s into $ per million tokens (with --gpus)",
        float,
        group="cost",
        sweep_default=None,
        to="cost.gpu_hour_usd",
    ),
    Option(
        "--gpus",
        "GPUs the deployment under test runs on (with --gpu-hour-cost)",
        int,
        1,
        group="cost",
        sweep_default=1,
        to="cost.gpus",
    ),
    Option(
        "--deployment-hour-cost",
        "USD per hour of the whole deployment, instead of --gpu-hour-cost x --gpus",
        float,
        group="cost",
        sweep_default=None,
        to="cost.deployment_hour_usd",
    ),
    Option(
        "--reset-prefix-cache",
        "ask the server to drop its prefix cache before the first request (vLLM in "
        "VLLM_SERVER_DEV_MODE, SGLang, llama.cpp with --slot-save-path); the summary says how it went",
        bool,
        group="server",
        sweep_default=False,
        to="server_control.reset_prefix_cache",
    ),
    Option(
        "--server-profile",
        "run the server's profiler (vLLM with --profiler-config, SGLang) over these stages' "
        "measured windows, e.g. 0 or 2,3",
        group="server",
        sweep_default=None,
        to="server_control.profile_stages",
        parse=values.stages,
    ),
    Option(
        "--gpu-metrics",
        "a Prometheus endpoint with NVIDIA DCGM exporter names (http://node:9400/metrics): "
        "GPU utilisation, memory and power per stage",
        group="cost",
        sweep_default=None,
        to="gpu_metrics",
        parse=values.text_or_none,
    ),
)
