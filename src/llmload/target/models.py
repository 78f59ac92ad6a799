"""Ask the target which models it serves (control plane: httpx, not the hot path)."""

from __future__ import annotations

import httpx

from llmload.errors import TargetError


def list_models(base_url: str, *, api_key: str | None, verify: bool | str = True,
                timeout_s: float = 10.0) -> list[str]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = f"{base_url.rstrip('/')}/v1/models"
    try:
        response = httpx.get(url, headers=headers, verify=verify, timeout=timeout_s)
    except httpx.HTTPError as exc:
        raise TargetError(f"cannot list models at {url}: {exc}; is the server up? "
                          "(`llmload wait --host URL` waits for it)") from None
    if response.status_code != 200:
        raise TargetError(f"{url} answered HTTP {response.status_code}; pass --model NAME")
    try:
        data = response.json()["data"]
        return [str(item["id"]) for item in data]
    except (ValueError, KeyError, TypeError):
        raise TargetError(f"{url} did not return an OpenAI model list; pass --model NAME") from None


def first_model(base_url: str, *, api_key: str | None, verify: bool | str = True) -> str:
    models = list_models(base_url, api_key=api_key, verify=verify)
    if not models:
        raise TargetError(f"{base_url}/v1/models lists no model; pass --model NAME")
    return models[0]
