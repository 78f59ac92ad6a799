"""JSON values as types: what ``orjson`` reads and writes where data leaves a process or a file.

``JSON`` is covariant (``Sequence``, ``Mapping``), so a writer builds one from typed parts (a
``list[int]`` or a ``dict[str, str]`` is a JSON value) and a reader gets, from ``orjson.loads``,
lists and dicts that are JSON too. A reader narrows what it takes out with the helpers below:
they raise ``ValueError`` on a value of the wrong type, as a decoder does, instead of letting a
malformed message travel on as something it is not.

Here, below everything that reads or writes JSON (core, results, run, export, ...); the layers
beside this one (workload, sim) keep their JSON as ``object`` values and narrow it themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    JSON: TypeAlias = bool | int | float | str | Sequence["JSON"] | Mapping[str, "JSON"] | None
else:
    # At run time a JSON value is whatever the decoder read: msgspec, which decodes the typed
    # files (results/summary.py), cannot follow a recursive alias, and keeps ``Any`` as read.
    JSON = Any
JSONObject: TypeAlias = Mapping[str, JSON]


def obj(value: JSON, what: str = "value") -> JSONObject:
    """``value`` as a JSON object; an error when it is another kind of value."""
    if isinstance(value, Mapping):
        return value
    raise ValueError(f"{what}: expected a JSON object, got {type(value).__name__}")


def array(value: JSON, what: str = "value") -> Sequence[JSON]:
    """``value`` as a JSON array (a string is none, though Python calls it a sequence)."""
    if isinstance(value, list | tuple):
        return value
    raise ValueError(f"{what}: expected a JSON array, got {type(value).__name__}")


def integer(value: JSON, what: str = "value") -> int:
    """An integer; a float that is one (msgpack and older writers may give 3.0) counts."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{what}: expected an integer, got {value!r}")


def number(value: JSON, what: str = "value") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what}: expected a number, got {value!r}")
    return float(value)


def string(value: JSON, what: str = "value") -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what}: expected a string, got {value!r}")
    return value


def optional_integer(value: JSON, what: str = "value") -> int | None:
    return None if value is None else integer(value, what)


def optional_number(value: JSON, what: str = "value") -> float | None:
    return None if value is None else number(value, what)


def optional_string(value: JSON, what: str = "value") -> str | None:
    return None if value is None else string(value, what)
