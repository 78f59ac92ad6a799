"""Fixtures for the offline Kubernetes checks: kubectl, and every combination rendered once."""

from __future__ import annotations

import shutil

import pytest

from tests.k8s.kustomize import Obj, combinations, render


@pytest.fixture(scope="session")
def kubectl() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip(
            "kubectl is not on PATH: these tests render k8s/ with `kubectl kustomize` "
            "(offline, no cluster needed); install kubectl to run them"
        )
    return path


@pytest.fixture(scope="session")
def rendered(kubectl: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Obj]]:
    scratch = tmp_path_factory.mktemp("kustomize")
    return {combo.name: render(kubectl, combo, scratch) for combo in combinations()}
