"""JSON values as the simulator reads and writes them.

The simulator is a process of its own that imports nothing of llmload but the error tree, so it
has its own copy of ``llmload.protocol.jsonvalue.JSON``: what ``orjson`` reads from a request
body, and what an answer, a fingerprint or the ground truth is built of. A request's fields are
narrowed where they are read (``request.py``, ``shapes.py``), as a server validates them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSON: TypeAlias = bool | int | float | str | Sequence["JSON"] | Mapping[str, "JSON"] | None
JSONObject: TypeAlias = Mapping[str, JSON]
