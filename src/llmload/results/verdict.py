"""The verdict of a run: its exit code, one line that says why, and the evidence behind it.

Computed once, here, from the summary alone, so every reader agrees: the process's exit code,
the console, ``summary.json``'s ``exit``, the report's banner, the Prometheus exit gauge and
``llmload compare``. ``llmload report`` rebuilds the same verdict from an old summary.

What the summary must say for it (written by the run engine):

- ``run.stopped``: how the run ended early, if it did (``core/stop.py``): ``Interrupted`` (SIGINT
  or SIGTERM), ``FailedFast`` when the first requests all failed the same way
  (``failfast.py``), or ``Refused`` when it could not start (a 401 at its start, a worker's
  limits);
- per stage: ``requests`` (outcomes of the requests sent in the window), ``attempts`` (every
  request of the stage, warm-up and drain included), ``errors`` and ``error_samples`` (one
  server answer per kind), ``error_rate``, ``client_bound``, ``partial``;
- ``run.lost_workers`` of a distributed run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import orjson

from llmload.config.apikey import DEFAULT_ENV
from llmload.config.settings import ChecksConfig
from llmload.core.stop import FailedFast, Interrupted, Refused
from llmload.protocol.jsonvalue import JSON, obj
from llmload.results.exitcodes import PRECEDENCE, ExitCode
from llmload.results.slo import evaluate
from llmload.results.summary import ErrorCount, Exit, RunInfo, Summary
from llmload.results.summary_stage import ErrorExample, Stage

_MESSAGE_CHARS = 120  # of a server's answer, in the one line and the banner
_TOP_KINDS = 3


@dataclass(frozen=True, slots=True)
class Verdict:
    code: ExitCode
    line: str  # what the console prints last, and the report's banner
    reasons: tuple[str, ...]  # every condition that held, in PRECEDENCE order
    errors: tuple[ErrorCount, ...]  # the most frequent failure kinds, most frequent first

    @property
    def ok(self) -> bool:
        return self.code is ExitCode.OK

    def to_exit(self) -> Exit:
        """As ``summary.json`` records it."""
        return Exit(
            code=int(self.code),
            name=self.code.name.lower(),
            line=self.line,
            reasons=self.reasons,
            errors=self.errors,
        )


def server_message(detail: str | None) -> str:
    """The server's own words in an error answer: OpenAI's ``error.message`` where it used
    that shape, the text otherwise; one line, shortened."""
    text = (detail or "").strip()
    if text.startswith("{"):
        try:
            body = orjson.loads(text)
        except orjson.JSONDecodeError:
            body = None
        if isinstance(body, dict):
            inner = body.get("error", body)
            found = inner.get("message") if isinstance(inner, dict) else inner
            text = str(found if found is not None else body.get("detail", text))
    if text[:1] == "<":
        return "an HTML page, not an OpenAI answer"
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 3] + "..."


def hint(kind: str, status: int | None, run: RunInfo) -> str:
    """What the user can do about a failure of this kind."""
    request = obj(run.options.get("request") or {}, "options.request")
    key_env = request.get("api_key_env") or DEFAULT_ENV
    if status in (401, 403):
        if request.get("api_key_set"):
            return f"the server rejected the API key in ${key_env}: check it"
        return (
            f"the server wants an API key: export {key_env}=... (or name another variable with --api-key-env)"
        )
    if status == 404:
        return "check --host (the server's base URL, without /v1) and --model"
    if status == 429:
        return "the server is rate-limiting: lower the load or raise its limit"
    if status is not None and 400 <= status < 500:
        return "check --extra-body, --model and the prompt and output lengths"
    if status == 501:  # llama.cpp's answer on a route it serves only when started with a flag
        return "the server does not serve this API as started: see its message"
    if status is not None and status >= 500:
        return "the server failed: see its log"
    return {
        "connect_error": f"nothing accepted a connection at {run.target}: is the server "
        "up and --host right? (`llmload wait --host URL` waits for it)",
        "connect_timeout": f"{run.target} did not accept a connection in time: is "
        "--host reachable from here?",
        "first_token_timeout": "the server accepted the requests but sent no token within "
        "--first-token-timeout",
        "stream_broken": "the answer was no OpenAI event stream: is --host the API's base URL? "
        "(--no-stream for a server that cannot stream)",
        "bad_payload": "the answer was not OpenAI-compatible: is --host the API's base URL?",
        "error_event": "the server reported an error inside the stream",
        "check_failed": "the scenario's own check rejected the answers (each reason is the "
        "error in requests.jsonl): is the check right, and is the server the model it expects?",
    }.get(kind, "see requests.jsonl for every failed request")


def top_errors(stages: Sequence[Stage]) -> tuple[ErrorCount, ...]:
    """Failure kinds over every stage and phase, most frequent first, one sample each."""
    counts: dict[str, int] = {}
    samples: dict[str, ErrorExample] = {}
    for stage in stages:
        for kind, n in (stage.attempts.errors or stage.errors).items():
            counts[kind] = counts.get(kind, 0) + n
        for kind, sample in stage.error_samples.items():
            samples.setdefault(kind, sample)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:_TOP_KINDS]
    none = ErrorExample(status=None, message="")
    return tuple(
        ErrorCount(
            kind=kind,
            count=n,
            status=samples.get(kind, none).status,
            message=server_message(samples.get(kind, none).message),
        )
        for kind, n in ranked
    )


def _nothing_measured(stages: Sequence[Stage], run: RunInfo, server: Mapping[str, JSON]) -> str:
    """Why no stage has a request in its window, in the user's terms."""
    finished = sum(s.attempts.finished for s in stages)
    unfinished = sum(s.attempts.unfinished for s in stages)
    if finished + unfinished == 0 and server.get("reachable") is False:
        return (
            f"no request was sent: {run.target} gave no HTTP answer to llmload's "
            "first look at it, and the run time ran out meanwhile: is the server up? "
            "(`llmload wait --host URL` waits for it)"
        )
    if finished + unfinished == 0:
        return "no request was sent: check -u (users) and -t (run time)"
    if finished == 0:
        return (
            f"{unfinished} requests were sent and none finished before the run ended: the "
            f"server at {run.target} never answered them"
        )
    window = max(s.duration_s for s in stages)
    if window > 0:
        # The window opened, but every user was still in a request sent before it: requests
        # take longer than the window lasted (a CPU-bound server, long outputs, -t too short).
        return (
            f"the measured window lasted {window:.1f} s and no request was sent inside it (the "
            f"{finished} that finished were sent during the warm-up): run longer (-t) so the "
            "window holds whole requests"
        )
    return (
        f"the warm-up never completed ({finished} requests finished): run longer or lower --warmup-requests"
    )


