"""--history, --no-history and --label: declared once, taken by Locust, the environment and
llmload sweep|search|tune alike, and checked with the flag named."""

from __future__ import annotations

from pathlib import Path

import configargparse  # type: ignore[import-untyped]
import pytest

from llmload.cli import sweep, tune
from llmload.cli.locust_call import LocustCall
from llmload.config.args import add_options, to_config
from llmload.config.experiment import load_experiment
from llmload.config.settings import HistoryConfig, RunConfig
from llmload.errors import ConfigError


def config(*argv: str) -> RunConfig:
    parser = configargparse.ArgumentParser(prog="locust")
    add_options(parser)
    parser.add_argument("--host", default="http://127.0.0.1:9")
    return to_config(parser.parse_args(list(argv)))


@pytest.fixture(autouse=True)
def _no_store_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLMLOAD_HISTORY", "LLMLOAD_NO_HISTORY", "LLMLOAD_LABEL"):
        monkeypatch.delenv(name, raising=False)


def test_a_run_is_recorded_in_the_default_store_unless_told_otherwise() -> None:
    assert config().history == HistoryConfig(enabled=True, path=None, labels=())
    given = config(
        "--history", "/tmp/h.sqlite", "--label", "image=vllm:0.9.2", "--label", "hardware=h100,team=x"
    )
    assert given.history.path == "/tmp/h.sqlite"
    assert given.history.labels == (("image", "vllm:0.9.2"), ("hardware", "h100"), ("team", "x"))
    assert given.public_dict()["history"] == {
        "enabled": True,
        "path": "/tmp/h.sqlite",
        "labels": {"image": "vllm:0.9.2", "hardware": "h100", "team": "x"},
    }
    assert config("--no-history").history.enabled is False


def test_the_environment_gives_them_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMLOAD_HISTORY", "/tmp/env.sqlite")
    monkeypatch.setenv("LLMLOAD_LABEL", "image=a,hardware=b")
    got = config()
    assert (got.history.path, got.history.labels) == ("/tmp/env.sqlite", (("image", "a"), ("hardware", "b")))
    monkeypatch.setenv("LLMLOAD_NO_HISTORY", "true")
    assert config().history.enabled is False  # over a path the environment gave


@pytest.mark.parametrize(
    ("label", "problem"),
    [
        ("image", "give KEY=VALUE"),
        ("=x", "give KEY=VALUE"),
        ("a b=c", "give KEY=VALUE"),
        ("k=", "give KEY=VALUE"),
    ],
)
def test_a_label_that_is_no_pair_names_the_flag(label: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        config("--label", label)
    assert caught.value.option == "--label"


def test_a_key_labelled_twice_differently_is_refused() -> None:
    with pytest.raises(ConfigError, match="image is already labelled 'a'"):
        config("--label", "image=a", "--label", "image=b")
    assert config("--label", "image=a", "--label", "image=a").history.labels == (("image", "a"),)


def test_a_sweep_passes_them_on_to_its_locust_child() -> None:
    args = sweep._parser().parse_args(
        ["--sim", "vllm", "--history", "/tmp/h.sqlite", "--label", "a=1", "--label", "b=2", "--no-history"]
    )
    command = LocustCall.parsed(args).command("http://127.0.0.1:9")
    at = command.index("--history")
    assert command[at : at + 2] == ["--history", "/tmp/h.sqlite"] and "--no-history" in command
    assert [command[i + 1] for i, part in enumerate(command) if part == "--label"] == ["a=1", "b=2"]


def test_tune_gives_them_to_every_configuration_beside_the_files_own(tmp_path: Path) -> None:
    experiment = tmp_path / "e.toml"
    experiment.write_text(
        'name = "e"\n[server]\ncommand = "true"\nurl = "http://127.0.0.1:{port}"\n'
        '[client]\nlabel = ["team=x"]\nlevels = [1]\n[grid]\nflag = ["a", "b"]\n'
    )
    args = tune._parser().parse_args([str(experiment), "--history", "/tmp/t.sqlite", "--label", "image=y"])
    given = {"history": args.history, "no_history": args.no_history, "labels": args.label}
    loaded = tune._with_history(load_experiment(experiment, {}), **given)
    for c in loaded.configurations:
        assert c.client["history"] == "/tmp/t.sqlite" and c.client["label"] == ("team=x", "image=y")


@pytest.mark.parametrize(
    "url", ["postgresql://team:s3cret@db/llmload", "postgres://team@db/llmload?password=s3cret"]
)
def test_a_team_stores_password_is_not_recorded_with_the_run(url: str) -> None:
    recorded = config("--history", url).public_dict()["history"]
    assert isinstance(recorded, dict) and "s3cret" not in recorded["path"] and "***" in recorded["path"]
