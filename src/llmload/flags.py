"""A command-line flag, declared once in a table, and the parser built from the table.

Every program of llmload builds its parser from a table of these: Locust's run and the commands
(``config/option.py``'s ``Option`` adds the ``RunConfig`` field a flag sets) and the simulated
server (``sim/flags.py``). No parser names a flag by hand (``add_argument("--x", ...)``), so a
flag cannot mean one thing in one place and another beside it
(``tests/unit/config/test_flags_declared.py``). It sits with the error tree, the lowest layer,
because the simulator, which imports nothing of llmload above that, declares its table with it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

_NOT_GIVEN = object()


@dataclass(frozen=True, slots=True)
class Flag:
    flag: str
    help: str
    # What argparse turns the text into: a type, or a parser that raises ConfigError naming the
    # flag; bool: a switch, off unless given
    kind: Callable[[str], Any] = str
    default: Any = None
    # The --help section it is listed under ("": the program's own options)
    group: str = ""
    # Given once per value (--label a=1 --label b=2): the parsed value is a list, or None
    repeated: bool = False
    # Other spellings it answers to, kept so that command lines written for them still work
    aliases: tuple[str, ...] = ()
    # The values it takes; the parser offers exactly those
    allowed: tuple[str, ...] = ()
    metavar: str | None = None  # the value's name in --help, where the flag's own is unclear
    required: bool = False  # the command cannot run without it

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def choices(self) -> tuple[str, ...] | None:
        return self.allowed or None

    def shown_default(self, default: Any = _NOT_GIVEN) -> str:
        value = self.default if default is _NOT_GIVEN else default
        if self.kind is bool:
            return "on" if value else "off"
        return "" if value is None else str(value)

    def argparse_kwargs(self, default: Any = _NOT_GIVEN, text: str | None = None) -> dict[str, Any]:
        """What ``add_argument`` takes for this flag: its ``default`` (the declared one unless a
        command gives its own) and help ``text`` (the declared help unless a command adds to it)."""
        value = self.default if default is _NOT_GIVEN else default
        kwargs: dict[str, Any] = {"help": (self.help if text is None else text).replace("%", "%%")}
        kwargs["default"] = value
        if self.metavar:
            kwargs["metavar"] = self.metavar
        if self.required:
            kwargs["required"] = True
        if self.repeated:
            kwargs["action"] = "append"
        elif self.kind is bool:
            kwargs.pop("metavar", None)
            kwargs["default"] = bool(value)
            kwargs["action"] = "store_true"
        else:
            kwargs["type"] = self.kind
            if self.choices:
                kwargs["choices"] = self.choices
        return kwargs


def add_flags(parser: argparse.ArgumentParser, flags: Iterable[Flag]) -> None:
    """Declare ``flags`` on ``parser``, each under the --help section its ``group`` names."""
    sections: dict[str, Any] = {}
    for flag in flags:
        target: Any = parser
        if flag.group:
            if flag.group not in sections:
                sections[flag.group] = parser.add_argument_group(flag.group)
            target = sections[flag.group]
        target.add_argument(flag.flag, *flag.aliases, **flag.argparse_kwargs())
