"""What llmload may ask of the server under test besides answers: forget its prefix cache, and
run its profiler over a stage. Each call says what happened in one line, for the summary.

Each engine offers these under its own routes, some only when started so:

- prefix cache: vLLM ``POST /reset_prefix_cache`` (registered only with
  ``VLLM_SERVER_DEV_MODE=1``), SGLang ``POST /flush_cache`` (refused while requests run),
  llama.cpp ``POST /slots/{id}?action=erase`` per slot (only with ``--slot-save-path``);
- profiler: vLLM ``POST /start_profile`` and ``/stop_profile`` (only with ``--profiler-config``),
  SGLang the same routes (its traces go to ``SGLANG_TORCH_PROFILER_DIR``).
"""

from __future__ import annotations

from typing import Literal

import httpx

from llmload.target.fingerprint import base_url

_TIMEOUT_S = 30.0
_RESETS = {"vllm": "/reset_prefix_cache", "sglang": "/flush_cache"}
_PROFILERS = frozenset({"vllm", "sglang"})
_HINTS = {
    ("vllm", "/reset_prefix_cache"): "start vLLM with VLLM_SERVER_DEV_MODE=1",
    ("vllm", "/start_profile"): 'start vLLM with --profiler-config \'{"profiler": "torch", ...}\'',
    ("sglang", "/flush_cache"): "SGLang flushes only while no request runs",
}


def reset_cache(host: str, engine: str | None, headers: dict[str, str]) -> str:
    """Ask the server to drop its cached prefixes."""
    url = base_url(host)
    try:
        with httpx.Client(timeout=_TIMEOUT_S, headers=headers) as client:
            if engine == "llama.cpp":
                return _erase_slots(client, url)
            path = _RESETS.get(engine or "")
            if path is None:
                return f"no cache reset: llmload knows no way to clear a {engine or 'unknown'} server's cache"
            return _post(client, url, engine, path, "cache reset")
    except httpx.HTTPError as exc:
        return f"no cache reset: {type(exc).__name__}: {exc}"


def profile(host: str, engine: str | None, headers: dict[str, str], action: Literal["start", "stop"]) -> str:
    """Start or stop the server's profiler."""
    what = f"profiler {action}"
    if engine not in _PROFILERS:
        return f"no {what}: a {engine or 'unknown'} server has no profiler endpoint llmload knows"
    try:
        with httpx.Client(timeout=_TIMEOUT_S, headers=headers) as client:
            return _post(client, base_url(host), engine, f"/{action}_profile", what)
    except httpx.HTTPError as exc:
        return f"no {what}: {type(exc).__name__}: {exc}"


def _post(client: httpx.Client, url: str, engine: str | None, path: str, what: str) -> str:
    response = client.post(url + path)
    if response.status_code >= 400:
        hint = _HINTS.get((engine or "", path.replace("/stop_", "/start_")))
        return f"no {what}: POST {path} answered {response.status_code}" + (f" ({hint})" if hint else "")
    return f"{what}: POST {path} {response.status_code}"


def _erase_slots(client: httpx.Client, url: str) -> str:
    slots = client.get(url + "/slots")
    if slots.status_code != 200:
        return (
            f"no cache reset: GET /slots answered {slots.status_code} (llama-server started with --no-slots?)"
        )
    body = slots.json()
    ids = (
        [s["id"] for s in body if isinstance(s, dict) and isinstance(s.get("id"), int)]
        if isinstance(body, list)
        else []
    )
    for slot in ids:
        response = client.post(f"{url}/slots/{slot}", params={"action": "erase"})
        if response.status_code >= 400:
            hint = " (start llama-server with --slot-save-path DIR)" if response.status_code == 501 else ""
            return f"no cache reset: POST /slots/{slot}?action=erase answered {response.status_code}{hint}"
    return f"cache reset: erased {len(ids)} slots"
