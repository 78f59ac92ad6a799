"""``llmload tune`` end to end: the shipped experiment files, each configuration's server started
as a real child process, waited for, swept by real Locust and stopped; a configuration that
fails; Ctrl+C in the middle and ``--resume``; and an answer that agrees with the numbers."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.sim.model import per_stream_decode_tok_per_s, stage_output_tok_per_s
from llmload.sim.profiles import get_profile
from llmload.target.launch import free_port
from tests.e2e.conftest import REPO
from tests.support.llama import built
from tests.support.schema import read_checked
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

TUNE = [sys.executable, "-m", "llmload.cli", "tune"]


def tune(*args: str | Path, timeout_s: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TUNE, *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=timeout_s, check=False
    )


def state(out: Path, name: str) -> dict[str, Any]:
    value: dict[str, Any] = orjson.loads((out / name / "configuration.json").read_bytes())
    return value


def best_in_slo(out: Path, names: list[str]) -> tuple[str, int, float]:
    """The fastest level that met every objective, over the configurations' own summaries (a
    search's are its probes' runs, one level down)."""
    found = []
    for name in names:
        swept = out / name / "summary.json"
        for path in [swept] if swept.is_file() else sorted((out / name).glob("*/summary.json")):
            for s in read_checked(path)["stages"]:
                met = all(o["met"] for o in s["slo"] or [])
                if s["output_tok_per_s"] is not None and met and not s["partial"]:
                    found.append((s["output_tok_per_s"], name, s["concurrency"]))
    tok_s, name, level = max(found)
    return name, level, tok_s


def _row(stdout: str, name: str) -> dict[str, str]:
    """A configuration's row of tune's console table, by header, cut where the dashes under the
    headers say each column is."""
    lines = stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---") and set(line) <= {"-", " "})
    spans = [m.span() for m in re.finditer(r"-+", lines[rule])]
    row = next(line for line in lines[rule + 1 :] if line.startswith(name + " "))
    return {lines[rule - 1][a:b].strip(): row[a:b].strip() for a, b in spans[:-1]} | {
        lines[rule - 1][spans[-1][0] :].strip(): row[spans[-1][0] :].strip()
    }


TOKENS = 64  # the engine comparison's answers: long enough for its claims, short to drain


def _engines_experiment(tmp_path: Path) -> Path:
    """The shipped engine comparison with what its claims need: answers of 64 tokens instead of
    256 (at 128 streams a request then takes 5 s, not 21, and so do the warm-up and the drain of
    every configuration), 8 s windows, and SGLang loading for 7 s past a log stall of 3 s instead
    of 12 s and 5 s (about 7 minutes here become about 3). The speeds it is judged against are
    the simulator's model at that length (the shipped file's 256 give the engine table itself,
    which test_sweep.py checks)."""
    text = (REPO / "experiments" / "engines-sim.toml").read_text()
    shorter = (
        ("stage_s = 12", f"stage_s = 8\nmax_tokens = {TOKENS}"),
        ("load_s = 12", "load_s = 7"),
        ("log_stall_s = 5", "log_stall_s = 3"),
    )
    for shipped, short in shorter:
        assert shipped in text, shipped
        text = text.replace(shipped, short)
    path = tmp_path / "engines-sim.toml"
    path.write_text(text)
    return path


@pytest.mark.timeout(600)
@pytest.mark.long
def test_the_engine_comparison_as_one_experiment(tmp_path: Path, judge: Judge) -> None:
    proc = tune(_engines_experiment(tmp_path), "--results-dir", tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    out = tmp_path / "engines-sim"
    targets = ["vllm", "sglang-nograph", "sglang"]
    summaries = {name: read_checked(out / name / "summary.json") for name in [*targets, "vllm-eagle3"]}
    heads = {name: summary["headline"] for name, summary in summaries.items()}
    for name in targets:
        stages = {s["concurrency"]: s for s in summaries[name]["stages"]}
        for level in (1, 128):
            model = stage_output_tok_per_s(get_profile(name).params(), level, output_tokens=TOKENS)
            judge.client(summaries[name], window=False)
            judge.during(*stages[level]["window_ns"])
            judge.rate(stages[level]["output_tok_per_s"], model, 0.03, f"{name} tok/s at C={level}")
        assert heads[name]["single_stream_tok_per_s"] == stages[1]["output_tok_per_s"]
        assert heads[name]["peak_tok_per_s"] == stages[128]["output_tok_per_s"]
    for name in heads:
        reset = {"vllm": "/reset_prefix_cache", "sglang": "/flush_cache"}[get_profile(name).engine]
        assert state(out, name)["cache_reset"] == f"cache reset: POST {reset} 200", state(out, name)
    nograph = read_checked(out / "sglang-nograph" / "summary.json")
    assert any("CUDA graphs are disabled" in w for w in nograph["warnings"])
    # the slow start (7 s of loading, the log moving) is waited out, not called a hang (3 s)
    ready = re.search(r"\[sglang\] ready after ([0-9.]+) s", output)
    # not timing: a floor of a wait, which noise only lengthens
    assert ready and float(ready.group(1)) >= 7, output[-3000:]
    # 2,199 against 2,057 tok/s at C=128 (the model at 64 tokens), each judged within 3%: SGLang
    # with graphs is the best in SLO; vLLM's TPOT at C=128 (about 86 ms) misses the 70 ms
    # objective, so its highest level is C=1.
    name, level, tok_s = best_in_slo(out, [*targets, "vllm-eagle3"])
    assert (name, level) == ("sglang", 128)
    line = orjson.loads((out / "tune.json").read_bytes())["recommendation"]
    assert line.startswith(f"best under 'tpot_p50_ms<=70': sglang at C=128, {tok_s:.1f} tok/s"), line
    assert "sglang-nograph reaches" in line
    assert re.search(r"^vllm\s+0\s+vllm\s+complete\s+[0-9,.]+\s+[0-9,.]+\s+1\.00\s", proc.stdout, re.M), (
        proc.stdout
    )
    assert (
        line in (out / "comparison.md").read_text()
        and "disable_cuda_graph" in (out / "comparison.md").read_text()
    )
    assert "<h1>llmload tune: engines-sim</h1>" in (out / "report.html").read_text()
    _check_the_drafter(out, proc.stdout, heads, judge)
    _check_no_answer_changed(out, proc.stdout, list(heads))

    again = tune(tmp_path / "engines-sim.toml", "--results-dir", tmp_path)
    assert again.returncode == 2 and "--resume continues it" in again.stderr, again.stderr


def _check_the_drafter(out: Path, stdout: str, heads: dict[str, Any], judge: Judge) -> None:
    """EAGLE-3 on vLLM: twice one stream's speed, less than vLLM's throughput at 128 streams."""
    eagle, vllm = get_profile("vllm-eagle3").params(), get_profile("vllm").params()
    head = heads["vllm-eagle3"]
    summary = read_checked(out / "vllm-eagle3" / "summary.json")
    single, peak = summary["stages"][0], summary["stages"][-1]
    judge.client(summary, window=False)
    # each request's tokens per step are random (2.53 on average), so one stream's speed over the
    # window's few requests spreads by about 2.5% (1 sigma, 8 s windows); 128 streams average it out
    judge.during(*single["window_ns"])
    model_single = per_stream_decode_tok_per_s(eagle, 1, output_tokens=TOKENS)
    judge.rate(head["single_stream_tok_per_s"], model_single, 0.08, "EAGLE-3 single-stream tok/s")
    # At 128 streams one step carries about 320 tokens (3% of an 8 s window), and the window's
    # edges fall inside steps: the client's count and the server's (scraped at instants near the
    # edges) may each be off by a step. Against the model it also moves with the acceptance the
    # drafts happened to get (2.50 for an expected 2.53 in one CI run): the model is scaled by
    # the acceptance length observed.
    server, spec = peak["server"], peak["server"]["spec_decode"]
    step_share = server["running"]["mean"] * spec["mean_acceptance_length"] / peak["window_output_tokens"]
    judge.during(*peak["window_ns"])
    what = "EAGLE-3 tok/s at C=128 against the server's own count"
    judge.rate(peak["output_tok_per_s"], server["generation_tok_per_s"], 2 * step_share, what)
    expected = eagle.speculation.mean_tokens_per_step if eagle.speculation else 1.0
    scaled = (
        stage_output_tok_per_s(eagle, 128, output_tokens=TOKENS) * spec["mean_acceptance_length"] / expected
    )
    judge.rate(head["peak_tok_per_s"], scaled, 0.03 + step_share, "EAGLE-3 peak tok/s against the model")
    # The crossover the speeds above were judged against: twice vLLM's one stream, 15 % less at
    # 128 streams (the profiles' arithmetic, no clock involved)
    assert model_single > 1.8 * per_stream_decode_tok_per_s(vllm, 1)  # not timing: the profiles
    assert stage_output_tok_per_s(eagle, 128) < 0.93 * stage_output_tok_per_s(vllm, 128)  # not timing: ditto
    row = _row(stdout, "vllm-eagle3")
    tokens_per_chunk, acceptance = float(row["tok/chunk"]), float(row["accept"])
    mean = eagle.speculation.mean_tokens_per_step if eagle.speculation else 0.0
    assert tokens_per_chunk == pytest.approx(mean, rel=0.05), row
    assert acceptance == pytest.approx((mean - 1) / 3, rel=0.08), row
    assert any("speculative decoding is on" in w for w in summary["warnings"]), summary["warnings"]
    assert vllm.speculation is None


def _check_no_answer_changed(out: Path, stdout: str, names: list[str]) -> None:
    """The simulator's answers depend on the prompt alone: nothing drifts, drafter or load."""
    for name in names:
        probes = orjson.loads((out / name / "probes.json").read_bytes())
        assert probes["under_load_concurrency"] == 128
        assert all(probes["alone"]) and probes["errors"] == [], probes
        loaded = [t for t in probes["under_load"] if t is not None]
        assert loaded and loaded == probes["alone"][: len(loaded)], probes
        row = _row(stdout, name)
        assert row["answers changed under load"].startswith("0/"), row
        assert row["answers vs vllm"] == ("-" if name == "vllm" else "0/6 (0%)"), row
    assert "answers that changed" not in stdout


