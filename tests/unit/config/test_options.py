"""Bad options stop the run before it starts, with one line naming the option and its value."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from llmload.config.args import to_config
from llmload.config.options import defaults
from llmload.errors import ConfigError


def options(**overrides: Any) -> argparse.Namespace:
    values = defaults()
    values.update(host="http://127.0.0.1:8000", num_users=4)
    values.update(overrides)
    return argparse.Namespace(**values)


def test_defaults_build_a_config_without_secrets_in_public_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    config = to_config(options())
    assert config.request.api_key == "sk-secret"
    assert "sk-secret" not in repr(config) and "sk-secret" not in str(config.public_dict())
    assert config.transport.pool_size == 4 and config.request.stream


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"max_tokens": -3}, "--max-tokens"),
        ({"prompt_tokens": 0}, "--prompt-tokens"),
        ({"output_jitter": 1.5}, "--output-jitter"),
        ({"dataset": "/nonexistent/data.jsonl"}, "--dataset"),
        ({"extra_body": "{bad"}, "--extra-body"),
        ({"extra_body": "[1, 2]"}, "--extra-body"),
        ({"extra_header": "no-colon"}, "--extra-header"),
        ({"transport": "carrier-pigeon"}, "--transport"),
        ({"host": "ftp://x"}, "--host"),
        ({"host": None}, "--host"),
        ({"warmup_s": -1.0}, "--warmup-s"),
        ({"http2": True}, "--http2"),
    ],
)
def test_bad_option_names_itself(overrides: dict[str, Any], option: str) -> None:
    with pytest.raises(ConfigError) as info:
        to_config(options(**overrides))
    assert info.value.option == option
    assert str(info.value).startswith(option)


def test_extra_body_and_headers_are_parsed() -> None:
    config = to_config(options(extra_body='{"temperature": 0}', extra_header="X-A: 1; X-B: two"))
    assert dict(config.request.extra_body) == {"temperature": 0}
    assert config.request.extra_headers == (("X-A", "1"), ("X-B", "two"))
