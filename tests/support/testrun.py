"""The end of ``make test``: each tier's time and counts, and the slowest tests of the run.

    python -m tests.support.testrun OUT NAME... -- SECONDS... -- CODES...

reads the junit XML each tier left in ``OUT`` (``NAME.xml``, and ``NAME-again.xml`` for the
tests a tier ran once more) and writes ``OUT/durations.json``; exit 1 if any tier failed.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

SLOWEST = 15


@dataclass(frozen=True, slots=True)
class Case:
    tier: str
    name: str
    seconds: float
    outcome: str  # passed, failed, skipped


def cases(xml: Path, tier: str) -> list[Case]:
    root = ET.parse(xml).getroot()
    found = []
    for case in root.iter("testcase"):
        outcome = "passed"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        elif case.find("skipped") is not None:
            outcome = "skipped"
        name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        found.append(Case(tier, name, float(case.get("time") or 0), outcome))
    return found


def main(argv: list[str]) -> int:
    out, rest = Path(argv[0]), argv[1:]
    split = [i for i, a in enumerate(rest) if a == "--"]
    names, secs, codes = rest[: split[0]], rest[split[0] + 1 : split[1]], rest[split[1] + 1 :]
    every: list[Case] = []
    print("\nmake test: tier times")
    for name, s, code in zip(names, secs, codes, strict=True):
        xmls = [out / f"{name}{again}.xml" for again in ("", "-again")]
        tier_cases = [c for xml in xmls if xml.exists() for c in cases(xml, name)]
        every += tier_cases
        counts = ""
        if tier_cases:
            n = {o: sum(1 for c in tier_cases if c.outcome == o) for o in ("passed", "failed", "skipped")}
            counts = f"  {n['passed']} passed, {n['failed']} failed, {n['skipped']} skipped"
        status = "ok" if code == "0" else "FAILED"
        print(f"  {name:<8} {int(s) // 60:3d} min {int(s) % 60:02d} s  {status}{counts}")
    totals = {o: sum(1 for c in every if c.outcome == o) for o in ("passed", "failed", "skipped")}
    print(f"tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    slowest = sorted(every, key=lambda c: c.seconds, reverse=True)[:SLOWEST]
    print(f"\nmake test: the {SLOWEST} slowest tests")
    for case in slowest:
        print(f"  {case.seconds:7.1f} s  {case.tier:<8} {case.name}")
    (out / "durations.json").write_bytes(
        orjson.dumps(
            {
                "tiers": [
                    {"name": n, "seconds": int(s), "code": int(c)}
                    for n, s, c in zip(names, secs, codes, strict=True)
                ],
                "tests": [asdict(c) for c in sorted(every, key=lambda c: -c.seconds)],
            },
            option=orjson.OPT_INDENT_2,
        )
    )
    return 0 if all(code == "0" for code in codes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
