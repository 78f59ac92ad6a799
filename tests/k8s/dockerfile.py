"""A small reader for image/Dockerfile: its instructions, the ENV it sets, its ENTRYPOINT.

hadolint is not available here; tests/k8s/test_image.py checks the rules that matter for the pods
(numeric non-root USER, a pinned base, no `latest`, ENTRYPOINT is the script) with this reader.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.k8s.kustomize import REPO

DOCKERFILE = REPO / "image" / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    value: str


def instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    """Instructions in order: comments dropped, backslash continuations joined."""
    out: list[Instruction] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        keyword, _, value = line.partition(" ")
        out.append(Instruction(keyword.upper(), value.strip()))
    return out


def values(keyword: str, path: Path = DOCKERFILE) -> list[str]:
    return [i.value for i in instructions(path) if i.keyword == keyword]


def image_env(path: Path = DOCKERFILE) -> dict[str, str]:
    """The environment ENV instructions set (``KEY=value`` pairs; no variable expansion)."""
    env: dict[str, str] = {}
    for value in values("ENV", path):
        for item in shlex.split(value):
            key, sep, val = item.partition("=")
            assert sep, f"ENV {value!r}: use the KEY=value form"
            env[key] = val
    return env


def entrypoint(path: Path = DOCKERFILE) -> list[str]:
    (value,) = values("ENTRYPOINT", path)
    parsed = json.loads(value)  # the exec form; the shell form would not forward signals
    assert isinstance(parsed, list)
    return [str(v) for v in parsed]


def _base_image_problems(image: str) -> list[str]:
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    if not tag:
        return [f"FROM {image}: no tag (an untagged base is latest)"]
    if tag == "latest":
        return [f"FROM {image}: the latest tag is not a pinned base"]
    if not re.search(r"\d+\.\d+", tag) and not digest:
        return [f"FROM {image}: tag {tag!r} is not a specific version; pin a version or digest"]
    if digest and not re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
        return [f"FROM {image}: malformed digest"]
    return []


def _user_problems(users: list[str]) -> list[str]:
    if not users:
        return ["no USER: the image would run as root"]
    uid, _, gid = users[-1].partition(":")
    if not uid.isdigit() or (gid and not gid.isdigit()):
        return [f"USER {users[-1]}: use a numeric UID[:GID] (runAsNonRoot checks the number)"]
    if int(uid) == 0 or (gid and int(gid) == 0):
        return [f"USER {users[-1]}: root"]
    return []


def problems(path: Path = DOCKERFILE) -> list[str]:
    """What a reviewer (or hadolint, where it exists) would reject for the pods' image."""
    found: list[str] = []
    for value in values("FROM", path):
        found += _base_image_problems(value.split()[0])
    found += _user_problems(values("USER", path))
    entry = values("ENTRYPOINT", path)
    if len(entry) != 1 or not entry[0].startswith("["):
        found.append("ENTRYPOINT must be one exec-form (JSON) instruction")
    elif entrypoint(path) != ["/app/entrypoint.sh"]:
        found.append(f"ENTRYPOINT {entry[0]}: must be the script /app/entrypoint.sh")
    copies = [v.split()[-2:] for v in values("COPY", path)]
    if ["image/entrypoint.sh", "/app/entrypoint.sh"] not in copies:
        found.append("COPY image/entrypoint.sh /app/entrypoint.sh is missing")
    if not any(dest.rstrip("/") == "/app/locustfiles" for _, dest in copies):
        found.append("the locustfiles are not copied to /app/locustfiles")
    env = image_env(path)
    for key, want in (("PYTHONDONTWRITEBYTECODE", "1"), ("PYTHONUNBUFFERED", "1")):
        if env.get(key) != want:
            found.append(f"ENV {key}={want} is missing")
    for key in ("HOME", "MPLCONFIGDIR"):
        if not env.get(key, "").startswith("/tmp/"):
            found.append(f"ENV {key} must point into /tmp (the writable emptyDir)")
    for run in values("RUN", path):
        if "pip install" in run and "--no-cache-dir" not in run:
            found.append(f"RUN {run[:40]}...: pip install without --no-cache-dir")
    exposed = {p.split("/")[0] for v in values("EXPOSE", path) for p in v.split()}
    if not {"5557", "9646"} <= exposed:
        found.append(f"EXPOSE {sorted(exposed)}: 5557 and 9646 must be exposed")
    return found
