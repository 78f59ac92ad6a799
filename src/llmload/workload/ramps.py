"""``--ramp``: load that climbs in steps, as a spec and the levels it visits.

``FROM:TO[:STEP]`` ramps users (closed loop), ``rate:FROM:TO[:STEP]`` the open-loop request
rate; ``users:`` may be written out. The levels are FROM, FROM+STEP, ... and TO itself, so a
ramp always ends at the load it names; STEP defaults to 1 (a linear ramp, one user at a time).
Each level becomes a stage of ``--stage-s`` seconds (``stages.ramp_plans``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from llmload.errors import ConfigError

# More steps than this is a typo (a STEP left out of 1:4096), not a ramp anyone waits through.
MAX_STEPS = 512
_FORM = "give FROM:TO[:STEP] (users) or rate:FROM:TO[:STEP], e.g. 1:64:8 or rate:1:16:1"


@dataclass(frozen=True, slots=True)
class Ramp:
    kind: Literal["users", "rate"]
    start: float
    stop: float
    step: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.start <= self.stop or self.step <= 0:
            raise ConfigError("--ramp", self.text, "needs 0 < FROM <= TO and STEP > 0")
        if self.kind == "users" and not all(
            float(v).is_integer() for v in (self.start, self.stop, self.step)
        ):
            raise ConfigError("--ramp", self.text, "users ramp in whole users: FROM, TO and STEP integers")
        if (self.stop - self.start) / self.step + 1 > MAX_STEPS:
            raise ConfigError("--ramp", self.text, f"more than {MAX_STEPS} steps: give a larger STEP")

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.start:g}:{self.stop:g}:{self.step:g}"

    def levels(self) -> tuple[float, ...]:
        # by index, not by adding: 0.1 + 0.1 + 0.1 drifts past a TO of 0.3
        count = int((self.stop - self.start) / self.step + 1e-9) + 1
        values = [round(self.start + i * self.step, 9) for i in range(count)]
        if values[-1] < self.stop:
            values.append(self.stop)
        return tuple(values)

    def users(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.levels())


def parse_ramp(text: str | None) -> Ramp | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(":")]
    kind: Literal["users", "rate"] = "users"
    if parts[0] in ("users", "rate"):
        kind = "rate" if parts.pop(0) == "rate" else "users"
    if len(parts) not in (2, 3):
        raise ConfigError("--ramp", text, _FORM)
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        raise ConfigError("--ramp", text, _FORM) from None
    return Ramp(kind, *numbers)