def _check_the_probes(out: Path, stdout: str) -> None:
    """The quality guard: six probes at temperature 0 alone, then riding along with C=4."""
    for name in ("np=1", "np=2", "np=4"):
        probes = orjson.loads((out / name / "probes.json").read_bytes())
        assert all(probes["alone"]) and probes["under_load_concurrency"] == 4, probes
        assert any(probes["under_load"] or []), probes  # answered under load, not after it
        row = _row(stdout, name)
        assert re.fullmatch(r"[0-9]/[1-6] \([0-9]+%\)", row["answers changed under load"]), row
        changed = _changed(out, name)
        assert row["answers vs np=1"] == ("-" if name == "np=1" else f"{changed}/6 ({changed / 6:.0%})"), row
    assert not (out / "bad-flag" / "probes.json").exists()


def _changed(out: Path, name: str) -> int:
    """Probes whose answer alone differs from np=1's, read from the two probes.json files."""
    first = orjson.loads((out / "np=1" / "probes.json").read_bytes())["alone"]
    own = orjson.loads((out / name / "probes.json").read_bytes())["alone"]
    return sum(a.strip() != b.strip() for a, b in zip(own, first, strict=True))


def _llama_experiment(tmp_path: Path) -> Path:
    """The shipped llama.cpp experiment, its grid as named configurations and one more whose
    server refuses a flag it does not know."""
    text = (REPO / "experiments" / "llama-slots.toml").read_text()
    configs = "".join(f'[[configs]]\nname = "np={n}"\nparams = {{ np = {n} }}\n\n' for n in (1, 2, 4))
    configs += '[[configs]]\nname = "bad-flag"\nparams = { np = 4, extra = "--no-such-flag" }\n'
    text = text.replace("[grid]\nnp = [1, 2, 4]\n", configs).replace("--no-webui", "--no-webui {extra}", 1)
    text = text.replace("context = 4096\n", 'context = 4096\nextra = ""\n')
    path = tmp_path / "llama.toml"
    path.write_text(text)
    return path


