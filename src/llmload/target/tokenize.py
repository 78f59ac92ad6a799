"""``--tokenize``: the server's tokenizer, asked once per process to calibrate prompt lengths.

Two ways to count: ``server``, the target's own ``POST /tokenize``, which vLLM and SGLang take
as ``{"model", "prompt"}`` (answering ``count`` and ``tokens``) and llama.cpp as
``{"content"}`` (answering ``tokens``); or a local ``tokenizer.json`` read with the
``tokenizers`` package, never downloaded from a hub. One chat request of a known prompt
(``max_tokens`` 1) measures what the chat template adds, from its ``usage.prompt_tokens``.
``auto`` (the default) is ``server`` where the target's ``/tokenize`` counts a probe sentence,
and words where it does not: quietly where the route is not there (404, 405, 501) or nothing
answers (the run's own requests say so), with a warning where it answers without a count.
Each process decides for itself when it calibrates; the one that writes the summary asks the
same question (``chosen``) to record what was chosen.
Control plane: httpx, a dozen calls at start, nothing on the hot path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from llmload.config.settings import RunConfig
from llmload.core.redact import redact_url
from llmload.errors import ConfigError, TargetError
from llmload.workload.scale import WORDS, TokenScale, calibrate

Count = Callable[[str], int]
_TIMEOUT_S = 30.0
AUTO = "auto"
# /tokenize is not there: no such route (404), not one for POST (405), or not enabled (501).
_ABSENT = frozenset({404, 405, 501})
_PROBE = "How many tokens does the server count in this sentence?"
# auto's first question: a server that cannot tokenize a sentence in this long is not asked
# again (the fingerprint waits as long); the run's own requests say what is wrong with it.
_PROBE_TIMEOUT_S = 5.0
# What auto came to in this process, by target: its summary records the decision its prompts
# were built by (a master, which builds none, asks for itself).
_decided: dict[str, str] = {}


class ServerTokenizer:
    """``POST /tokenize`` on the target, in whichever body shape it takes (found on first use)."""

    def __init__(self, client: httpx.Client, base_url: str, model: str | None) -> None:
        self._client = client
        self.url = f"{base_url.rstrip('/')}/tokenize"
        self._model = model  # None: not named (the summary's question, before a worker names it)
        self._shape: str | None = None  # "prompt" (vLLM, SGLang) or "content" (llama.cpp)
        self.statuses: list[int | None] = []  # the shapes' answers until one counts (None: none)

    def __call__(self, text: str) -> int:
        if self._shape is not None:
            count = self._post(self._shape, text)
            if count is None:
                raise TargetError(f"{redact_url(self.url)} stopped answering: rerun, or --tokenize off")
            return count
        for shape in ("prompt", "content"):
            count = self._post(shape, text)
            if count:
                self._shape = shape
                return count
        raise TargetError(
            f"{redact_url(self.url)} does not tokenize (tried vLLM's and llama.cpp's request "
            "bodies): give the model's tokenizer.json (--tokenize FILE) or --tokenize off"
        )

    def probe(self, text: str, timeout_s: float) -> int | None:
        """``auto``'s first call: each shape waited on for ``timeout_s`` at most, and none tried
        after one that got no answer; None where no shape counted (``statuses`` says why)."""
        for shape in ("prompt", "content"):
            count = self._post(shape, text, timeout_s)
            if count:
                self._shape = shape
                return count
            if self.statuses[-1] is None:
                break
        return None

    @property
    def absent(self) -> bool:
        """After a first call that found no count: no shape reached a /tokenize route (each
        was answered 404, 405 or 501, or not at all)."""
        return all(status is None or status in _ABSENT for status in self.statuses)

    def _post(self, shape: str, text: str, timeout_s: float | None = None) -> int | None:
        body: dict[str, str] = {"prompt": text} if shape == "prompt" else {"content": text}
        if shape == "prompt" and self._model is not None:
            body["model"] = self._model
        timeout = httpx.USE_CLIENT_DEFAULT if timeout_s is None else timeout_s
        try:
            response = self._client.post(self.url, json=body, timeout=timeout)
        except httpx.HTTPError:
            self.statuses += [None] if self._shape is None else []
            return None
        self.statuses += [response.status_code] if self._shape is None else []
        try:
            data = response.json() if response.status_code == 200 else None
        except ValueError:
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


def _auto(
    client: httpx.Client, base_url: str, model: str | None
) -> tuple[ServerTokenizer | None, str | None]:
    """``auto``: the target's /tokenize where it counts a probe sentence, else None (words),
    with a warning where the route answered without a count (what the user can change)."""
    tokenizer = ServerTokenizer(client, base_url, model)
    if tokenizer.probe(_PROBE, _PROBE_TIMEOUT_S) is not None:
        return tokenizer, None
    if tokenizer.absent:
        return None, None
    said = "/".join(dict.fromkeys(str(s) for s in tokenizer.statuses if s is not None))
    return None, (
        f"--tokenize auto: {redact_url(tokenizer.url)} answered HTTP {said} without a token "
        "count, so prompt lengths are in words: give the model's tokenizer.json "
        "(--tokenize FILE), or --tokenize off not to ask"
    )


def token_scale(
    how: str,
    base_url: str,
    model: str,
    sample: Callable[[int, int], str],
    *,
    headers: Mapping[str, str],
    verify: bool | str = True,
) -> tuple[TokenScale, str | None]:
    """Calibrate with ``how`` ("auto", "server" or a tokenizer.json's path): the scale, and a
    warning when the chat template's share could not be measured. ``auto`` without a
    counting /tokenize gives ``WORDS``: prompts as ``off`` builds them."""
    with httpx.Client(headers=dict(headers), verify=verify, timeout=_TIMEOUT_S) as client:
        count: Count
        if how == AUTO:
            found, warning = _auto(client, base_url, model)
            _decided[base_url] = "off" if found is None else "server"
            if found is None:
                return WORDS, warning
            count = found
        else:
            count = ServerTokenizer(client, base_url, model) if how == "server" else file_tokenizer(how)
        return calibrate(count, sample, _served(client, base_url, model))


def chosen(config: RunConfig, model: str | None) -> str:
    """What the run's ``--tokenize`` came to, for its summary: ``auto`` asks the target's
    /tokenize as each process does when it calibrates (``server`` where it counts, ``off``
    where not); any other value is itself."""
    how = config.workload.tokenize
    if how != AUTO:
        return how
    if (decided := _decided.get(config.host)) is not None:
        return decided  # this process calibrated (a local run): what its prompts were built by
    request = config.request
    headers = dict(request.extra_headers)
    if request.api_key:
        headers["Authorization"] = f"Bearer {request.api_key}"
    verify: bool | str = config.transport.ca_file or config.transport.verify
    with httpx.Client(headers=headers, verify=verify, timeout=_TIMEOUT_S) as client:
        found, _warning = _auto(client, config.host, model)
    return "off" if found is None else "server"
