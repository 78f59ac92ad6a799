"""The wire form of a stage's state: what a worker ships to the master (``run/delta.py``) and
what a run writes beside its summary (``histograms.json``), declared by the accumulators' own
fields.

msgspec encodes and converts the dataclasses as they are declared (``StageStats`` and its
sides, ``TimeSeries``, ``Delta``), so a field added to one travels without a line here. Three
types keep a compact form of their own, and only they are coded by hand, as hooks:

- ``LogHistogram``: its sparse buckets with the version and gamma they were counted in
  (``histogram.py``), and an empty one as ``null``: a stage carries some 40 histograms, most of
  them empty in most runs (a model that does not reason, a server that sends no timings);
- ``SignedHistogram``: its two halves;
- ``ClassicStats``: the exporter's bucket counts with trailing zeros cut and its layout checked
  (``classic.py``).

A ``Counter`` travels as a plain mapping and comes back a ``Counter``, so that the merge that
follows adds rather than replaces. Keys are strings on the wire (JSON's, and Locust's msgpack
maps), ints again once read.
"""

from __future__ import annotations

from collections import Counter
from types import GenericAlias
from typing import Any, TypeVar, get_args, get_origin

import msgspec

from llmload.metrics.classic import ClassicStats
from llmload.metrics.histogram import LogHistogram, SignedHistogram
from llmload.protocol.jsonvalue import JSON, obj

T = TypeVar("T")


def encode(value: object) -> dict[str, JSON]:
    """``value`` (one of the dataclasses above) as msgpack- and JSON-safe builtins."""
    encoded: dict[str, JSON] = msgspec.to_builtins(value, enc_hook=_encode, str_keys=True)
    return encoded


def decode(kind: type[T], data: object) -> T:
    """``data`` (``encode``'s output, maybe from another process or an older file) read back as
    ``kind``; a ``ValueError`` naming the path when it does not fit."""
    try:
        return msgspec.convert(data, kind, dec_hook=_decode, str_keys=True)
    except msgspec.ValidationError as exc:
        raise ValueError(f"{kind.__name__}: {exc}") from None


def _encode(value: Any) -> JSON:
    if isinstance(value, LogHistogram):
        return value.to_dict() if value.count else None
    if isinstance(value, SignedHistogram):
        return value.to_dict() if value.count else None
    if isinstance(value, ClassicStats):
        return value.to_dict()
    raise NotImplementedError(f"no wire form for {type(value).__name__}")


def _decode(kind: Any, value: Any) -> object:
    if kind is LogHistogram:
        return LogHistogram() if value is None else LogHistogram.from_dict(obj(value, "histogram"))
    if kind is SignedHistogram:
        return SignedHistogram() if value is None else SignedHistogram.from_dict(obj(value, "histogram"))
    if kind is ClassicStats:
        return ClassicStats.from_dict(obj(value, "classic"))
    if get_origin(kind) is Counter:
        (key,) = get_args(kind)
        return Counter(msgspec.convert(value, GenericAlias(dict, (key, int)), str_keys=True))
    raise NotImplementedError(f"no wire form for {kind}")