def _error_reasons(stages: Sequence[Stage], limit: float | None) -> list[str]:
    if limit is None:
        return []
    reasons = []
    for stage in stages:
        rate = stage.error_rate
        if rate is None or rate <= limit:
            continue
        kinds = ", ".join(f"{kind} {n}" for kind, n in stage.errors.items())
        reasons.append(
            f"{stage.name}: error rate {rate:.2%} > limit {limit:.2%}" + (f" ({kinds})" if kinds else "")
        )
    return reasons


def _slo_reasons(stages: Sequence[Stage], checks: ChecksConfig) -> list[str]:
    reasons = []
    for stage in stages:
        misses = [r.describe() for r in evaluate(checks.slo, stage) if not r.passed]
        if misses:
            reasons.append(f"{stage.name}: SLO missed: {'; '.join(misses)}")
    return reasons


def _interrupted(summary: Summary) -> list[str]:
    stopped = summary.run.stopped
    if not isinstance(stopped, Interrupted):
        return []
    partial = [s.name for s in summary.stages if s.partial]
    cut = f"; {', '.join(partial)} cut short" if partial else ""
    if stopped.process:  # a worker, not the run: the others went on without it
        return [
            f"interrupted: {stopped.process} was stopped by SIGINT or SIGTERM and the run "
            f"went on without its users{cut}"
        ]
    return [f"interrupted (SIGINT or SIGTERM): the results hold what was measured until then{cut}"]


