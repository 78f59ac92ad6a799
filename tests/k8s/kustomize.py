"""Rendering k8s/ with `kubectl kustomize` (offline), and reading the rendered objects.

Every overlay, every component on the base, all components together, and the sweep with all
components are rendered; ``test_every_overlay_and_component_is_rendered`` keeps this list
complete when someone adds a directory under k8s/.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "k8s"
BASE = K8S / "base"
COMPONENTS = ("podmonitor", "pushgateway", "results-pvc", "custom-locustfile")
OVERLAYS = ("sweep", "example")
# Other kustomization roots directly under k8s/.
ROOTS = ("base", "components", "overlays", "results-reader")

Obj = dict[str, Any]


@dataclass(frozen=True)
class Combination:
    """A kustomization: one resource directory plus components on top."""

    name: str
    resource: Path
    components: tuple[str, ...] = ()


def combinations() -> list[Combination]:
    combos = [Combination("base", BASE)]
    combos += [Combination(f"base+{c}", BASE, (c,)) for c in COMPONENTS]
    combos.append(Combination("base+all", BASE, COMPONENTS))
    combos += [Combination(f"overlays/{o}", K8S / "overlays" / o) for o in OVERLAYS]
    combos.append(Combination("overlays/sweep+all", K8S / "overlays" / "sweep", COMPONENTS))
    combos.append(Combination("overlays/sweep+results-pvc", K8S / "overlays" / "sweep", ("results-pvc",)))
    combos.append(Combination("results-reader", K8S / "results-reader"))
    return combos


def _kustomization(combo: Combination, into: Path) -> Path:
    """A directory whose kustomization.yaml composes ``combo`` (kustomize needs relative paths)."""
    if not combo.components:
        return combo.resource
    into.mkdir(parents=True, exist_ok=True)
    doc = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(combo.resource, into)],
        "components": [os.path.relpath(K8S / "components" / c, into) for c in combo.components],
    }
    (into / "kustomization.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return into


def render(kubectl: str, combo: Combination, scratch: Path) -> list[Obj]:
    directory = _kustomization(combo, scratch / combo.name.replace("/", "_").replace("+", "_"))
    proc = subprocess.run(
        [kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, f"kubectl kustomize {combo.name} failed:\n{proc.stderr}"
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc]


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    """The object of ``kind`` named ``name`` (ConfigMaps by their name before the hash suffix)."""
    for obj in objects:
        obj_name = obj["metadata"]["name"]
        if obj["kind"] == kind and (obj_name == name or obj_name.rsplit("-", 1)[0] == name):
            return obj
    raise KeyError(f"{kind}/{name}")


def pod_spec(obj: Obj) -> Obj | None:
    """The pod spec that ``obj`` runs, if it runs pods."""
    if obj["kind"] == "Pod":
        spec: Obj = obj["spec"]
        return spec
    if obj["kind"] == "CronJob":
        return pod_spec({"kind": "Job", **obj["spec"]["jobTemplate"]})
    template = obj.get("spec", {}).get("template")
    return template.get("spec") if isinstance(template, dict) else None


def pod_labels(obj: Obj) -> dict[str, str]:
    if obj["kind"] == "Pod":
        return dict(obj["metadata"].get("labels") or {})
    return dict(obj["spec"]["template"]["metadata"].get("labels") or {})


def containers(spec: Obj) -> Iterator[Obj]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def env_value(container: Obj, name: str) -> str | None:
    for item in container.get("env") or []:
        if item["name"] == name:
            value: str | None = item.get("value")
            return value
    return None
