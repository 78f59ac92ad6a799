"""--tenants: the TOML file read and checked whole, and each request's tenant drawn by weight."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from llmload.config.tenants import load_tenants, pick
from llmload.errors import ConfigError

MIX = """
[tenants.chat]
weight = 3
model = "llama-3-8b"
headers = { "X-Tenant" = "chat" }
max_tokens = 128
slo = "ttft_p99_ms<=500"

[tenants.summarise]
weight = 1
model = "lora-summarise"
prompt_tokens = 2000
"""


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "tenants.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_mix_reads_each_tenants_own_settings(tmp_path: Path) -> None:
    chat, summarise = load_tenants(_write(tmp_path, MIX))
    assert (chat.name, chat.weight, chat.model, chat.max_tokens, chat.prompt_tokens) == (
        "chat", 3.0, "llama-3-8b", 128, None,
    )  # fmt: skip
    assert chat.headers == (("X-Tenant", "chat"),) and chat.request_name == "tenant:chat"
    assert [rule.key for rule in chat.slo] == ["ttft_p99_ms"] and summarise.slo == ()
    assert summarise.prompt_tokens == 2000 and summarise.weight == 1.0
    assert load_tenants("") == ()


def test_requests_go_to_tenants_by_weight_the_same_way_every_time(tmp_path: Path) -> None:
    mix = load_tenants(_write(tmp_path, MIX))
    picks = Counter(pick(mix, 9, user, request).name for user in range(40) for request in range(100))
    assert picks == Counter(pick(mix, 9, user, request).name for user in range(40) for request in range(100))
    assert 0.72 < picks["chat"] / 4000 < 0.78


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no [tenants.NAME] table"),
        ("[tenants.a]\nweight = 0\n", "weight must be a number above 0"),
        ("[tenants.a]\nmax_tokens = 0\n", "max_tokens must be"),
        ("[tenants.a]\nmodl = 'x'\n", "unknown keys"),
        ("[tenants.a]\nheaders = { X = 1 }\n", "headers must be"),
        ("[tenants.a\n", "not TOML"),
    ],
)
def test_a_wrong_file_is_one_line_naming_the_tenant(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match="--tenants") as raised:
        load_tenants(_write(tmp_path, text))
    assert problem in str(raised.value)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read it"):
        load_tenants(str(tmp_path / "none.toml"))
