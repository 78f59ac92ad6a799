"""Secrets never printed: what every echoed command line, message, summary and report passes
through.

A secret reaches llmload three ways: the API key from the environment (never a flag, so never
echoed), a header given with ``--extra-header 'Authorization: Bearer ...'``, and a password in a
URL (``http://user:secret@host``). Values of secret-like headers and URL passwords become
``***``; so do bearer tokens and ``sk-`` keys that a server may echo back in an error body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
_SECRET_HEADER = re.compile(r"(authorization|api[-_]?key|token|secret|cookie|password)", re.I)
# "Name: value" pairs as --extra-header takes them, ';'-separated.
_HEADER_PAIR = re.compile(r"(?P<name>[A-Za-z0-9_-]+)\s*:\s*(?P<value>[^;]*)")
_URL_PASSWORD = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/:@\s]*):(?P<password>[^/@\s]+)@", re.I
)
_BEARER = re.compile(r"\b(?P<kind>Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+", re.I)
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
_SECRET_FIELD = re.compile(
    r'(?P<name>"?(?:[A-Za-z0-9_-]*(?:api[-_]?key|authorization|token|'
    r'secret|password))"?\s*[:=]\s*"?)(?P<value>[^",;\s}]+)',
    re.I,
)


def redact_url(url: str) -> str:
    """``http://user:secret@host/`` -> ``http://user:***@host/``; anything else unchanged."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}{port}"))


def redact_headers(text: str) -> str:
    """``--extra-header``'s value with the values of secret-like headers masked."""

    def mask(m: re.Match[str]) -> str:
        if _SECRET_HEADER.search(m["name"]):
            return f"{m['name']}: {MASK}"
        return m.group(0)

    return _HEADER_PAIR.sub(mask, text)


def redact_text(text: str) -> str:
    """Free text (an error body, a log line): URL passwords, bearer tokens, keys and
    ``"api_key": "..."``-like fields masked."""
    text = _URL_PASSWORD.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _BEARER.sub(lambda m: f"{m['kind']} {MASK}", text)
    text = _KEY_LIKE.sub(MASK, text)
    return _SECRET_FIELD.sub(lambda m: f"{m['name']}{MASK}", text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to echo: header values after ``--extra-header`` and URL passwords."""
    out: list[str] = []
    header_next = False
    for arg in argv:
        if header_next:
            out.append(redact_headers(arg))
        elif arg.startswith("--extra-header="):
            out.append("--extra-header=" + redact_headers(arg.removeprefix("--extra-header=")))
        else:
            out.append(redact_text(arg))
        header_next = arg == "--extra-header"
    return out