@pytest.mark.timeout(900)
def test_a_llama_server_grid_interrupted_and_resumed(tmp_path: Path) -> None:
    binary, model = built()
    experiment = _llama_experiment(tmp_path)
    args = [*TUNE, str(experiment), "--results-dir", str(tmp_path), "--set", f"binary={binary}"]
    args += ["--set", f"model={model}"]
    out = tmp_path / "llama-slots"
    log = tmp_path / "first.log"
    with log.open("w") as sink:
        first = subprocess.Popen(args, cwd=REPO, stdout=sink, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 600
    while "[np=2] starting" not in (seen := log.read_text()) and time.monotonic() < deadline:
        assert first.poll() is None, seen[-3000:]
        time.sleep(0.5)
    while "locust -f" not in seen.split("[np=2] starting")[-1] and time.monotonic() < deadline:
        time.sleep(0.5)
        seen = log.read_text()
    time.sleep(4)  # into np=2's first stage
    first.send_signal(signal.SIGINT)
    assert first.wait(120) == 130, log.read_text()[-3000:]
    seen = log.read_text()
    assert "interrupted" in seen
    assert state(out, "np=1")["status"] == "complete"
    assert state(out, "np=2")["status"] == "partial"
    assert not (out / "np=4").exists()
    # the interrupted server was stopped: nothing listens on its port any more
    assert "its server stopped" in seen, seen[-2000:]

    resumed = subprocess.run(
        [*args, "--resume"], cwd=REPO, capture_output=True, text=True, timeout=900, check=False
    )
    output = resumed.stdout + resumed.stderr
    assert resumed.returncode == 8, output[-4000:]  # CONFIGS_FAILED: the bad flag
    assert "[np=1] complete before: skipped" in output
    assert "[np=2] starting" in output and "[np=4] starting" in output
    for name in ("np=1", "np=2", "np=4"):
        assert state(out, name)["status"] == "complete", state(out, name)
    bad = state(out, "bad-flag")
    assert bad["status"] == "failed" and bad["server_exit"] not in (None, 0), bad
    assert "never ready: the server exited with" in bad["reason"], bad
    assert "invalid argument: --no-such-flag" in bad["log_tail"], bad["log_tail"][-1000:]

    # Each configuration's server started empty and was reset: the first requests of np=2 and
    # np=4 reuse at most the chat template's opening, never the previous configuration's prompts.
    for name in ("np=2", "np=4"):
        with (out / name / "requests.jsonl").open("rb") as f:
            firsts = [orjson.loads(line) for line in f][:4]
        assert all(r["server_timings"]["cache_n"] <= 40 for r in firsts), [
            r["server_timings"] for r in firsts
        ]
        slots = int(name.removeprefix("np="))
        assert state(out, name)["cache_reset"] == f"cache reset: erased {slots} slots", state(out, name)

    _check_the_probes(out, resumed.stdout)

    name, level, tok_s = best_in_slo(out, ["np=1", "np=2", "np=4"])
    line = orjson.loads((out / "tune.json").read_bytes())["recommendation"]
    assert line.startswith(f"best under 'tpot_p50_ms<=250': {name} at C={level}, {tok_s:.1f} tok/s"), line
    assert line in resumed.stdout and (out / "report.html").is_file()
    print(resumed.stdout[-3000:])


HOOKS = """
name = "hooks"

[server]
start = "START"
stop = "kill $(cat {dir}/sim.pid)"
url = "http://127.0.0.1:{sim_port}"
ready_timeout_s = 30

[params]
sim_port = PORT
fail = ""
model = "sim-llama-3-8b"

[[configs]]
name = "vllm"
params = { profile = "vllm" }

[[configs]]
name = "broken"
params = { profile = "vllm", fail = "echo the cluster said no; exit 3; " }

[[configs]]
name = "sglang"
params = { profile = "sglang" }

[[configs]]
name = "int4"
params = { profile = "vllm", model = "sim-llama-3-8b-int4" }

[[configs]]
name = "searched"
params = { profile = "vllm" }
client = { mode = "search", min = 1, max = 12, stage_s = 2 }

[client]
levels = [2]
stage_s = 3
max_tokens = 16
ignore_eos = true
slo = "tpot_p50_ms<=17"

[quality]
max_tokens = 8
"""


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


@pytest.mark.long
def test_a_server_started_and_stopped_by_hooks(tmp_path: Path, judge: Judge) -> None:
    """A server that lives elsewhere: start and stop hooks and its own URL, one configuration's
    start hook failing with the cluster's words, the next one started on the same port."""
    port = free_port()
    experiment = tmp_path / "hooks.toml"
    start = (
        "{fail}{python} -m llmload.sim --port {sim_port} --profile {profile} --model {model} --log-file {log}"
    )
    start += " >/dev/null 2>&1 & echo $! > {dir}/sim.pid"  # the server outlives its start hook
    experiment.write_text(HOOKS.replace("PORT", str(port)).replace("START", start))
    proc = tune(experiment, "--results-dir", tmp_path, "--max-answer-drift", "10%", timeout_s=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 8, output[-4000:]  # CONFIGS_FAILED: the broken start hook
    out = tmp_path / "hooks"
    for name, reset in (
        ("vllm", "/reset_prefix_cache"),
        ("sglang", "/flush_cache"),
        ("int4", "/reset_prefix_cache"),
    ):
        assert state(out, name)["status"] == "complete", state(out, name)
        assert state(out, name)["cache_reset"] == f"cache reset: POST {reset} 200"
        assert read_checked(out / name / "summary.json")["stages"][0]["requests"]["ok"] > 0
    broken = state(out, "broken")
    assert broken["status"] == "failed" and broken["server_exit"] == 3, broken
    assert "the cluster said no" in broken["log_tail"], broken
    # each stop hook ran: the port the servers shared is free again
    deadline = time.monotonic() + 10
    while not _refused(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _refused(port)
    # another checkpoint's name is another model to the simulator (its answers are seeded by the
    # request): every answer changed, so the guard keeps it out of the recommendation
    row = _row(proc.stdout, "int4")
    assert row["answers vs vllm"] == "6/6 (100%)", row
    assert row["verdict"].startswith("answers drifted against the first configuration: 6/6 (100%) > 10%"), row
    assert "int4, vs the first: 'What is the capital of France? Answer" in proc.stdout
    assert _row(proc.stdout, "sglang")["answers vs vllm"] == "0/6 (0%)"
    # a search instead of a sweep: vLLM's TPOT passes 17 ms at about 9 streams (11.6 ms + 0.55 ms
    # per stream); the configuration's highest level in SLO is the search's answer
    search = orjson.loads((out / "searched" / "searched.json").read_bytes())
    assert search["highest_passing"] is not None and search["lowest_failing"] is not None, search
    # Each probe's TPOT is the simulator's at its level (one step per token), to the histogram's
    # 1 %: so the search's answer is the model's, whatever the machine did to the probes.
    vllm = get_profile("vllm").params()
    for probe in sorted((out / "searched").glob("*/summary.json")):
        probed = read_checked(probe)
        judge.client(probed)
        for stage in probed["stages"]:
            level = stage["concurrency"]
            model_ms = 1e3 / per_stream_decode_tok_per_s(vllm, level, output_tokens=16)
            judge.close(
                stage["tpot_ms"]["p50"], model_ms, 0.3, Stat.MEDIAN, f"searched TPOT p50 at C={level}"
            )
    # not timing: the answer the probes judged above give, about 9 streams by the model
    assert 6 <= search["highest_passing"] < search["lowest_failing"] <= 12, search
    searched = _row(proc.stdout, "searched")
    assert searched["highest level in SLO"] == f"C={search['highest_passing']:g}", searched
    assert searched["verdict"].startswith("the highest concurrency meeting the objectives is"), searched
    line = orjson.loads((out / "tune.json").read_bytes())["recommendation"]
    name, level, tok_s = best_in_slo(out, ["vllm", "sglang", "searched"])
    assert line.startswith(f"best under 'tpot_p50_ms<=17': {name} at C={level}, {tok_s:.1f} tok/s"), line
