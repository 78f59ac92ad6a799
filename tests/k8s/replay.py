"""Replay rendered Jobs as local processes: a non-root user, a read-only root filesystem.

For each pod a Job would start, this builds what the kubelet would run (the container's command
and args, its environment from the image's ENV, envFrom ConfigMaps, env values, the Downward API
and optional Secret references) and runs it in its own mount namespace (``unshare -m``):

- ``/`` is remounted read-only; each writable volume (emptyDir, PersistentVolumeClaim) is writable:
  an emptyDir whose mount path exists here (``/tmp``) is a fresh tmpfs mounted in place (one per
  pod), other mount paths (``/results``) are rewritten to directories under the replay's root
  (a claim's directory is shared by every pod, like the ReadWriteMany PVC; an emptyDir's is per
  pod). ConfigMap volumes become read-only directories holding their keys.
- The process runs as the pod's runAsUser/runAsGroup through ``setpriv`` with no capabilities
  (bounding set cleared), no supplementary groups and no-new-privileges, like
  ``capabilities.drop: [ALL]`` and ``allowPrivilegeEscalation: false``.

Substitutions, each because the thing it replaces does not exist outside a cluster:
- Paths in the image map to the repository: ``/app/locustfiles`` -> ``locustfiles/``,
  ``/app/entrypoint.sh`` -> ``image/entrypoint.sh``; the working directory ``/app`` is the
  repository root; ``PATH`` starts with this Python's ``bin`` (the image's ``/usr/local/bin``,
  where ``pip install .`` put ``locust``).
- Names and ports: the master Service ``llmload-master`` is ``127.0.0.1``; its port 5557 and the
  exporter's 9646 are free local ports (other tests may hold the fixed ones); the target
  ``LOCUST_HOST`` is the simulator.
- The run is short: the caller replaces the run time, users and sweep levels.
- When this machine's Python lives under a directory the pod user cannot enter (``/root`` is
  0700 here), that one directory is replaced in the namespace by a 0755 tmpfs holding only the
  Python installation (the image has it in ``/usr/local``, readable by all).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.k8s.kustomize import REPO, Obj, find, pod_labels

IMAGE_PATHS = {
    "/app/locustfiles": REPO / "locustfiles",
    "/app/entrypoint.sh": REPO / "image" / "entrypoint.sh",
}
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Runs as root inside `unshare --mount --propagation private`; $@ is the container's argv.
SANDBOX = r"""
set -eu
uid=$1 gid=$2 binds=$3 tmpfs=$4 reveal=$5 stash=$6 keep=$7
shift 7
IFS=:
for d in $binds; do mount --bind "$d" "$d"; done
if [ -n "$reveal" ]; then
    parent=${reveal%/*}
    mount --bind "$reveal" "$stash"
    mount -t tmpfs -o mode=0755,size=1m tmpfs "$parent"
    mkdir "$reveal"
    mount --move "$stash" "$reveal"
    mount -o remount,ro "$parent"
fi
mount -o remount,bind,ro /
# The repository and the replay's own directory may lie under an emptyDir path (a clone in
# /tmp): carry them through the fresh tmpfs, read-only, with their writable volume binds.
mount -t tmpfs -o size=1m tmpfs /mnt
i=0
for k in $keep; do mkdir -p "/mnt/k$i"; mount --rbind "$k" "/mnt/k$i"; i=$((i + 1)); done
for d in $tmpfs; do mount -t tmpfs -o mode=1777,size=256m,nosuid,nodev tmpfs "$d"; done
i=0
for k in $keep; do
    if [ ! -d "$k" ]; then
        mkdir -p "$k"
        # mount(8) moves it, then fails to record it on the read-only root and exits 32:
        # what counts is that the mount is there.
        mount --move "/mnt/k$i" "$k" 2>/dev/null || mountpoint -q "$k"
        mount -o remount,bind,ro "$k"
    fi
    i=$((i + 1))
done
unset IFS
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs --inh-caps=-all \
    --bounding-set=-all -- "$@"
"""


@dataclass
class Pod:
    """One pod of a Job, as a local process plan."""

    name: str
    argv: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    tmpfs: list[str] = field(default_factory=list)  # mount paths here, a fresh tmpfs each
    binds: list[Path] = field(default_factory=list)  # host directories writable in the sandbox
    mapped: dict[str, Path] = field(default_factory=dict)  # container path -> host path


def _map_path(value: str, mapping: Mapping[str, Path]) -> str:
    for container_path, host_path in sorted(mapping.items(), key=lambda kv: -len(kv[0])):
        if value == container_path or value.startswith(container_path + "/"):
            return str(host_path) + value[len(container_path) :]
    return value


def _expand(value: str, env: Mapping[str, str]) -> str:
    """Kubernetes' $(VAR) expansion ($$ escapes; unknown references stay as written)."""
    return re.sub(
        r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
        lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)),
        value,
    )


def _field_ref(path: str, pod_name: str, labels: Mapping[str, str]) -> str:
    match = re.fullmatch(r"metadata\.labels\['([^']+)'\]", path)
    if match:
        return labels.get(match.group(1), "")
    known = {
        "metadata.name": pod_name,
        "metadata.namespace": "default",
        "spec.nodeName": "localhost",
        "status.podIP": "127.0.0.1",
    }
    assert path in known, f"fieldRef {path} is not supported by the replay"
    return known[path]


def _source(objects: list[Obj], kind: str, ref: Mapping[str, object]) -> dict[str, str] | None:
    try:
        obj = find(objects, kind, str(ref["name"]))
    except KeyError:
        assert ref.get("optional") is True, f"{kind} {ref['name']} is not rendered nor optional"
        return None  # an optional reference to an object that does not exist: skipped
    return dict(obj.get("data") or {})


def container_env(
    objects: list[Obj], job: Obj, pod_name: str, image_env: Mapping[str, str]
) -> dict[str, str]:
    """The environment the kubelet gives the first container of ``job``'s pod."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    labels = pod_labels(job)
    env = dict(image_env)
    for source in container.get("envFrom") or []:
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if key in source:
                env.update(
                    {
                        source.get("prefix", "") + k: v
                        for k, v in (_source(objects, kind, source[key]) or {}).items()
                    }
                )
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = _expand(item["value"], env)
            continue
        ref = item["valueFrom"]
        if "fieldRef" in ref:
            env[item["name"]] = _field_ref(ref["fieldRef"]["fieldPath"], pod_name, labels)
            continue
        kind, key = ("Secret", "secretKeyRef") if "secretKeyRef" in ref else ("ConfigMap", "configMapKeyRef")
        data = _source(objects, kind, ref[key])
        if data is not None:
            env[item["name"]] = data[ref[key]["key"]]
    return env


def plan_pod(
    objects: list[Obj],
    job: Obj,
    index: int,
    root: Path,
    *,
    image_env: Mapping[str, str],
    entrypoint: list[str],
) -> Pod:
    spec = job["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    name = f"{job['metadata']['name']}-{index}"
    psc = spec.get("securityContext") or {}
    csc = container.get("securityContext") or {}
    uid = int(csc.get("runAsUser", psc.get("runAsUser", -1)))
    gid = int(csc.get("runAsGroup", psc.get("runAsGroup", uid)))
    assert uid > 0, f"{name}: the replay runs pods as their runAsUser, which must be non-root"
    pod = Pod(name, [], {}, uid, gid, mapped=dict(IMAGE_PATHS))
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        _plan_volume(pod, objects, volumes[mount["name"]], mount["mountPath"].rstrip("/"), root)
    env = container_env(objects, job, name, image_env)
    argv = [_expand(a, env) for a in (container.get("command") or entrypoint)]
    argv += [_expand(a, env) for a in container.get("args") or []]
    pod.argv = [_map_path(a, pod.mapped) for a in argv]
    pod.env = {k: _map_path(v, pod.mapped) for k, v in env.items()}
    pod.env["PATH"] = f"{Path(sys.executable).parent}:{SYSTEM_PATH}"
    return pod


def _plan_volume(pod: Pod, objects: list[Obj], volume: Obj, path: str, root: Path) -> None:
    if "emptyDir" in volume and os.path.isdir(path):
        pod.tmpfs.append(path)
        return
    if "emptyDir" in volume or "persistentVolumeClaim" in volume:
        claim = volume.get("persistentVolumeClaim", {}).get("claimName")
        host = root / "claims" / claim if claim else root / "pods" / pod.name / volume["name"]
        host.mkdir(parents=True, exist_ok=True)
        os.chown(host, pod.uid, pod.gid)
        pod.binds.append(host)
    elif "configMap" in volume:
        host = root / "pods" / pod.name / volume["name"]
        host.mkdir(parents=True, exist_ok=True)
        for key, text in (find(objects, "ConfigMap", volume["configMap"]["name"]).get("data") or {}).items():
            (host / key).write_text(text)
    else:
        raise AssertionError(f"volume {volume['name']}: type not supported by the replay")
    pod.mapped[path] = host


def _hidden_python(uid: int) -> Path | None:
    """The directory to reveal when an ancestor of this Python's installation is closed to others."""
    target = Path(sys.base_prefix).resolve()
    for parent in [*reversed(target.parents)][1:]:
        if not parent.stat().st_mode & 0o001 and parent.stat().st_uid != uid:
            return parent / target.relative_to(parent).parts[0]
    return None


def start(pod: Pod, root: Path, cwd: Path = REPO) -> subprocess.Popen[bytes]:
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    assert unshare and setpriv, "the replay needs util-linux's unshare and setpriv"
    reveal = _hidden_python(pod.uid)
    stash = root / "stash" / pod.name
    stash.mkdir(parents=True, exist_ok=True)
    log = (root / f"{pod.name}.log").open("wb")
    argv = [
        unshare,
        "--mount",
        "--propagation",
        "private",
        "/bin/sh",
        "-c",
        SANDBOX,
        "sandbox",
        str(pod.uid),
        str(pod.gid),
        ":".join(map(str, pod.binds)),
        ":".join(pod.tmpfs),
        str(reveal or ""),
        str(stash),
        f"{REPO}:{root}",
        *pod.argv,
    ]
    with log:
        return subprocess.Popen(
            argv,
            env=pod.env,
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def log_of(pod: Pod, root: Path) -> str:
    path = root / f"{pod.name}.log"
    return path.read_text(errors="replace") if path.exists() else ""
