"""The end-of-run table on the console, rendered from ``summary.json`` alone."""

from __future__ import annotations

from collections.abc import Mapping

from llmload.metrics.catalog import CONSOLE_LATENCIES, by_key, stat_header
from llmload.results.saturation import saturation_text
from llmload.results.summary import Summary
from llmload.results.summary_stage import Latency, MeanMax, ReplaySummary, Stage

_COLUMNS = ("p50", "p90", "p99", "max")


def _num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _counts(d: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"


def _mean_max(m: MeanMax | None) -> str:
    return "- (max -)" if m is None else f"{_num(m.mean)} (max {_num(m.max, 0)})"


def render_stage(stage: Stage) -> str:
    lines = [_head(stage), *_latencies(stage), *_counts_and_rates(stage)]
    lines += _server_timings(stage)
    lines += _server_metrics(stage)
    lines += _http_phases(stage)
    lines += _cost(stage)
    lines += _reasoning(stage)
    lines += _sessions(stage)
    lines += _tenants(stage)
    for name, part in stage.by_name.items():
        lines.append(
            f"  {name}: ok {part.requests.ok}, failed {part.requests.failed}"
            + _p50("ttft", part.ttft_ms)
            + _p50("tpot", part.tpot_ms)
            + _p50("e2e", part.e2e_ms, " ms")
            + f" · out {_num(part.output_tok_per_s, 1)} tok/s"
        )
    for process, health in stage.client_health.items():
        lines.append(
            f"  client {process}: loop lag p99 {_num(health.loop_lag_p99_ms)} ms"
            f" · CPU {_num(health.cpu_percent, 0)}% of one core"
        )
    lines += [f"  warning: {w}" for w in stage.warnings]
    return "\n".join(lines)


def _head(stage: Stage) -> str:
    head = f"stage {stage.index}"
    if stage.rate_req_per_s is not None:
        head += f" · open loop {stage.rate_req_per_s:g} req/s (≤{stage.concurrency} in flight)"
    elif stage.concurrency is not None:
        head += f" · concurrency {stage.concurrency}"
    head += f" · window {stage.duration_s:.1f} s"
    if stage.client_bound:
        head += " · CLIENT-BOUND: numbers measure the load generator, not the server"
    return head


def _latencies(stage: Stage) -> list[str]:
    lines = [f"  {'latency (ms)':<14}" + "".join(f"{c:>11}" for c in _COLUMNS) + f"{'count':>9}"]
    for metric in CONSOLE_LATENCIES:
        m = stage.latency(metric)
        if m is None:
            continue
        row = "".join(f"{_num(m.quantile(c)):>11}" for c in _COLUMNS)
        lines.append(f"  {by_key(metric).short:<14}{row}{m.count:>9,}")
    return lines


def _counts_and_rates(stage: Stage) -> list[str]:
    req, tpe, epr = stage.requests, stage.tokens_per_event, stage.events_per_read
    lines = [
        f"  output {_num(stage.output_tok_per_s, 1)} tok/s · input "
        f"{_num(stage.input_tok_per_s, 1)} tok/s · total {_num(stage.total_tok_per_s, 1)}"
        f" tok/s · {_num(stage.request_per_s, 3)} req/s",
        f"  requests: ok {req.ok}, failed {req.failed}, unfinished {req.unfinished}"
        + (f", cancelled {req.cancelled}" if req.cancelled else "")
        + f" (warm-up {req.warmup}, drain {req.drain} excluded)",
        f"  tokens per event {_mean_max(tpe)} · events per read {_mean_max(epr)}"
        f" · token source {stage.token_source or '-'}",
    ]
    if stage.images_per_request is not None:
        lines.append(
            f"  images per request {_mean_max(stage.images_per_request)}"
            f" · image bytes per request {_mean_max(stage.image_bytes_per_request)}"
        )
    if stage.goodput_req_per_s is not None:
        lines.append(f"  goodput {_num(stage.goodput_req_per_s, 3)} req/s (requests meeting every SLO)")
    lines.append(f"  finish reasons: {_counts(stage.finish_reasons)} · errors: {_counts(stage.errors)}")
    return lines


def _p50(metric: str, m: Latency | None, unit: str = "") -> str:
    return "" if m is None else f" · {stat_header(metric, 'p50')} {_num(m.p50)}{unit}"


def _cost(stage: Stage) -> list[str]:
    out = []
    if (cost := stage.cost) is not None:
        out.append(
            f"  cost at ${cost.usd_per_hour:,.2f}/h: ${_num(cost.usd_per_m_output_tokens, 4)}/M output tokens"
            f" · ${_num(cost.usd_per_m_input_tokens, 4)}/M input tokens (each charged the whole hour)"
        )
    if (gpu := stage.gpu) is not None:
        util, power = gpu.util_pct, gpu.power_w
        out.append(
            f"  GPUs ({gpu.gpus}): utilisation mean {_num(util.mean if util else None, 1)}%"
            f" · power mean {_num(power.mean if power else None, 0)} W"
            f" · {_num(gpu.joules_per_output_token, 3)} J per output token"
        )
    return out


def _server_timings(stage: Stage) -> list[str]:
    t = stage.server_timings
    if t is None:
        return []

    def p50_p99(m: Latency | None) -> str:
        return "-" if m is None else f"{_num(m.p50)} / {_num(m.p99)}"

    decode, span, tpot = t.decode_per_token_ms, t.decode_minus_predicted_ms, t.tpot_minus_server_ms
    return [
        f"  server's own timings ({t.requests} requests): prefill p50/p99 {p50_p99(t.prefill_ms)} ms"
        f" · decode {p50_p99(decode)} ms/token · cached prompt tokens {t.cached_prompt_tokens:,}",
        f"  client minus server, per request p50/p99: TTFT - prefill {p50_p99(t.ttft_minus_prefill_ms)}"
        f" ms · decode span {p50_p99(span)} ms · TPOT {p50_p99(tpot)} ms",
    ]


def _server_metrics(stage: Stage) -> list[str]:
    m = stage.server_metrics
    if m is None:
        return []
    share = "-" if m.queue_share_of_ttft is None else f"{m.queue_share_of_ttft:.0%}"
    return [
        f"  server's own metrics ({m.requests} requests) p50/p99: engine TTFT "
        f"{_p50_p99(m.engine_ttft_ms)} ms · queue {_p50_p99(m.queue_ms)} ms ({share} of client TTFT)"
        f" · mean ITL {_p50_p99(m.mean_itl_ms)} ms",
        f"  client minus server, per request p50/p99: TTFT - queue - engine TTFT"
        f" {_p50_p99(m.ttft_outside_engine_ms)} ms · TPOT - mean ITL"
        f" {_p50_p99(m.tpot_minus_mean_itl_ms)} ms",
    ]


def _p50_p99(m: Latency | None) -> str:
    return "-" if m is None else f"{_num(m.p50)} / {_num(m.p99)}"


def _http_phases(stage: Stage) -> list[str]:
    p = stage.http_phases
    if p is None:
        return []
    cells = " · ".join(
        f"{label} {_num(m.p50)}"
        for label, m in (
            ("pool wait", p.pool_wait_ms),
            ("connect", p.tcp_connect_ms),
            ("TLS", p.tls_ms),
            ("write", p.request_write_ms),
            ("first byte", p.first_byte_ms),
            ("first token", p.first_token_ms),
        )
        if m is not None
    )
    return [f"  HTTP phases p50 ms: {cells} ({p.new_connections:,} of {p.requests:,} requests connected)"]


def _repeats(summary: Summary) -> list[str]:
    """Each repeated level's mean tok/s with its 95% interval, and what was too noisy to trust."""
    levels = [lv for lv in (summary.headline.levels if summary.headline else ()) if lv.repeats > 1]
    out = []
    for lv in levels:
        where = f"C={lv.concurrency}" if lv.concurrency is not None else f"{lv.rate_req_per_s} req/s"
        tput = lv.intervals.get("output_tok_per_s")
        ci = (
            ""
            if tput is None
            else f" ± {100 * (tput.relative or 0):.1f}% (95%: {tput.low:,.1f} to {tput.high:,.1f})"
        )
        noisy = f" · NOISY (interval over ±5%): {', '.join(lv.noisy)}" if lv.noisy else ""
        out.append(f"repeats {where}: {lv.repeats} runs · output {lv.output_tok_per_s:,.1f} tok/s{ci}{noisy}")
    return out


def _reasoning(stage: Stage) -> list[str]:
    r = stage.reasoning
    if r is None:
        return []
    share = "-" if r.reasoning_share is None else f"{r.reasoning_share:.1%}"
    think, tpot_r, tpot_a = r.think_ms, r.tpot_reasoning_ms, r.tpot_answer_ms
    return [
        f"  reasoning ({r.requests} requests): {r.reasoning_tokens:,} reasoning + {r.answer_tokens:,}"
        f" answer tokens ({share} reasoning)"
        + (f" · thinking (TTFOT - TTFT) p50 {_num(think.p50)} ms" if think else "")
        + (
            f" · {by_key('tpot_reasoning').short} {_num(tpot_r.p50)} / answer {_num(tpot_a.p50)} ms"
            if tpot_r and tpot_a
            else ""
        )
    ]


def _sessions(stage: Stage) -> list[str]:
    s = stage.sessions
    if s is None:
        return []
    lines = []
    if s.completed or s.failed or s.unfinished:
        d, worst = s.duration_ms, s.worst_ttft_ms
        lines.append(
            f"  sessions: completed {s.completed} ({_num(s.completed_per_s, 3)}/s), failed {s.failed},"
            f" unfinished {s.unfinished}"
            + (f" · duration p50 {_num(d.p50 / 1000)} / p90 {_num(d.p90 / 1000)} s" if d else "")
            + (f" · worst turn TTFT p90 {_num(worst.p90)} ms" if worst else "")
            + (f" · {_num(s.turns_per_session.mean, 1)} turns" if s.turns_per_session else "")
            + (f", {_num(s.requests_per_session.mean, 1)} requests each" if s.requests_per_session else "")
        )
    if s.replay is not None:
        lines.append(_replay(s.replay))
    if s.cache_hit_rate_by_turn:
        shares = " ".join(f"{turn}:{rate:.0%}" for turn, rate in list(s.cache_hit_rate_by_turn.items())[:12])
        lines.append(f"  prefix cache hit rate by turn (server's usage): {shares}")
    return lines


def _replay(r: ReplaySummary) -> str:
    """How far the completed recorded sessions strayed from the recording, in one line."""
    turns = r.turns_live + r.turns_spliced + r.turns_recorded
    share = f" ({r.turns_spliced / turns:.0%})" if turns and r.turns_spliced else ""
    parts = [f"{r.turns_live} live", f"{r.turns_spliced} spliced{share}"]
    if r.turns_recorded:
        parts.append(f"{r.turns_recorded} sent as recorded")
    return (
        f"  replay of {r.sessions} recorded sessions: {turns} turns, {', '.join(parts)}"
        f" · {r.turns_cut} cut at max_tokens · {r.sessions_spliced} sessions spliced at least once"
    )


def _tenants(stage: Stage) -> list[str]:
    t = stage.tenants
    if t is None:
        return []
    shares = ", ".join(
        f"{name} {_num(s.share_over_weight)}"
        for name, s in t.tenants.items()
        if s.share_over_weight is not None
    )
    line = f"  tenants: Jain's index {_num(t.jain_index, 3)} over goodput share / weight ({shares or '-'})"
    if t.worst_ttft_p99_tenant and t.ttft_p99_worst_over_best is not None:
        line += (
            f" · p99 TTFT worst {t.worst_ttft_p99_tenant} = {_num(t.ttft_p99_worst_over_best)}x"
            f" best {t.best_ttft_p99_tenant}"
        )
    return [line]


def _headline(summary: Summary) -> list[str]:
    """A sweep's answer in one line, and where it saturated (a plain run's one level has none)."""
    head = summary.headline
    if head is None or len(head.levels) < 2:
        return []
    where = f" at C={head.peak_concurrency}" if head.peak_concurrency is not None else ""
    if head.peak_rate_req_per_s is not None:
        where = f" at {head.peak_rate_req_per_s:g} req/s"
    return [
        f"headline: single-stream {_num(head.single_stream_tok_per_s, 1)} tok/s"
        f" · peak {_num(head.peak_tok_per_s, 1)} tok/s{where}"
        f" · saturation: {saturation_text(head.saturation)}"
    ]


def render(summary: Summary, results_path: str | None = None) -> str:
    run = summary.run
    out = [
        "",
        f"llmload · {run.target} · model {run.model or '?'} · run {run.id}"
        + ("" if summary.complete else " · INCOMPLETE"),
    ]
    out += [render_stage(stage) for stage in summary.stages]
    out += _repeats(summary)
    if summary.headline and (best := summary.headline.cheapest) is not None:
        where = f"C={best.concurrency}" if best.rate_req_per_s is None else f"{best.rate_req_per_s:g} req/s"
        among = "among the stages that met every SLO" if best.under_slo else "(no --slo: every stage counted)"
        usd = f"${best.usd_per_m_output_tokens:,.4f}/M output tokens"
        out.append(f"cheapest: stage {best.stage} ({where}) at {usd} {among}")
    out += _headline(summary)
    out += [f"warning: {w}" for w in summary.warnings]
    exit_ = summary.exit
    if exit_:
        out.append(f"exit {exit_.code} ({exit_.name})")
        out += [f"  - {reason}" for reason in exit_.reasons]
        for error in exit_.errors:
            said = f": {error.message!r}" if error.message else ""
            status = f" (HTTP {error.status})" if error.status else ""
            out.append(f"  error {error.kind}: {error.count:,}{status}{said}")
    if results_path:
        out.append(f"results: {results_path} (report.html, summary.json, requests*.jsonl)")
    if exit_ and exit_.line:
        out.append(f"llmload: {exit_.line}")  # the one line that says how the run ended
    return "\n".join(out) + "\n"
