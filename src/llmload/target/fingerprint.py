"""What the target says about itself, and the settings that make its benchmark numbers lie.

``fingerprint`` asks the endpoints engines answer about themselves: ``/v1/models`` (all),
``/version`` (vLLM, SGLang), ``/get_server_info`` (SGLang: its launch arguments),
``/server_info`` (vLLM with ``VLLM_SERVER_DEV_MODE=1``: its config), ``/info`` (TGI), ``/props``
(llama.cpp), and reads the ``server`` header. An endpoint that answers 404 is simply absent. The
first transport failure (refused, timeout) ends the probing: a server that cannot answer one
question will not answer the next five, and each would cost a timeout. A server that answered
is then asked which of the newer APIs it offers (``apis.py``).

``warnings`` turns launch arguments into loud, specific warnings, each saying what the setting
does to the numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx

from llmload.errors import ConfigError
from llmload.protocol.jsonvalue import JSON, JSONObject
from llmload.target.apis import offered

_PROBES = ("/v1/models", "/version", "/get_server_info", "/server_info?config_format=json", "/info", "/props")
_SECRETS = ("api_key", "_token", "secret", "password")  # endings of secret-bearing key names
_NOT_PRODUCTION = "benchmark numbers will not represent production"
_PYTHON_WORDS = {"True": True, "False": False, "None": None}


def base_url(host: str) -> str:
    """``http://box:8000/v1/`` -> ``http://box:8000``: every path here is added to the root."""
    url = host.strip().rstrip("/").removesuffix("/v1")
    if not url.startswith(("http://", "https://")):
        raise ConfigError("--host", host, "give a URL with its scheme, e.g. http://gpu-box:8000")
    return url


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _redact(value: JSON) -> JSON:
    """Launch arguments go into summary.json: never copy a key or token from them."""
    if isinstance(value, Mapping):
        return {
            k: "<redacted>" if v and f"_{k.lower()}".endswith(_SECRETS) else _redact(v)
            for k, v in value.items()
        }
    return value


