"""Every overlay and component renders, and validates strictly against the published schemas.

Core objects: `kubernetes-validate --strict` (bundled OpenAPI schemas, offline) for the oldest and
newest Kubernetes versions llmload supports. Prometheus Operator objects: npm
`@kubernetes-models/prometheus-operator` in two versions (tools/k8s, installed by `npm ci` from the
committed lock file): 6.0.0 (current API types) and 4.4.4 (the operator's v0.65.1 release CRDs).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.k8s.kustomize import COMPONENTS, K8S, OVERLAYS, REPO, ROOTS, Obj, find

pytestmark = pytest.mark.e2e

# Oldest supported: restricted Pod Security admission and Job TTL are GA well before it; the
# newest is the newest schema set kubernetes-validate bundles (1.37 in kubernetes-validate 1.37).
KUBERNETES_VERSIONS = ("1.28.0", "1.37.0")
TOOLS = REPO / "tools" / "k8s"
PROMETHEUS_OPERATOR = "monitoring.coreos.com/"
IMAGE = "ghcr.io/llmload/llmload:0.1.0"


def test_every_overlay_and_component_is_rendered() -> None:
    assert {p.name for p in (K8S / "components").iterdir() if p.is_dir()} == set(COMPONENTS)
    assert {p.name for p in (K8S / "overlays").iterdir() if p.is_dir()} == set(OVERLAYS)
    assert {p.name for p in K8S.iterdir() if p.is_dir()} == set(ROOTS)


def test_results_reader_mounts_the_claim_read_only(rendered: dict[str, list[Obj]]) -> None:
    (pod,) = rendered["results-reader"]
    claim = find(rendered["base+results-pvc"], "PersistentVolumeClaim", "llmload-results")
    (volume,) = [v for v in pod["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert volume["persistentVolumeClaim"] == {"claimName": claim["metadata"]["name"], "readOnly": True}


def test_combinations_hold_what_they_promise(rendered: dict[str, list[Obj]]) -> None:
    for name, objects in rendered.items():
        if name == "results-reader":
            continue
        kinds = sorted(o["kind"] for o in objects)
        want = ["ConfigMap", "Job", "Job", "Service"]
        if "podmonitor" in name or "all" in name or name == "overlays/example":
            want.append("PodMonitor")
        if "results-pvc" in name or "all" in name or name == "overlays/example":
            want.append("PersistentVolumeClaim")
        if "custom-locustfile" in name or "all" in name:
            want.append("ConfigMap")
        assert kinds == sorted(want), name
        options = find(objects, "ConfigMap", "llmload-options")["data"]
        sweep = name.startswith("overlays/sweep")
        assert ("LOCUST_RUN_TIME" in options) is not sweep, name
        assert ("LLMLOAD_LEVELS" in options) is sweep, name


def test_the_image_is_named_in_one_place(rendered: dict[str, list[Obj]]) -> None:
    with_images = [p for p in K8S.rglob("kustomization.yaml") if "images" in yaml.safe_load(p.read_text())]
    assert with_images == [K8S / "base" / "kustomization.yaml"]
    for path in K8S.rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            images = re.findall(r'"image": "([^"]*)"', json.dumps(doc))
            assert all(i == "llmload" or "llmload" not in i for i in images), (path, images)
    for objects in rendered.values():
        for job in (o for o in objects if o["kind"] == "Job"):
            assert job["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    assert IMAGE in (REPO / "docs" / "kubernetes.md").read_text()


def _core_objects(rendered: dict[str, list[Obj]], into: Path) -> list[Path]:
    files = []
    for name, objects in rendered.items():
        path = into / (name.replace("/", "_") + ".yaml")
        core = [o for o in objects if not o["apiVersion"].startswith(PROMETHEUS_OPERATOR)]
        path.write_text(yaml.safe_dump_all(core))
        files.append(path)
    return files


def _kubernetes_validate(version: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet", "-k", version, *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_objects_validate_strictly(rendered: dict[str, list[Obj]], tmp_path: Path, version: str) -> None:
    proc = _kubernetes_validate(version, _core_objects(rendered, tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_strict_validation_rejects_an_unknown_field(rendered: dict[str, list[Obj]], tmp_path: Path) -> None:
    job = copy.deepcopy(find(rendered["base"], "Job", "llmload-worker"))
    job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFileSystem"] = True
    path = tmp_path / "mutant.yaml"
    path.write_text(yaml.safe_dump(job))
    proc = _kubernetes_validate(KUBERNETES_VERSIONS[-1], [path])
    assert proc.returncode != 0
    assert "readOnlyRootFileSystem" in proc.stdout + proc.stderr


def test_validated_versions_are_bundled() -> None:
    from kubernetes_validate.utils import all_versions  # type: ignore[import-untyped]

    bundled = {".".join(v.split(".")[:2]) for v in all_versions()}
    assert {".".join(v.split(".")[:2]) for v in KUBERNETES_VERSIONS} <= bundled
    assert max(bundled, key=lambda v: tuple(map(int, v.split(".")))) == "1.37"


@pytest.fixture(scope="session")
def operator_validator() -> Path:
    proc = subprocess.run(
        ["sh", str(TOOLS / "install.sh")], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, f"tools/k8s/install.sh (npm ci) failed:\n{proc.stderr}"
    return TOOLS / "validate-prometheus-operator.mjs"


def _validate_operator_objects(validator: Path, objects: list[Obj]) -> tuple[int, list[dict[str, object]]]:
    proc = subprocess.run(
        ["node", str(validator)],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def test_prometheus_operator_objects_validate(
    rendered: dict[str, list[Obj]], operator_validator: Path
) -> None:
    objects = [
        o for objs in rendered.values() for o in objs if o["apiVersion"].startswith(PROMETHEUS_OPERATOR)
    ]
    assert objects, "no PodMonitor rendered"
    code, results = _validate_operator_objects(operator_validator, objects)
    assert code == 0, [r for r in results if not r["ok"]]
    assert len(results) == 2 * len(objects)
    assert len({r["schema"] for r in results}) == 2


def test_prometheus_operator_validation_rejects_mutants(
    rendered: dict[str, list[Obj]], operator_validator: Path
) -> None:
    good = find(rendered["base+podmonitor"], "PodMonitor", "llmload")
    port_number = copy.deepcopy(good)
    port_number["spec"]["podMetricsEndpoints"][0]["port"] = 9646
    no_selector = copy.deepcopy(good)
    del no_selector["spec"]["selector"]
    bad_interval = copy.deepcopy(good)
    bad_interval["spec"]["podMetricsEndpoints"][0]["interval"] = "five seconds"
    mutants = [port_number, no_selector, bad_interval]
    code, results = _validate_operator_objects(operator_validator, mutants)
    assert code == 1
    assert len(results) == 2 * len(mutants) and not any(r["ok"] for r in results), results


def test_podmonitor_scrapes_the_master_exporter(rendered: dict[str, list[Obj]]) -> None:
    objects = rendered["base+podmonitor"]
    monitor = find(objects, "PodMonitor", "llmload")
    master = find(objects, "Job", "llmload-master")
    pod_labels = master["spec"]["template"]["metadata"]["labels"]
    (container,) = master["spec"]["template"]["spec"]["containers"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    worker = find(objects, "Job", "llmload-worker")
    assert not selector.items() <= worker["spec"]["template"]["metadata"]["labels"].items()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert str(ports[endpoint["port"]]) == env["LLMLOAD_PROMETHEUS_PORT"] == "9646"
    assert env["LLMLOAD_PROMETHEUS_HOST"] == "0.0.0.0"  # not the default 127.0.0.1
    interval = int(endpoint["interval"].removesuffix("s"))
    # not timing: the manifests' numbers: the last numbers are scraped
    assert int(env["LLMLOAD_PROMETHEUS_LINGER_S"]) >= 2 * interval
    assert all(label in pod_labels for label in monitor["spec"]["podTargetLabels"])
    service = find(objects, "Service", "llmload-master")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert {p["targetPort"] for p in service["spec"]["ports"]} <= set(ports)


def test_pushgateway_is_set_on_the_master_only(rendered: dict[str, list[Obj]]) -> None:
    objects = rendered["base+pushgateway"]
    for job, present in (("llmload-master", True), ("llmload-worker", False)):
        env = find(objects, "Job", job)["spec"]["template"]["spec"]["containers"][0]["env"]
        assert any(e["name"] == "LLMLOAD_PUSHGATEWAY_URL" for e in env) is present


def test_results_claim_is_shared_read_write_many(rendered: dict[str, list[Obj]]) -> None:
    objects = rendered["base+results-pvc"]
    claim = find(objects, "PersistentVolumeClaim", "llmload-results")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for job in ("llmload-master", "llmload-worker"):
        volumes = find(objects, "Job", job)["spec"]["template"]["spec"]["volumes"]
        results = next(v for v in volumes if v["name"] == "results")
        assert results == {"name": "results", "persistentVolumeClaim": {"claimName": "llmload-results"}}