def _could_not_start(summary: Summary) -> list[str]:
    run, stages = summary.run, summary.stages
    stopped = run.stopped
    if isinstance(stopped, Refused):
        who = f"{stopped.process}: " if stopped.process else ""
        return [f"could not start: {who}{stopped.line}"]
    if isinstance(stopped, FailedFast):
        said = ErrorCount(
            kind=stopped.kind,
            count=stopped.requests,
            status=stopped.status,
            message=server_message(stopped.message),
        )
        return [
            f"every request failed: {said.describe()} — "
            f"{hint(said.kind, said.status, run)} (stopped after the first "
            f"{said.count} requests)"
        ]
    finished = sum(s.attempts.finished for s in stages)
    if finished and finished == sum(s.attempts.failed for s in stages):
        # Not one answer in the whole run: no --max-error-rate makes that a measurement.
        worst = top_errors(stages)[0]
        return [
            f"every request failed: {worst.describe()} — "
            f"{hint(worst.kind, worst.status, run)} ({finished} requests)"
        ]
    if any(s.requests.total for s in stages):
        return []
    return [f"nothing measured: {_nothing_measured(stages, run, summary.server)}"]


def judge(summary: Summary | None, checks: ChecksConfig) -> Verdict:
    """The verdict of a run from its summary (None: the run never got far enough to write one).

    Every stage must meet every objective; ``checks.max_error_rate`` None disables the error
    check.
    """
    if summary is None:
        return Verdict(
            ExitCode.COULD_NOT_START,
            "nothing measured: the run wrote no summary",
            ("the run wrote no summary: it never started measuring",),
            (),
        )
    stages = summary.stages
    found: dict[ExitCode, list[str]] = {
        ExitCode.INTERRUPTED: _interrupted(summary),
        ExitCode.COULD_NOT_START: _could_not_start(summary),
        ExitCode.INCOMPLETE: [
            f"worker {w.worker} was lost; up to {w.requests_missing_at_most} requests may be missing"
            for w in summary.run.lost_workers
        ],
        ExitCode.ERRORS_OVER_LIMIT: _error_reasons(stages, checks.max_error_rate),
        ExitCode.SLO_MISSED: _slo_reasons(stages, checks),
        ExitCode.CLIENT_BOUND: [
            f"{s.name}: client-bound, the numbers measure the load generator"
            for s in stages
            if s.client_bound
        ]
        if checks.fail_on_client_bound
        else [],
    }
    if found[ExitCode.COULD_NOT_START]:  # nothing measured: no error rate or SLO to speak of
        found[ExitCode.ERRORS_OVER_LIMIT] = found[ExitCode.SLO_MISSED] = []
    reasons = tuple(reason for code in PRECEDENCE for reason in found[code])
    code = next((code for code in PRECEDENCE if found[code]), ExitCode.OK)
    errors = top_errors(stages)
    return Verdict(code, _line(code, reasons, errors, stages), reasons, errors)


def _line(
    code: ExitCode, reasons: Sequence[str], errors: Sequence[ErrorCount], stages: Sequence[Stage]
) -> str:
    if code is ExitCode.OK:
        requests = sum(s.requests.total for s in stages)
        plural = "" if len(stages) == 1 else "s"
        return f"ok: every check passed ({len(stages)} stage{plural}, {requests:,} measured requests)"
    first = reasons[0]
    if code is ExitCode.ERRORS_OVER_LIMIT and errors:
        first += f"; {errors[0].describe()}"
    if code is ExitCode.COULD_NOT_START or first.startswith("interrupted"):
        return first
    return f"{code.name.lower().replace('_', ' ')}: {first}"
