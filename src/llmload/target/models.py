"""Ask the target which models it serves (control plane: httpx, not the hot path)."""

from __future__ import annotations

from typing import NamedTuple

import httpx

from llmload.config.apikey import DEFAULT_ENV, ENV_OF_ENV
from llmload.core.redact import redact_url
from llmload.errors import TargetError

KEY_HINT = (
    f"export it in {DEFAULT_ENV}, or in the variable --api-key-env (or {ENV_OF_ENV}) names; "
    "it is never a flag, so it never lands in shell history"
)


def refused(status: int, api_key: str | None) -> str | None:
    """What a 401 or 403 means for the user; None for any other status."""
    if status not in (401, 403):
        return None
    if api_key:
        return f"HTTP {status}: the server rejected the API key: check the variable --api-key-env names"
    return f"HTTP {status}: the server wants an API key: {KEY_HINT}"


class Served(NamedTuple):
    """What ``/v1/models`` lists: the models, and who serves each (``owned_by``: ``vllm``,
    ``sglang``, ``llamacpp``, ...; empty where the server names none)."""

    models: list[str]
    owners: list[str]

    def first(self, base_url: str) -> str:
        if not self.models:
            raise TargetError(f"{redact_url(base_url)}/v1/models lists no model; pass --model NAME")
        return self.models[0]

    def missing(self, base_url: str, model: str) -> str | None:
        """A warning when the server lists models and ``model`` is not one of them; None when
        it is, or when the list is empty (some gateways list nothing): the requests will tell."""
        if not self.models or model in self.models:
            return None
        return (
            f"--model {model!r} is not among the models {redact_url(base_url)} lists "
            f"({', '.join(self.models[:10])}): requests may fail or go to another model"
        )


def served(
    base_url: str, *, api_key: str | None, verify: bool | str = True, timeout_s: float = 10.0
) -> Served:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = f"{base_url.rstrip('/')}/v1/models"
    shown = redact_url(url)
    try:
        response = httpx.get(url, headers=headers, verify=verify, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise TargetError(
            f"cannot list models at {shown}: {type(exc).__name__}; is the server "
            "up? (`llmload wait --host URL` waits for it)"
        ) from None
    why = refused(response.status_code, api_key)
    if why:
        raise TargetError(f"{shown}: {why}")
    if response.status_code != 200:
        raise TargetError(f"{shown} answered HTTP {response.status_code}; pass --model NAME")
    try:
        data = response.json()["data"]
        return Served([str(item["id"]) for item in data], [str(item.get("owned_by") or "") for item in data])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise TargetError(f"{shown} did not return an OpenAI model list; pass --model NAME") from None


def first_model(base_url: str, *, api_key: str | None, verify: bool | str = True) -> str:
    return served(base_url, api_key=api_key, verify=verify).first(base_url)


def check_model(base_url: str, model: str, *, api_key: str | None, verify: bool | str = True) -> str | None:
    """``Served.missing`` of what the server lists; None when it cannot say."""
    try:
        return served(base_url, api_key=api_key, verify=verify).missing(base_url, model)
    except TargetError:
        return None
