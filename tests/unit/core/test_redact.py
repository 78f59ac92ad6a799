"""Secrets never printed: what redact masks, and what it leaves alone."""

from __future__ import annotations

from llmload.core.redact import redact_argv, redact_headers, redact_text, redact_url

KEY = "sk-canary-0123456789abcdef"


def test_url_passwords_are_masked_and_the_rest_kept() -> None:
    assert redact_url("http://user:secret@gpu-box:8000/v1") == "http://user:***@gpu-box:8000/v1"
    assert redact_url("http://gpu-box:8000") == "http://gpu-box:8000"
    assert redact_text("at https://a:b@h/x and http://h") == "at https://a:***@h/x and http://h"


def test_secret_headers_are_masked_others_kept() -> None:
    got = redact_headers(f"Authorization: Bearer {KEY}; X-Request-Tag: run-1; api-key: {KEY}")
    assert got == "Authorization: ***; X-Request-Tag: run-1; api-key: ***"


def test_free_text_loses_bearer_tokens_keys_and_key_fields() -> None:
    text = f'rejected Bearer {KEY} ({{"api_key": "{KEY}", "model": "m"}}) token={KEY}'
    out = redact_text(text)
    assert KEY not in out
    assert '"model": "m"' in out and "Bearer ***" in out


def test_echoed_command_lines_are_safe() -> None:
    argv = [
        "-f",
        "x.py",
        "--host",
        "http://u:pw@h:1",
        "--extra-header",
        f"Authorization: Bearer {KEY}",
        f"--extra-header=X-Api-Key: {KEY}",
        "--max-tokens",
        "128",
    ]
    out = " ".join(redact_argv(argv))
    assert KEY not in out and "pw" not in out
    assert "--max-tokens 128" in out and "http://u:***@h:1" in out
