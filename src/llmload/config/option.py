"""One option of llmload's table (``llmload.config.options``): a ``Flag`` (``llmload.flags``)
with its ``LLMLOAD_*`` variable and the ``RunConfig`` field it sets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin, get_type_hints

from llmload.config.settings import RunConfig
from llmload.config.values import Parse
from llmload.flags import Flag

_NOT_PASSED = object()


def field_type(path: str) -> Any:
    """The annotated type of a RunConfig field, by dotted path through nested dataclasses."""
    owner: Any = RunConfig
    hint: Any = None
    for name in path.split("."):
        hint = get_type_hints(owner)[name]
        owner = hint
    return hint


def choices_of(path: str) -> tuple[str, ...] | None:
    hint = field_type(path)
    if get_origin(hint) is Literal:
        return tuple(str(a) for a in get_args(hint))
    return None


@dataclass(frozen=True, slots=True)
class Option(Flag):
    """A flag of Locust's run or of the llmload commands, with what argparse, the web UI's start
    form and ``llmload sweep`` need to know of it."""

    group: str = "workload"
    # llmload sweep|search take the option too, with this default, and pass it on to Locust
    sweep_default: Any = _NOT_PASSED
    # The RunConfig field it sets, as a dotted path ("workload.prefix.groups"); a parser that
    # returns a tuple sets a tuple of fields.
    to: str | tuple[str, ...] = ""
    # How its value becomes the field's, when a type alone does not say (config/values.py).
    parse: Parse | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.to,) if isinstance(self.to, str) else self.to

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The values it takes, or its field's Literal admits: the parser offers exactly those."""
        if self.allowed or not self.to:
            return self.allowed or None
        return choices_of(self.fields[0]) if self.parse is None and self.kind is str else None

    @property
    def on_start_form(self) -> bool:
        """Shown on Locust's web UI start form, and so set per swarm: what a run asks, not where
        its results and metrics go or how a fleet talks."""
        return self.group in _PER_RUN_GROUPS

    @property
    def env(self) -> str:
        return "LLMLOAD_" + self.dest.upper()

    @property
    def in_sweep(self) -> bool:
        return self.sweep_default is not _NOT_PASSED


# The groups a web UI swarm sets per run: what a run asks, not where its results go
_PER_RUN_GROUPS = frozenset({"request", "workload", "checks"})
