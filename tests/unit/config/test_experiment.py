"""The experiment file of ``llmload tune``: configurations from a grid or a list, templates
filled from their parameters, and every mistake named before a server starts."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from llmload.config.experiment import client_argv, load_experiment, parse_experiment, render
from llmload.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
SERVER = {"command": "serve --port {port} -np {np}"}


def test_a_grid_is_every_combination_named_by_what_varies() -> None:
    e = parse_experiment(
        {"server": SERVER, "params": {"ctx": 4096}, "grid": {"np": [1, 2], "fa": ["on", "off"], "t": 1}},
        name="x",
    )
    assert [c.name for c in e.configurations] == ["np=1,fa=on", "np=1,fa=off", "np=2,fa=on", "np=2,fa=off"]
    assert e.configurations[1].params == {"ctx": 4096, "np": 1, "fa": "off", "t": 1}
    assert e.configurations[0].varied == ("fa", "np")
    assert e.configurations[0].dirname == "np=1_fa=on"


def test_named_configurations_carry_their_own_client_options() -> None:
    e = parse_experiment(
        {
            "server": {"command": "sim --profile {profile} --port {port}"},
            "configs": [
                {"name": "a", "params": {"profile": "vllm"}, "client": {"gpus": 2}},
                {"name": "b", "params": {"profile": "sglang"}},
            ],
            "client": {"levels": [1, 8], "gpus": 1, "ignore-eos": True, "no_stream": False},
        },
        name="x",
    )
    a, b = e.configurations
    assert client_argv(a.client) == ["--levels", "1,8", "--gpus", "2", "--ignore-eos"]
    assert client_argv(b.client) == ["--levels", "1,8", "--gpus", "1", "--ignore-eos"]
    assert a.varied == ("profile",)


def test_templates_fill_from_parameters_and_tunes_own_values() -> None:
    e = parse_experiment({"server": SERVER, "grid": {"np": [4]}}, name="x")
    values = e.configurations[0].values(port="8001", log="/tmp/l", python="py")
    assert render(e.server.command or "", values, "server.command") == "serve --port 8001 -np 4"
    assert render("{{literal}} {config}", values, "t") == "{literal} np=4"


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ({"server": {"command": "serve {nope}"}, "grid": {"np": [1]}}, "nope"),
        ({"server": SERVER}, "grid"),
        ({"server": SERVER, "grid": {"np": [1]}, "configs": [{"name": "a"}]}, "grid"),
        ({"server": {"command": "a", "start": "b"}, "grid": {"np": [1]}}, "either"),
        ({"server": {"start": "helm upgrade"}, "grid": {"np": [1]}}, "own URL"),
        ({"server": {**SERVER, "ready_timeout_s": -1}, "grid": {"np": [1]}}, "> 0"),
        ({"server": {**SERVER, "colour": "red"}, "grid": {"np": [1]}}, "unknown key"),
        ({"server": SERVER, "grid": {"np": [1]}, "client": {"host": "x"}}, "tune sets this"),
        ({"server": SERVER, "grid": {"port": [1]}}, "tune's own"),
        ({"server": SERVER, "configs": [{"params": {}}]}, "needs a name"),
        ({"server": SERVER, "configs": [{"name": "a b"}, {"name": "a_b"}]}, "share"),
    ],
)
def test_mistakes_are_named(data: dict[str, object], names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        parse_experiment(data, name="x")


def test_set_overrides_a_shared_parameter() -> None:
    e = parse_experiment(
        {
            "server": {"command": "{binary} -np {np} --port {port}"},
            "params": {"binary": "a"},
            "grid": {"np": [1]},
        },
        name="x",
        overrides={"binary": "/opt/llama-server"},
    )
    assert e.configurations[0].params["binary"] == "/opt/llama-server"


@pytest.mark.parametrize(
    ("name", "count"), [("llama-slots.toml", 3), ("engines-sim.toml", 4), ("gpu-engines.toml", 5)]
)
def test_the_shipped_experiments_load(name: str, count: int) -> None:
    path = REPO / "experiments" / name
    e = load_experiment(path)
    assert e.name == tomllib.loads(path.read_text())["name"] and len(e.configurations) == count
    assert e.quality is not None


def test_a_file_that_is_not_toml_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[server\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_experiment(bad)


def test_the_schema_accepts_the_shipped_experiments_and_rejects_a_reserved_name() -> None:
    schema = json.loads((REPO / "docs" / "experiment.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    shipped = sorted((REPO / "experiments").glob("*.toml"))
    assert shipped
    for path in shipped:
        assert not list(validator.iter_errors(tomllib.loads(path.read_text()))), path
    bad = {"server": {"command": "x"}, "grid": {"np": [1]}, "params": {"port": 1}}
    assert list(validator.iter_errors(bad))


def test_a_configuration_may_search_instead_of_sweeping(tmp_path: Path) -> None:
    from llmload.cli.tune_client import command, heaviest, parse_client

    e = parse_experiment(
        {
            "server": SERVER,
            "configs": [
                {"name": "swept", "params": {"np": 1}},
                {"name": "searched", "params": {"np": 2}, "client": {"mode": "search", "max": 64}},
            ],
            "client": {"levels": [1, 8], "slo": "tpot_p50_ms<=50"},
        },
        name="x",
    )
    swept, searched = e.configurations
    assert (swept.mode, searched.mode) == ("sweep", "search") and "mode" not in searched.client
    assert heaviest(swept, "http://h", tmp_path / "swept") == 8
    assert heaviest(searched, "http://h", tmp_path / "searched") == 64
    argv = command(searched, "http://h", tmp_path / "searched", prometheus_port=9999)
    assert argv[1:4] == ["-m", "llmload.cli", "search"] and argv[-3:] == ["--", "--prometheus-port", "9999"]
    assert argv[argv.index("--results-dir") + 1] == str(tmp_path / "searched")
    unjudged = parse_experiment(
        {"server": SERVER, "grid": {"np": [1]}, "client": {"mode": "search"}}, name="x"
    ).configurations[0]
    with pytest.raises(ConfigError, match="a search needs an objective"):
        parse_client(unjudged, "http://h", tmp_path)
    with pytest.raises(ConfigError) as info:
        parse_experiment({"server": SERVER, "grid": {"np": [1]}, "client": {"mode": "bisect"}}, name="x")
    assert info.value.option == "client.mode"
