"""Policy over rendered manifests: the "restricted" Pod Security Standard and llmload's own rules.

``violations(objects)`` returns one line per broken rule, naming the object and the field; the
tests assert it is empty for every rendered combination and non-empty for each mutant.

Restricted PSS (https://kubernetes.io/docs/concepts/security/pod-security-standards/): no host
namespaces, ports or paths; not privileged; no privilege escalation; non-root (runAsNonRoot, no
UID 0); all capabilities dropped (only NET_BIND_SERVICE may be added); seccomp RuntimeDefault or
Localhost; only the restricted volume types; default /proc mount; no unsafe sysctls.
llmload's rules: read-only root filesystem; no service-account token; a tagged image that is not
`latest`; CPU and memory requests and limits on every container, requests == limits on workers;
run labels on every run's object and pod; Jobs that run once (backoffLimit 0, restartPolicy
Never) with a deadline and a TTL (bare pods: a deadline); worker parallelism == completions, and
the master waits for exactly the worker processes they start; HOME and MPLCONFIGDIR writable;
no service links (they would inject LLMLOAD_MASTER_* variables).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.k8s.kustomize import Obj, containers, env_value, pod_labels, pod_spec

NAME_LABEL = "app.kubernetes.io/name"
RUN_LABEL = "llmload.io/run-id"
# Objects that belong to one run (and their pods). The PodMonitor, the results claim, a custom
# locustfile's ConfigMap and the results reader pod may serve many runs.
PER_RUN_KINDS = {"Job", "Service"}
PER_RUN_CONFIGMAP = "llmload-options"
RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}
# The image's environment (image/Dockerfile ENV), for the HOME/MPLCONFIGDIR rule.
DEFAULT_IMAGE_ENV = {"HOME": "/tmp/home", "MPLCONFIGDIR": "/tmp/mpl"}


def _ref(obj: Obj) -> str:
    return f"{obj['kind']}/{obj['metadata'].get('name', '?')}"


def _pod_rules(spec: Obj) -> list[str]:
    out = []
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key) is True:
            out.append(f"{key}: host namespaces are not allowed")
    if spec.get("automountServiceAccountToken") is not False:
        out.append("automountServiceAccountToken must be false (no service-account token)")
    if spec.get("enableServiceLinks") is not False:
        # The Service llmload-master would inject LLMLOAD_MASTER_* variables into llmload's own
        # LLMLOAD_* option namespace.
        out.append("enableServiceLinks must be false (service variables would shadow options)")
    psc = spec.get("securityContext") or {}
    for sysctl in psc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            out.append(f"securityContext.sysctls: {sysctl.get('name')} is not a safe sysctl")
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            out.append(f"volume {volume.get('name')}: volume type {sorted(kinds)} is not allowed")
    return out


def _seccomp(csc: Mapping[str, Any], psc: Mapping[str, Any]) -> str | None:
    profile = csc.get("seccompProfile") or psc.get("seccompProfile")
    return (profile or {}).get("type")


def _container_rules(c: Obj, psc: Mapping[str, Any]) -> list[str]:
    csc = c.get("securityContext") or {}
    where = f"container {c.get('name')}"
    out = []
    if csc.get("privileged") is True:
        out.append(f"{where}: privileged is not allowed")
    if csc.get("allowPrivilegeEscalation") is not False:
        out.append(f"{where}: allowPrivilegeEscalation must be false")
    caps = csc.get("capabilities") or {}
    if "ALL" not in (caps.get("drop") or []):
        out.append(f"{where}: capabilities must drop ALL")
    if set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
        out.append(f"{where}: capabilities.add {caps.get('add')} is not allowed")
    non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
    if non_root is not True:
        out.append(f"{where}: runAsNonRoot must be true (non-root)")
    if 0 in (csc.get("runAsUser"), psc.get("runAsUser")):
        out.append(f"{where}: runAsUser 0 is root (non-root)")
    if _seccomp(csc, psc) not in ("RuntimeDefault", "Localhost"):
        out.append(f"{where}: seccompProfile must be RuntimeDefault (seccomp)")
    if csc.get("procMount", "Default") != "Default":
        out.append(f"{where}: procMount must be Default")
    if any(p.get("hostPort") for p in c.get("ports") or []):
        out.append(f"{where}: hostPort is not allowed")
    if csc.get("readOnlyRootFilesystem") is not True:
        out.append(f"{where}: readOnlyRootFilesystem must be true (read-only root filesystem)")
    out += _image_rules(where, c.get("image", ""))
    out += _resource_rules(where, c)
    return out


def _image_rules(where: str, image: str) -> list[str]:
    if "@sha256:" in image:
        return []
    name_part = image.rsplit("/", 1)[-1]
    if ":" not in name_part:
        return [f"{where}: image {image!r} has no tag (untagged images mean latest)"]
    if name_part.rsplit(":", 1)[1] == "latest":
        return [f"{where}: image {image!r} uses the latest tag"]
    return []


def _resource_rules(where: str, c: Obj) -> list[str]:
    res = c.get("resources") or {}
    out = []
    for part in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            if resource not in (res.get(part) or {}):
                out.append(f"{where}: resources.{part}.{resource} must be set (resources)")
    return out


def _writable_paths(spec: Obj, c: Obj) -> list[str]:
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    paths = []
    for mount in c.get("volumeMounts") or []:
        volume = volumes.get(mount["name"], {})
        writable = "emptyDir" in volume or "persistentVolumeClaim" in volume or "ephemeral" in volume
        if writable and not mount.get("readOnly"):
            paths.append(mount["mountPath"].rstrip("/"))
    return paths


def _writable_env_rules(spec: Obj, c: Obj, image_env: Mapping[str, str]) -> list[str]:
    """llmload's containers (Python, matplotlib) need HOME and MPLCONFIGDIR to be writable."""
    if c.get("image", "").split("@")[0].split(":")[0].rsplit("/", 1)[-1] != "llmload":
        return []
    out = []
    paths = _writable_paths(spec, c)
    for var in ("HOME", "MPLCONFIGDIR"):
        value = env_value(c, var) or image_env.get(var)
        if not value or not any(value == p or value.startswith(p + "/") for p in paths):
            out.append(f"container {c.get('name')}: {var}={value} is not on a writable volume")
    return out


