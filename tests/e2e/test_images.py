"""Multimodal requests against the simulator's ground truth: images sent, their tokens charged
by size, and TTFT that grows with the image as a real engine's prefill does.

The simulator counts an image of W x H pixels as ceil(W/28) x ceil(H/28) prompt tokens
(``sim/images.py``) and its vLLM profile's prefill costs 20 us per token; with one user the
engine is idle when each request arrives, so a request's TTFT is the step that prefills it.
"""

from __future__ import annotations

import statistics

import httpx
import pytest

from llmload.sim.images import image_tokens
from llmload.sim.process import start_sim
from llmload.sim.profiles import get_profile
from llmload.sim.tokens import chat_prompt_tokens
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

WORDS = 32
SMALL, LARGE = (256, 256), (1024, 768)
# The simulator parses the larger body before its prefill step: a 300 kB JSON, its base64 and
# its patches, 1-2 ms here (CPU time: twice that on a slower machine); the server's time, not
# the model's.
PARSE_MS = 4.0
# The client's TTFT gap is the server's plus the larger body's upload over loopback (0.3 MB,
# well under a millisecond) and the client's own reads (under a millisecond, test_apis).
UPLOAD_BASE_MS = 1.0


@pytest.mark.timing
def test_images_are_sent_charged_by_size_and_lengthen_ttft(run_locust: RunLocust, judge: Judge) -> None:
    sizes = f"{SMALL[0]}x{SMALL[1]},{LARGE[0]}x{LARGE[1]}"
    with start_sim(["--profile", "vllm"]) as sim:
        run = run_locust(
            sim.url,
            *("--images", "1", "--image-sizes", sizes, "--prompt-tokens", str(WORDS), "--max-tokens", "4"),
            users=1,
            run_time="8s",
        )
        served = {e["client_request_id"]: e for e in sim.requests()}
        judge.server(sim.stats())
    judge.client(run.summary)
    records = [r for r in run.records if r["outcome"] == "ok"]
    assert len(records) >= 20, run.output[-2000:]
    text = chat_prompt_tokens(WORDS, 1)
    client: dict[int, list[float]] = {image_tokens(*SMALL): [], image_tokens(*LARGE): []}
    server: dict[int, list[float]] = {k: [] for k in client}
    for r in records:
        truth = served[r["id"]]
        assert r["images"] == truth["images"] == 1
        assert r["prompt_tokens"] == truth["prompt_tokens"]  # the server's usage, read back
        charged = truth["prompt_tokens"] - text
        assert charged in client, charged  # one image, of one of the two sizes
        if r["phase"] != "measure":
            continue  # the TTFTs below are the measured requests', as the summary's are
        client[charged].append((r["first_token_ns"] - r["sent_ns"]) / 1e6)
        server[charged].append((truth["first_token_ns"] - truth["arrival_ns"]) / 1e6)
    assert all(len(v) >= 5 for v in client.values()), {k: len(v) for k, v in client.items()}

    def gap(ttfts: dict[int, list[float]]) -> float:
        return statistics.median(ttfts[image_tokens(*LARGE)]) - statistics.median(ttfts[image_tokens(*SMALL)])

    # The larger image's 936 more tokens cost the prefill step 936 x 20 us = 18.7 ms more, and
    # its parse up to PARSE_MS: the server's gap is in [model, model + PARSE_MS], either way by
    # what the simulator and the machine were late by.
    per_token_ms = get_profile("vllm").params().prefill_per_token_ns / 1e6
    model = (image_tokens(*LARGE) - image_tokens(*SMALL)) * per_token_ms
    print(
        f"TTFT gap, large - small image: server {gap(server):.3f} ms, "
        f"client {gap(client):.3f} ms, model {model:.3f} ms"
    )
    judge.close(
        gap(server),
        model + PARSE_MS / 2,
        PARSE_MS / 2,
        Stat.MEDIAN,
        "the server's TTFT gap: prefill and parse",
    )
    # What the client measured is what the server did, plus the upload of the larger body
    judge.close(
        gap(client), gap(server), UPLOAD_BASE_MS, Stat.MEDIAN, "the client's TTFT gap against the server's"
    )
    stage = run.summary["stages"][0]
    assert stage["images_per_request"]["mean"] == pytest.approx(1.0)
    window = [r for r in records if r["phase"] == "measure"]
    mean_bytes = sum(r["image_bytes"] for r in window) / len(window)
    assert stage["image_bytes_per_request"]["mean"] == pytest.approx(mean_bytes, rel=0.02)
    assert not any("prompt tokens asked" in w for w in stage["warnings"])  # images are not text
    assert "images per request" in run.output


def test_the_simulator_refuses_an_image_it_cannot_read() -> None:
    with start_sim(["--profile", "vllm"]) as sim:
        body = {
            "model": "m",
            "max_tokens": 2,
            "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
            ],
        }
        answer = httpx.post(f"{sim.url}/v1/chat/completions", json=body, timeout=10)
    assert answer.status_code == 400 and "data:image" in answer.text
