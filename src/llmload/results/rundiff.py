"""What changed between two runs of one key, in words: their fingerprints' difference.

A change point is only useful with its likely cause beside it: the engine or its version
(``vllm 0.9.1 → 0.9.2``), a launch flag (``--enable-chunked-prefill added``), a label
(``image: a → b``), llmload itself, the commit the run was started from. Read from the
records alone (``runrecord.py``), so it says what the runs recorded, nothing guessed.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

from llmload.protocol.jsonvalue import JSON
from llmload.results.runrecord import RunRecord

_VALUE_CHARS = 40  # of a changed setting's value: a nested config is named, not printed whole
_COMMIT_CHARS = 12


def fingerprint_difference(before: RunRecord, after: RunRecord) -> tuple[str, ...]:
    """Every difference of engine, version, models, launch arguments, labels, llmload's
    version and the commit between ``before`` and ``after``, engine first."""
    return (
        *_server(before, after),
        *_settings(before.server.launch_args, after.server.launch_args),
        *_labels(dict(before.labels), dict(after.labels)),
        *_client(before, after),
    )


def _server(before: RunRecord, after: RunRecord) -> list[str]:
    out = []
    if before.server.name != after.server.name:
        if before.server.engine == after.server.engine and before.server.engine:
            versions = f"{before.server.version or '?'} → {after.server.version or '?'}"
            out.append(f"{before.server.engine} {versions}")
        else:
            out.append(f"{before.server.name} → {after.server.name}")
    if before.server.models != after.server.models:
        out.append(f"models: {_listed(before.server.models)} → {_listed(after.server.models)}")
    return out


def _settings(before: JSON, after: JSON) -> list[str]:
    """Launch arguments as flags: added, removed, or a value changed."""
    old = before if isinstance(before, Mapping) else {}
    new = after if isinstance(after, Mapping) else {}
    out = []
    for name in [*old, *(k for k in new if k not in old)]:
        flag = "--" + name.replace("_", "-")
        if name not in new:
            out.append(f"{flag} removed")
        elif name not in old:
            out.append(f"{flag} added" if new[name] is True else f"{flag} {_value(new[name])} added")
        elif old[name] != new[name]:
            out.append(f"{flag}: {_value(old[name])} → {_value(new[name])}")
    return out


def _labels(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    out = []
    for name in [*before, *(k for k in after if k not in before)]:
        if name not in after:
            out.append(f"label {name}={before[name]} removed")
        elif name not in before:
            out.append(f"label {name}={after[name]} added")
        elif before[name] != after[name]:
            out.append(f"{name}: {before[name]} → {after[name]}")
    return out


def _client(before: RunRecord, after: RunRecord) -> list[str]:
    out = []
    if before.client.version != after.client.version:
        out.append(f"llmload {before.client.version or '?'} → {after.client.version or '?'}")
    if before.client.git_commit != after.client.git_commit:
        out.append(f"commit {_commit(before.client.git_commit)} → {_commit(after.client.git_commit)}")
    return out


def _value(value: JSON) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _listed(models: tuple[str, ...]) -> str:
    return ", ".join(models) or "-"


def _commit(commit: str | None) -> str:
    return "?" if commit is None else commit[:_COMMIT_CHARS]
