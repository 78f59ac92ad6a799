"""A tenant mix in a real Locust run against a simulator serving a base model and a LoRA
adapter, joined to its log by request id: each tenant's requests are the simulator's requests
for its model, the tenants add up to the stage, and fairness reacts to a starved tenant."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust

pytestmark = pytest.mark.e2e

MIX = """
[tenants.chat]
weight = 3
model = "base"
max_tokens = 16
headers = {{ "X-Tenant" = "chat" }}

[tenants.batch]
weight = 1
model = "lora-batch"
prompt_tokens = 200
max_tokens = 32
slo = "{batch_slo}"
"""


def _mix(tmp_path: Path, batch_slo: str) -> str:
    path = tmp_path / f"tenants-{len(batch_slo)}.toml"
    path.write_text(MIX.format(batch_slo=batch_slo), encoding="utf-8")
    return str(path)


def test_each_tenant_is_its_models_requests_and_a_starved_one_lowers_fairness(
    run_locust: RunLocust, tmp_path: Path
) -> None:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5", "--model", "base,lora-batch"]) as sim:
        fair = run_locust(sim.url, "--tenants", _mix(tmp_path, "e2e_p99_ms<=60000"), users=6, run_time="6s")
        truth = {e["client_request_id"]: e for e in sim.requests()}
    stage = fair.summary["stages"][0]
    # every request went out as its tenant's: its model on the wire, its own lengths
    per_tenant = Counter(r["name"] for r in fair.records)
    per_model = Counter(truth[r["id"]]["model"] for r in fair.records)
    assert per_tenant == {"tenant:chat": per_model["base"], "tenant:batch": per_model["lora-batch"]}
    for r in fair.records:
        assert r["max_tokens"] == (16 if r["name"] == "tenant:chat" else 32), r["id"]
        assert (r["prompt_tokens_requested"] == 200) == (r["name"] == "tenant:batch"), r["id"]
    by_name = stage["by_name"]
    assert (
        by_name["tenant:chat"]["requests"]["ok"] + by_name["tenant:batch"]["requests"]["ok"]
        == stage["requests"]["ok"]
    )
    tenants = stage["tenants"]
    assert 0.65 < tenants["tenants"]["chat"]["goodput_share"] < 0.85  # 3:1 by weight, drawn per request
    assert tenants["jain_index"] > 0.95

    # The batch tenant's SLO cannot be met: all its requests succeed, none is good.
    with start_sim(["--ttft-ms", "20", "--step-ms", "5", "--model", "base,lora-batch"]) as sim:
        starved = run_locust(sim.url, "--tenants", _mix(tmp_path, "ttft_p99_ms<=1"), users=6, run_time="6s")
    tenants = starved.summary["stages"][0]["tenants"]
    assert starved.summary["stages"][0]["by_name"]["tenant:batch"]["requests"]["ok"] > 0
    assert tenants["tenants"]["batch"]["share_over_weight"] == 0.0
    assert tenants["jain_index"] == pytest.approx(0.5)  # 1/n: one tenant has all the goodput
