"""The API key is read in one place, by the variable the user names (``config/apikey.py``)."""

from __future__ import annotations

from pathlib import Path

from llmload.cli import sweep
from llmload.cli.locust_call import LocustCall
from llmload.config.apikey import DEFAULT_ENV, ENV_OF_ENV, key_env, read_api_key
from llmload.config.options import BY_FLAG

SRC = Path(__file__).resolve().parents[3] / "src" / "llmload"


def test_the_flag_then_llmload_api_key_env_then_openai_api_key() -> None:
    environ = {"OPENAI_API_KEY": "sk-openai", "TEAM_KEY": "sk-team", "OTHER": "sk-other"}
    assert read_api_key(None, environ) == "sk-openai"
    assert read_api_key(None, {**environ, ENV_OF_ENV: "TEAM_KEY"}) == "sk-team"
    assert read_api_key("OTHER", {**environ, ENV_OF_ENV: "TEAM_KEY"}) == "sk-other"
    assert key_env(None, {}) == DEFAULT_ENV


def test_an_unset_or_empty_variable_is_no_key() -> None:
    assert read_api_key("TEAM_KEY", {"OPENAI_API_KEY": "sk-openai"}) is None
    assert read_api_key("TEAM_KEY", {"TEAM_KEY": ""}) is None


def test_the_helper_names_the_option_s_own_default_and_variable() -> None:
    option = BY_FLAG["--api-key-env"]
    assert (option.default, option.env) == (DEFAULT_ENV, ENV_OF_ENV)


def test_the_default_variable_is_written_once_in_src() -> None:
    # Every other reader goes through read_api_key: one that named the variable itself ignored
    # --api-key-env (a sweep against a server with a key in another variable stopped at a 401).
    counts = {p: p.read_text(encoding="utf-8").count('"OPENAI_API_KEY"') for p in SRC.rglob("*.py")}
    found = [p for p, n in counts.items() for _ in range(n)]
    assert found == [SRC / "config" / "apikey.py"]


def test_a_sweep_takes_api_key_env_and_passes_it_on_only_when_given() -> None:
    given = sweep._parser().parse_args(["--sim", "vllm", "--api-key-env", "TEAM_KEY"])
    command = LocustCall.parsed(given).command("http://127.0.0.1:9")
    assert command[command.index("--api-key-env") + 1] == "TEAM_KEY"
    # not given: Locust reads LLMLOAD_API_KEY_ENV (or its default) itself, as the sweep did
    assert "--api-key-env" not in LocustCall.parsed(sweep._parser().parse_args(["--sim", "vllm"])).command(
        "h"
    )
