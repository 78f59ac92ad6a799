"""Fingerprints and warnings from real servers' self-descriptions (served by a MockTransport)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from llmload.errors import ConfigError
from llmload.target.fingerprint import base_url, fingerprint, vllm_settings, warnings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "servers"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def serve(routes: dict[str, Any], server: str = "uvicorn") -> httpx.Client:
    """A client whose server answers ``routes`` (JSON bodies) and 404 for anything else."""

    def handler(request: httpx.Request) -> httpx.Response:
        body = routes.get(request.url.path)
        if body is None:
            return httpx.Response(404, json={"detail": "Not Found"}, headers={"server": server})
        return httpx.Response(200, json=body, headers={"server": server})

    return httpx.Client(transport=httpx.MockTransport(handler))


SGLANG_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "meta-llama/Llama-3.1-8B-Instruct",
            "object": "model",
            "created": 1,
            "owned_by": "sglang",
            "root": "meta-llama/Llama-3.1-8B-Instruct",
            "max_model_len": 131072,
        }
    ],
}


def test_sglang_is_recognised_and_its_launch_arguments_kept_without_secrets() -> None:
    routes = {
        "/v1/models": SGLANG_MODELS,
        "/get_server_info": load("sglang_get_server_info.json"),
        "/version": {"version": "0.4.6.post4"},
    }
    info = fingerprint("http://gpu-box:30000", client=serve(routes))
    assert info["engine"] == "sglang" and info["version"] == "0.4.6.post4"
    assert "GET /get_server_info answered with launch arguments" in info["engine_evidence"]
    assert info["models"] == [
        {"id": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 131072, "owned_by": "sglang"}
    ]
    assert info["endpoints"] == {
        "/v1/models": 200,
        "/version": 200,
        "/get_server_info": 200,
        "/server_info": 404,
        "/info": 404,
        "/props": 404,
    }
    args = info["launch_args"]
    assert args["api_key"] == "<redacted>" and "sk-do-not-leak" not in json.dumps(info)
    assert args["max_total_num_tokens"] == 414382  # "tokens" is not a secret
    assert "internal_states" not in args
    json.dumps(info, allow_nan=False)


def test_sglang_warnings_name_the_setting_and_what_it_does() -> None:
    info = {"launch_args": load("sglang_get_server_info.json")}
    found = warnings(info, planned_concurrency=128)
    assert found[0] == (
        "CUDA graphs are disabled (disable_cuda_graph=true): single-stream decode is typically "
        "2-3x slower; benchmark numbers will not represent production"
    )
    text = "\n".join(found)
    assert "debug logging is on (log_level=debug)" in text
    assert "at most 48 sequences at once (max_running_requests=48)" in text and "128" in text
    assert "prefix caching is off (disable_radix_cache=true)" in text and "(informational)" in text
    assert "speculative decoding is on (EAGLE3, speculative_num_steps=3" in text
    assert len(found) == 5
    # Without a plan there is nothing to compare the cap with.
    assert not any("sequences at once" in w for w in warnings(info))


def test_vllm_is_recognised_from_models_and_dev_mode_server_info() -> None:
    routes = {
        "/v1/models": load("vllm_models.json"),
        "/version": {"version": "0.10.2"},
        "/server_info": load("vllm_server_info.json"),
    }
    info = fingerprint("http://gpu-box:8000/v1", client=serve(routes))
    assert info["url"] == "http://gpu-box:8000"
    assert info["engine"] == "vllm" and info["version"] == "0.10.2"
    assert info["engine_evidence"] == [
        "GET /server_info answered with a vllm_config",
        "/v1/models owned_by=vllm",
    ]
    assert info["models"][0]["max_model_len"] == 2048
    args = info["launch_args"]
    assert args["enforce_eager"] is True and args["enable_prefix_caching"] is True
    assert args["compilation_config"]["cudagraph_mode"] == 0
    assert args["served_model_name"] == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    assert warnings(info) == [
        "eager mode is on, so CUDA graphs are off (enforce_eager=true): single-stream decode is "
        "typically 2-3x slower; benchmark numbers will not represent production"
    ]


def test_vllm_settings_from_the_json_config_format() -> None:
    settings = vllm_settings(
        {
            "vllm_config": {
                "model_config": {"enforce_eager": False, "max_model_len": 4096},
                "scheduler_config": {"max_num_seqs": 64},
                "cache_config": {"enable_prefix_caching": False},
                "compilation_config": {"level": 0, "cudagraph_mode": 2},
                "speculative_config": {"method": "eagle3", "num_speculative_tokens": 3},
            },
            "vllm_env": {"VLLM_LOGGING_LEVEL": "DEBUG", "HOME": "/root"},
        }
    )
    assert settings["max_num_seqs"] == 64 and "HOME" not in settings
    text = "\n".join(warnings({"launch_args": settings}, planned_concurrency=128))
    assert "torch.compile is off (compilation level 0)" in text
    assert "debug logging is on (log_level=DEBUG)" in text
    assert "(max_num_seqs=64)" in text
    assert "enable_prefix_caching=false" in text
    assert "speculative decoding is on (speculative_config={'method': 'eagle3'" in text


def test_a_healthy_default_server_gets_no_warning() -> None:
    args = {
        "disable_cuda_graph": False,
        "log_level": "info",
        "disable_radix_cache": False,
        "max_running_requests": 256,
        "speculative_algorithm": None,
        "enable_torch_compile": False,
    }
    assert warnings({"launch_args": args}, planned_concurrency=128) == []
    assert warnings({"launch_args": None}) == []


def test_an_unreachable_server_is_probed_once() -> None:
    calls: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    info = fingerprint("http://box:1", client=httpx.Client(transport=httpx.MockTransport(refuse)))
    assert calls == ["/v1/models"]
    assert info["reachable"] is False and info["engine"] == "unknown"
    assert info["endpoints"] == {"/v1/models": "ConnectError"}


def test_engine_from_tgi_and_llama_cpp_self_descriptions() -> None:
    tgi = fingerprint(
        "http://b:80", client=serve({"/info": {"router": "text-generation-router", "version": "3.3.4"}})
    )
    assert tgi["engine"] == "tgi" and tgi["version"] == "3.3.4"
    llama = fingerprint(
        "http://b:80", client=serve({"/props": {"default_generation_settings": {}}}, server="llama.cpp")
    )
    assert llama["engine"] == "llama.cpp" and len(llama["engine_evidence"]) == 2


@pytest.mark.parametrize("host", ["gpu-box:8000", "ftp://x"])
def test_a_host_without_http_scheme_is_a_usage_error(host: str) -> None:
    with pytest.raises(ConfigError, match="--host"):
        base_url(host)


def test_llamacpp_is_recognised_from_props_with_its_slots_and_context() -> None:
    props = load("llamacpp_props.json")  # captured: llama-server -np 4 -c 4096
    models = {
        "object": "list",
        "data": [{"id": props["model_path"], "object": "model", "owned_by": "llamacpp"}],
    }
    info = fingerprint(
        "http://x:8080", client=serve({"/props": props, "/v1/models": models}, server="llama.cpp")
    )
    assert info["engine"] == "llama.cpp" and info["version"] == props["build_info"]
    assert info["launch_args"]["total_slots"] == 4 and info["launch_args"]["n_ctx"] == 1024
    assert "chat_template" not in info["launch_args"]
    found = warnings(info, planned_concurrency=8)
    assert any("at most 4 sequences at once (total_slots=4)" in w for w in found), found
    assert any("each of the server's slots holds 1024 tokens" in w for w in found), found
    assert not any(
        "slots holds" in w for w in warnings({"launch_args": {**info["launch_args"], "n_ctx": 4096}})
    )
