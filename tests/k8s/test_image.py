"""The worker image (image/Dockerfile) and its entrypoint, checked without a Docker engine."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.k8s import dockerfile
from tests.k8s.kustomize import REPO, Obj

pytestmark = pytest.mark.e2e

ENTRYPOINT = REPO / "image" / "entrypoint.sh"


def test_dockerfile_meets_the_rules() -> None:
    assert dockerfile.problems() == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("USER 10001:10001", "USER llmload", "numeric"),
        ("USER 10001:10001", "USER 0", "root"),
        ("USER 10001:10001", "", "no USER"),
        ("FROM python:3.11.13-slim-bookworm@sha256:", "FROM python:latest@sha256:", "latest"),
        (
            "FROM python:3.11.13-slim-bookworm@sha256:86adf8dbadc3d6e82ee5dd2c74bec2e1c2467cdad47886280501df"
            "722372d2e1",
            "FROM python",
            "no tag",
        ),
        ('ENTRYPOINT ["/app/entrypoint.sh"]', 'ENTRYPOINT ["locust"]', "ENTRYPOINT"),
        ('ENTRYPOINT ["/app/entrypoint.sh"]', "ENTRYPOINT /app/entrypoint.sh", "exec-form"),
        ("pip install --no-cache-dir", "pip install", "no-cache-dir"),
        ("PYTHONDONTWRITEBYTECODE=1", "PYTHONDONTWRITEBYTECODE=0", "PYTHONDONTWRITEBYTECODE"),
        ("MPLCONFIGDIR=/tmp/mpl", "MPLCONFIGDIR=/app/mpl", "MPLCONFIGDIR"),
        ("EXPOSE 5557 9646", "EXPOSE 5557", "9646"),
    ],
)
def test_dockerfile_rules_catch_mutants(tmp_path: Path, old: str, new: str, expected: str) -> None:
    text = dockerfile.DOCKERFILE.read_text()
    assert old in text
    mutant = tmp_path / "Dockerfile"
    mutant.write_text(text.replace(old, new))
    assert any(expected in p for p in dockerfile.problems(mutant)), dockerfile.problems(mutant)


def test_dockerignore_keeps_what_the_image_copies() -> None:
    ignore = (REPO / "image" / "Dockerfile.dockerignore").read_text().split()
    kept = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    sources = [v.split()[-2] for v in dockerfile.values("COPY")]
    assert "*" in ignore
    assert all(s.rstrip("/") in kept for s in sources), (sources, kept)


def test_jobs_run_the_image_entrypoint_as_its_user(rendered: dict[str, list[Obj]]) -> None:
    uid, _, gid = dockerfile.values("USER")[-1].partition(":")
    exposed = {p for v in dockerfile.values("EXPOSE") for p in v.split()}
    for name, objects in rendered.items():
        for job in (o for o in objects if o["kind"] == "Job"):
            spec = job["spec"]["template"]["spec"]
            (container,) = spec["containers"]
            assert container["command"] == dockerfile.entrypoint(), name
            assert spec["securityContext"]["runAsUser"] == int(uid), name
            assert spec["securityContext"]["runAsGroup"] == int(gid), name
            ports = {str(p["containerPort"]) for p in container.get("ports") or []}
            assert ports <= exposed, (name, ports)


def _fake_locust(bin_dir: Path) -> None:
    bin_dir.mkdir()
    fake = bin_dir / "locust"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)


def _entrypoint(tmp_path: Path, shell: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    _fake_locust(tmp_path / "bin")
    full_env = {
        "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "MPLCONFIGDIR": str(tmp_path / "mpl"),
        **env,
    }
    return subprocess.run(
        [shell, str(ENTRYPOINT), *args], env=full_env, capture_output=True, text=True, timeout=10, check=False
    )


@pytest.fixture
def posix_sh() -> str:
    """dash, where it exists: a POSIX shell without bash extensions."""
    return shutil.which("dash") or "/bin/sh"


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("master", ["-f", "/app/locustfiles/chat.py", "--master", "--headless"]),
        ("worker", ["-f", "/app/locustfiles/chat.py", "--worker"]),
        ("standalone", ["-f", "/app/locustfiles/chat.py", "--headless"]),
    ],
)
def test_entrypoint_runs_the_role(tmp_path: Path, posix_sh: str, role: str, expected: list[str]) -> None:
    proc = _entrypoint(tmp_path, posix_sh, LLMLOAD_ROLE=role)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected
    assert (tmp_path / "home").is_dir() and (tmp_path / "mpl").is_dir()


def test_entrypoint_defaults_and_forwards(tmp_path: Path, posix_sh: str) -> None:
    proc = _entrypoint(
        tmp_path, posix_sh, "--loglevel", "DEBUG", LOCUST_LOCUSTFILE="/app/custom/locustfile.py"
    )
    assert proc.stdout.split() == ["-f", "/app/custom/locustfile.py", "--headless", "--loglevel", "DEBUG"]


def test_entrypoint_rejects_an_unknown_role(tmp_path: Path, posix_sh: str) -> None:
    proc = _entrypoint(tmp_path, posix_sh, LLMLOAD_ROLE="leader")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "unknown LLMLOAD_ROLE 'leader'" in proc.stderr
    assert "master, worker or standalone" in proc.stderr


def test_entrypoint_is_executable_posix_sh(posix_sh: str) -> None:
    assert os.access(ENTRYPOINT, os.X_OK)
    assert ENTRYPOINT.read_text().startswith("#!/bin/sh\n")
    assert subprocess.run([posix_sh, "-n", str(ENTRYPOINT)], check=False).returncode == 0
