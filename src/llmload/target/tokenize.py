"""``--tokenize``: the server's tokenizer, asked once per process to calibrate prompt lengths.

Two ways to count: ``server``, the target's own ``POST /tokenize``, which vLLM and SGLang take
as ``{"model", "prompt"}`` (answering ``count`` and ``tokens``) and llama.cpp as
``{"content"}`` (answering ``tokens``); or a local ``tokenizer.json`` read with the
``tokenizers`` package, never downloaded from a hub. One chat request of a known prompt
(``max_tokens`` 1) measures what the chat template adds, from its ``usage.prompt_tokens``.
Control plane: httpx, a dozen calls at start, nothing on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from llmload.core.redact import redact_url
from llmload.errors import ConfigError, TargetError
from llmload.workload.scale import TokenScale, calibrate

Count = Callable[[str], int]
_TIMEOUT_S = 30.0


class ServerTokenizer:
    """``POST /tokenize`` on the target, in whichever body shape it takes (found on first use)."""

    def __init__(self, client: httpx.Client, base_url: str, model: str) -> None:
        self._client = client
        self._url = f"{base_url.rstrip('/')}/tokenize"
        self._model = model
        self._shape: str | None = None  # "prompt" (vLLM, SGLang) or "content" (llama.cpp)

    def __call__(self, text: str) -> int:
        if self._shape is not None:
            count = self._post(self._shape, text)
            if count is None:
                raise TargetError(f"{redact_url(self._url)} stopped answering: rerun, or --tokenize off")
            return count
        for shape in ("prompt", "content"):
            count = self._post(shape, text)
            if count:
                self._shape = shape
                return count
        raise TargetError(
            f"{redact_url(self._url)} does not tokenize (tried vLLM's and llama.cpp's request "
            "bodies): give the model's tokenizer.json (--tokenize FILE) or --tokenize off"
        )

    def _post(self, shape: str, text: str) -> int | None:
        body: dict[str, str] = (
            {"model": self._model, "prompt": text} if shape == "prompt" else {"content": text}
        )
        try:
            response = self._client.post(self._url, json=body)
            data = response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        count = data.get("count")
        if isinstance(count, int):
            return count
        tokens = data.get("tokens")
        return len(tokens) if isinstance(tokens, list) else None


def file_tokenizer(path: str) -> Count:
    """A tokenizer.json, counted with the ``tokenizers`` package (special tokens included, as a
    server counts them; the template probe makes up any difference)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        problem = "reading a tokenizer.json needs the tokenizers package: pip install tokenizers"
        problem += " (or --tokenize server)"
        raise ConfigError("--tokenize", path, problem) from None
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as exc:  # noqa: BLE001 (tokenizers raises a bare Exception for a bad file)
        raise ConfigError("--tokenize", path, f"not a tokenizer.json: {exc}") from None
    return lambda text: len(tokenizer.encode(text).ids)


def _served(client: httpx.Client, base_url: str, model: str) -> Callable[[str], int | None]:
    def served(text: str) -> int | None:
        body = {"model": model, "messages": [{"role": "user", "content": text}], "max_tokens": 1}
        try:
            response = client.post(f"{base_url.rstrip('/')}/v1/chat/completions", json=body)
            usage = response.json().get("usage") if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        return tokens if isinstance(tokens, int) else None

    return served


def token_scale(
    how: str,
    base_url: str,
    model: str,
    sample: Callable[[int, int], str],
    *,
    headers: Mapping[str, str],
    verify: bool | str = True,
) -> tuple[TokenScale, str | None]:
    """Calibrate with ``how`` ("server" or a tokenizer.json's path): the scale, and a warning
    when the chat template's share could not be measured."""
    with httpx.Client(headers=dict(headers), verify=verify, timeout=_TIMEOUT_S) as client:
        count = ServerTokenizer(client, base_url, model) if how == "server" else file_tokenizer(how)
        return calibrate(count, sample, _served(client, base_url, model))