def _split_top(text: str) -> list[str]:
    """Split ``a=1, b=X(c=2, d='x,y'), e={...}`` at the commas that are not nested or quoted."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _literal(raw: str) -> JSON:
    if raw in _PYTHON_WORDS:
        return _PYTHON_WORDS[raw]
    if raw[:1] == raw[-1:] and raw[:1] in "'\"" and len(raw) > 1:
        return raw[1:-1]
    try:
        value: JSON = json.loads(raw)  # numbers, and compilation_config={...}
    except ValueError:
        return raw
    return value


def vllm_settings(server_info: JSONObject) -> dict[str, JSON]:
    """Flat settings from vLLM's ``/server_info``: its config as text (``str(VllmConfig)``, the
    same text as the "Initializing ... with config:" log line) or, when asked, as JSON sections."""
    config = server_info.get("vllm_config")
    settings: dict[str, JSON] = {}
    if isinstance(config, str):
        for part in _split_top(config):
            key, sep, raw = part.strip().partition("=")
            if sep and key.isidentifier():
                settings.setdefault(key, _literal(raw.strip()))
    elif isinstance(config, dict):
        for section, body in config.items():
            settings.setdefault(section, body)
            if isinstance(body, dict) and section not in ("speculative_config", "compilation_config"):
                for key, value in body.items():
                    settings.setdefault(key, value)
    env = server_info.get("vllm_env")
    if isinstance(env, dict):
        settings.update({k: v for k, v in env.items() if k.startswith("VLLM_")})
    return settings


def llamacpp_settings(props: JSONObject) -> dict[str, JSON]:
    """Flat settings from llama.cpp's ``/props``: its slots, each slot's context, the model and
    the build (the chat template and the sampling defaults are left out: long, and no setting)."""
    given = props.get("default_generation_settings")
    generation = given if isinstance(given, Mapping) else {}
    settings: dict[str, JSON] = {
        "total_slots": props.get("total_slots"),
        "n_ctx": generation.get("n_ctx", props.get("n_ctx")),
        "model_path": props.get("model_path"),
        "build_info": props.get("build_info"),
    }
    for key in ("cont_batching", "continuous_batching"):  # where a build reports it
        if key in props:
            settings["cont_batching"] = props[key]
    return {k: v for k, v in settings.items() if v is not None}


def _probe(
    client: httpx.Client, url: str, path: str, headers: dict[str, str]
) -> tuple[int | str, tuple[JSON, str | None] | None]:
    """(status, (JSON body or None, server header)); without an HTTP answer: (error name, None)."""
    try:
        response = client.get(url + path, headers=headers)
    except httpx.HTTPError as exc:
        return type(exc).__name__, None
    try:
        body: JSON = response.json() if response.status_code == 200 else None
    except ValueError:
        body = None
    return response.status_code, (body, response.headers.get("server"))


def _models(body: JSON) -> list[dict[str, JSON]]:
    data = body.get("data") if isinstance(body, Mapping) else None
    return [
        {"id": m.get("id"), "max_model_len": m.get("max_model_len"), "owned_by": m.get("owned_by")}
        for m in (data if isinstance(data, list) else [])
        if isinstance(m, Mapping)
    ]


def _votes(
    models: list[dict[str, JSON]], server_header: str | None, bodies: Mapping[str, JSON]
) -> list[tuple[str, str]]:
    votes: list[tuple[str, str]] = []
    sglang, vllm, llama = bodies.get("/get_server_info"), bodies.get("/server_info"), bodies.get("/props")
    if isinstance(sglang, Mapping):
        votes.append(("sglang", "GET /get_server_info answered with launch arguments"))
    if isinstance(vllm, Mapping) and "vllm_config" in vllm:
        votes.append(("vllm", "GET /server_info answered with a vllm_config"))
    owners = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama.cpp", "tgi": "tgi"}
    for model in models:
        if (engine := owners.get(str(model["owned_by"]).lower())) is not None:
            votes.append((engine, f"/v1/models owned_by={model['owned_by']}"))
    tgi = bodies.get("/info")
    if isinstance(tgi, Mapping) and str(tgi.get("router", "")).startswith("text-generation"):
        votes.append(("tgi", f"GET /info router={tgi['router']}"))
    if isinstance(llama, Mapping) and "default_generation_settings" in llama:
        votes.append(("llama.cpp", "GET /props answered with default_generation_settings"))
    header = (server_header or "").lower()
    for word, engine in (("vllm", "vllm"), ("sglang", "sglang"), ("llama.cpp", "llama.cpp")):
        if word in header:
            votes.append((engine, f"server header {server_header!r}"))
    return votes


def fingerprint(
    host: str, *, api_key: str | None = None, timeout_s: float = 5.0, client: httpx.Client | None = None
) -> dict[str, JSON]:
    """Everything the target says about itself, JSON-safe; absent endpoints are simply absent."""
    url = base_url(host)
    http = client if client is not None else httpx.Client(timeout=timeout_s)
    endpoints: dict[str, JSON] = {}
    bodies: dict[str, JSON] = {}
    server_header: str | None = None
    try:
        for path in _PROBES:
            status, answer = _probe(http, url, path, auth_headers(api_key))
            endpoints[path.partition("?")[0]] = status
            if answer is None:
                break  # no HTTP answer: the next probes would fail (or time out) the same way
            bodies[path.partition("?")[0]], header = answer
            server_header = server_header or header
        apis = offered(http, url, auth_headers(api_key)) if bodies else {}
    finally:
        if client is None:
            http.close()
    info: dict[str, JSON] = {
        "url": url,
        "reachable": bool(bodies),
        "server_header": server_header,
        "endpoints": endpoints,
        "apis": apis,
    }
    return _interpret(info, server_header, bodies)


def _interpret(
    info: dict[str, JSON], server_header: str | None, bodies: Mapping[str, JSON]
) -> dict[str, JSON]:
    models = _models(bodies.get("/v1/models"))
    sglang, vllm, llama = bodies.get("/get_server_info"), bodies.get("/server_info"), bodies.get("/props")
    launch_args: JSON = None
    version: str | None = None
    if isinstance(sglang, Mapping):
        launch_args = _redact({k: v for k, v in sglang.items() if k != "internal_states"})
    elif isinstance(vllm, Mapping):
        launch_args = _redact(vllm_settings(vllm))
    elif isinstance(llama, Mapping) and "default_generation_settings" in llama:
        launch_args = _redact(llamacpp_settings(llama))
        if llama.get("build_info"):
            version = str(llama["build_info"])
    for source in (bodies.get("/version"), sglang, bodies.get("/info")):
        if isinstance(source, Mapping) and source.get("version") and not version:
            version = str(source["version"])
    votes = _votes(models, server_header, bodies)
    engines = [engine for engine, _ in votes]
    engine = max(engines, key=engines.count) if engines else "unknown"
    return {
        **info,
        "models": models,
        "version": version,
        "launch_args": launch_args,
        "engine": engine,
        "engine_evidence": [why for e, why in votes if e == engine],
    }


def _on(value: JSON) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def _integer(value: JSON) -> int | None:
    """A launch argument's number, whether the engine wrote it as a number or as text."""
    if isinstance(value, int | float):
        return int(value)
    try:
        return int(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _cuda_graphs(s: JSONObject) -> list[str]:
    slower = f"single-stream decode is typically 2-3x slower; {_NOT_PRODUCTION}"
    compilation = s.get("compilation_config")
    mode = compilation.get("cudagraph_mode") if isinstance(compilation, Mapping) else None
    if _on(s.get("disable_cuda_graph")):
        return [f"CUDA graphs are disabled (disable_cuda_graph=true): {slower}"]
    if _on(s.get("enforce_eager")):
        return [f"eager mode is on, so CUDA graphs are off (enforce_eager=true): {slower}"]
    if mode in (0, "NONE"):
        return [f"CUDA graphs are disabled (cudagraph_mode={mode}): {slower}"]
    level = compilation.get("level", compilation.get("mode")) if isinstance(compilation, Mapping) else None
    if level in (0, "NONE"):
        return [
            f"torch.compile is off (compilation level {level}): vLLM compiles the model by "
            f"default, without it per-step GPU time is higher; {_NOT_PRODUCTION}"
        ]
    return []


def _speculative(s: JSONObject) -> list[str]:
    algorithm = s.get("speculative_algorithm")
    if algorithm:
        keys = ("speculative_num_steps", "speculative_num_draft_tokens", "speculative_draft_model_path")
        detail = ", ".join(f"{k}={s[k]}" for k in keys if s.get(k))
        return [
            f"speculative decoding is on ({algorithm}{', ' + detail if detail else ''}): tok/s "
            "depends on how predictable the text is, so synthetic prompts can over- or "
            "understate it; compare acceptance rates, not only tok/s (informational)"
        ]
    config = s.get("speculative_config")
    if config not in (None, "None", {}):
        return [
            f"speculative decoding is on (speculative_config={str(config)[:120]}): tok/s depends "
            "on how predictable the text is; compare acceptance rates (informational)"
        ]
    return []


def warnings(info: JSONObject, planned_concurrency: int | None = None) -> list[str]:
    """Loud, specific warnings about settings that distort a benchmark, from ``fingerprint``'s
    ``launch_args``; each one says what the setting does to the numbers."""
    given = info.get("launch_args")
    s: JSONObject = given if isinstance(given, Mapping) else {}
    out = _cuda_graphs(s)
    level = next((str(s[k]) for k in ("log_level", "VLLM_LOGGING_LEVEL") if s.get(k)), "")
    if level.lower() == "debug":
        out.append(
            f"debug logging is on (log_level={level}): the server formats and writes log "
            "lines on its scheduling path, adding latency to every step; "
            f"{_NOT_PRODUCTION}"
        )
    if _on(s.get("disable_overlap_schedule")):
        out.append(
            "the overlap scheduler is off (disable_overlap_schedule=true): CPU scheduling "
            "is no longer hidden behind GPU work, so decode is slower; "
            f"{_NOT_PRODUCTION}"
        )
    cap_key = next((k for k in ("max_running_requests", "max_num_seqs", "total_slots") if s.get(k)), None)
    cap = _integer(s[cap_key]) if cap_key else None
    if cap_key and cap is not None and planned_concurrency and cap < planned_concurrency:
        out.append(
            f"the server runs at most {cap} sequences at once ({cap_key}={cap}) but the "
            f"plan drives {planned_concurrency} concurrent streams: the rest queue, TTFT "
            f"includes queueing, and tok/s stops growing at {cap} streams"
        )
    n_ctx = s.get("n_ctx")
    if isinstance(n_ctx, int) and "total_slots" in s and n_ctx < 2048:
        out.append(
            f"each of the server's slots holds {n_ctx} tokens of context (llama.cpp's -c divided "
            "by -np): a prompt and its output longer than that are refused (HTTP 400) or cut "
            "short, so long-context numbers cannot be measured on it"
        )
    if s.get("cont_batching") is False:
        out.append(
            "continuous batching is off (--no-cont-batching): a new request waits for the batch "
            f"in progress to finish, so TTFT includes other requests' decode; {_NOT_PRODUCTION}"
        )
    off = (
        "disable_radix_cache=true"
        if _on(s.get("disable_radix_cache"))
        else "enable_prefix_caching=false"
        if s.get("enable_prefix_caching") is False
        else None
    )
    if off:
        out.append(
            f"prefix caching is off ({off}): prompts sharing a prefix are prefilled in "
            "full, so TTFT of shared-prefix workloads is higher than with it on "
            "(informational)"
        )
    return out + _speculative(s)
