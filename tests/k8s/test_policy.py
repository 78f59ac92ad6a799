"""Policy tests over the rendered YAML: every combination passes, and every mutant is caught."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from tests.k8s import dockerfile
from tests.k8s.kustomize import Obj, combinations, find
from tests.k8s.policy import violations

pytestmark = pytest.mark.e2e

COMBINATIONS = [c.name for c in combinations()]


@pytest.mark.parametrize("name", COMBINATIONS)
def test_rendered_manifests_meet_the_policy(rendered: dict[str, list[Obj]], name: str) -> None:
    assert violations(rendered[name], dockerfile.image_env()) == []


def _worker(objects: list[Obj]) -> Obj:
    return find(objects, "Job", "llmload-worker")


def _master(objects: list[Obj]) -> Obj:
    return find(objects, "Job", "llmload-master")


def _pod(job: Obj) -> Obj:
    spec: Obj = job["spec"]["template"]["spec"]
    return spec


def _container(job: Obj) -> Obj:
    container: Obj = _pod(job)["containers"][0]
    return container


def _csc(job: Obj) -> Obj:
    csc: Obj = _container(job)["securityContext"]
    return csc


def _env(job: Obj, name: str, value: str) -> None:
    env = _container(job)["env"]
    env[:] = [e for e in env if e["name"] != name] + [{"name": name, "value": value}]


Mutation = Callable[[list[Obj]], None]
MUTANTS: dict[str, tuple[Mutation, str]] = {
    "privileged": (lambda o: _csc(_worker(o)).update(privileged=True), "privileged"),
    "latest tag": (lambda o: _container(_master(o)).update(image="ghcr.io/llmload/llmload:latest"), "latest"),
    "untagged image": (lambda o: _container(_worker(o)).update(image="ghcr.io/llmload/llmload"), "no tag"),
    "no seccomp": (lambda o: _pod(_master(o))["securityContext"].pop("seccompProfile"), "seccomp"),
    "seccomp unconfined": (
        lambda o: _csc(_worker(o)).update(seccompProfile={"type": "Unconfined"}),
        "seccomp",
    ),
    "automounted token": (
        lambda o: _pod(_worker(o)).update(automountServiceAccountToken=True),
        "automountServiceAccountToken",
    ),
    "token by default": (
        lambda o: _pod(_master(o)).pop("automountServiceAccountToken"),
        "automountServiceAccountToken",
    ),
    "service links": (lambda o: _pod(_master(o)).pop("enableServiceLinks"), "enableServiceLinks"),
    "root user": (lambda o: _csc(_master(o)).update(runAsUser=0), "non-root"),
    "runAsNonRoot off": (lambda o: _csc(_worker(o)).update(runAsNonRoot=False), "non-root"),
    "privilege escalation": (
        lambda o: _csc(_master(o)).update(allowPrivilegeEscalation=True),
        "allowPrivilegeEscalation",
    ),
    "capability added": (
        lambda o: _csc(_worker(o))["capabilities"].update(add=["SYS_ADMIN"]),
        "capabilities.add",
    ),
    "capabilities kept": (lambda o: _csc(_worker(o)).pop("capabilities"), "drop ALL"),
    "writable root": (lambda o: _csc(_master(o)).update(readOnlyRootFilesystem=False), "read-only root"),
    "host network": (lambda o: _pod(_worker(o)).update(hostNetwork=True), "host namespaces"),
    "hostPath volume": (
        lambda o: _pod(_master(o))["volumes"].append({"name": "host", "hostPath": {"path": "/"}}),
        "not allowed",
    ),
    "host port": (lambda o: _container(_master(o))["ports"][0].update(hostPort=5557), "hostPort"),
    "no limits": (lambda o: _container(_master(o))["resources"].pop("limits"), "resources"),
    "worker cpu burst": (
        lambda o: _container(_worker(o))["resources"]["limits"].update(cpu="4"),
        "CPU requests == limits",
    ),
    "no run-id on pods": (
        lambda o: _worker(o)["spec"]["template"]["metadata"]["labels"].pop("llmload.io/run-id"),
        "run-id",
    ),
    "no run-id on the Job": (lambda o: _master(o)["metadata"]["labels"].pop("llmload.io/run-id"), "run-id"),
    "retried": (lambda o: _master(o)["spec"].update(backoffLimit=3), "backoffLimit"),
    "restarted": (lambda o: _pod(_worker(o)).update(restartPolicy="OnFailure"), "restartPolicy"),
    "no deadline": (lambda o: _master(o)["spec"].pop("activeDeadlineSeconds"), "activeDeadlineSeconds"),
    "no ttl": (lambda o: _worker(o)["spec"].pop("ttlSecondsAfterFinished"), "ttlSecondsAfterFinished"),
    "parallelism != completions": (lambda o: _worker(o)["spec"].update(completions=1), "completions"),
    "master expects too few": (
        lambda o: _env(_master(o), "LOCUST_EXPECT_WORKERS", "2"),
        "LOCUST_EXPECT_WORKERS",
    ),
    "HOME on the read-only root": (lambda o: _env(_worker(o), "HOME", "/home/llmload"), "HOME=/home/llmload"),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_policy_reports_each_mutant(rendered: dict[str, list[Obj]], mutant: str) -> None:
    objects = copy.deepcopy(rendered["base+all"])
    mutate, expected = MUTANTS[mutant]
    mutate(objects)
    found = violations(objects, dockerfile.image_env())
    assert any(expected in v for v in found), found