def _job_rules(obj: Obj, spec: Obj) -> list[str]:
    out = []
    if obj["spec"].get("backoffLimit") != 0:
        out.append("backoffLimit must be 0 (a load test is never retried)")
    if spec.get("restartPolicy") != "Never":
        out.append("restartPolicy must be Never")
    for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        if not isinstance(obj["spec"].get(key), int):
            out.append(f"{key} must be set")
    return out


def _label_rules(obj: Obj) -> list[str]:
    out = []
    labels = obj["metadata"].get("labels") or {}
    if labels.get(NAME_LABEL) != "llmload":
        out.append(f"label {NAME_LABEL}=llmload missing")
    per_run = obj["kind"] in PER_RUN_KINDS or (
        obj["kind"] == "ConfigMap" and obj["metadata"]["name"].startswith(PER_RUN_CONFIGMAP)
    )
    if per_run and not labels.get(RUN_LABEL):
        out.append(f"label {RUN_LABEL} missing (run-id)")
    if obj["kind"] == "Job":
        template = pod_labels(obj)
        if template.get(NAME_LABEL) != "llmload" or not template.get(RUN_LABEL):
            out.append(f"pod template labels {NAME_LABEL} and {RUN_LABEL} missing (run-id)")
    return out


def _component(obj: Obj) -> str | None:
    labels: dict[str, str] = obj["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/component")


def _fleet_rules(objects: list[Obj]) -> list[str]:
    """Worker Job vs master: parallelism == completions; expect-workers == pods x processes."""
    jobs = {_component(o): o for o in objects if o["kind"] == "Job"}
    if not jobs:
        return []
    master, worker = jobs.get("master"), jobs.get("worker")
    if master is None or worker is None:
        return ["a master Job and a worker Job are required"]
    out = []
    for c in worker["spec"]["template"]["spec"]["containers"]:
        res = c.get("resources") or {}
        for resource in ("cpu", "memory"):
            requests = (res.get("requests") or {}).get(resource)
            if requests != (res.get("limits") or {}).get(resource):
                out.append(
                    f"{_ref(worker)}: container {c['name']}: {resource} requests must equal "
                    f"limits on workers (CPU requests == limits)"
                )
    parallelism, completions = worker["spec"].get("parallelism"), worker["spec"].get("completions")
    if parallelism != completions:
        out.append(f"{_ref(worker)}: parallelism {parallelism} != completions {completions}")
    processes = int(env_value(worker["spec"]["template"]["spec"]["containers"][0], "LOCUST_PROCESSES") or 1)
    expect = env_value(master["spec"]["template"]["spec"]["containers"][0], "LOCUST_EXPECT_WORKERS")
    if parallelism is not None and expect != str(parallelism * processes):
        out.append(
            f"{_ref(master)}: LOCUST_EXPECT_WORKERS={expect} but the worker Job starts "
            f"{parallelism} pods x {processes} processes"
        )
    return out


def violations(objects: list[Obj], image_env: Mapping[str, str] = DEFAULT_IMAGE_ENV) -> list[str]:
    found = []
    for obj in objects:
        found += [f"{_ref(obj)}: {v}" for v in _label_rules(obj)]
        spec = pod_spec(obj)
        if spec is None:
            continue
        psc = spec.get("securityContext") or {}
        rules = _pod_rules(spec)
        for c in containers(spec):
            rules += _container_rules(c, psc) + _writable_env_rules(spec, c, image_env)
        if obj["kind"] == "Job":
            rules += _job_rules(obj, spec)
        elif obj["kind"] == "Pod" and not isinstance(spec.get("activeDeadlineSeconds"), int):
            rules.append("activeDeadlineSeconds must be set (a bare pod must not linger)")
        found += [f"{_ref(obj)}: {v}" for v in rules]
    found += _fleet_rules(objects)
    return found
