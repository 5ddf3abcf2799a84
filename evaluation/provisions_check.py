"""The IPC -> BNS check set scored against a ``ProvisionMap``: the dev half (``evaluation/data/ipc_bns_check.jsonl``,
written before the aligner and used to build it) and the held half (``ipc_bns_check_held.jsonl``, written before
the aligner's evidence rule and never used to tune it; report it by counts only).

A line is exact when the map's best successor is the line's successor (for a line with no successor: when the
map reports none). Set-exact also asks that no further successor (a split) was added.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from contracts.provisions import ProvisionMap

__all__ = ["CHECK_SET", "HELD_CHECK_SET", "CheckScore", "load_check_set", "score_map"]

CHECK_SET = Path(__file__).resolve().parent / "data" / "ipc_bns_check.jsonl"
HELD_CHECK_SET = Path(__file__).resolve().parent / "data" / "ipc_bns_check_held.jsonl"


@dataclass(frozen=True)
class CheckScore:
    n: int
    exact: int
    set_exact: int
    no_successor: int  # lines with none
    no_successor_reported: int  # of those, reported as none
    errors: tuple[str, ...]  # "IPC 363: expected 137, got 136 (0.61)"

    @property
    def exact_rate(self) -> float:
        return self.exact / self.n if self.n else 0.0


def load_check_set(path: Path = CHECK_SET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score_map(pmap: ProvisionMap, rows: list[dict]) -> CheckScore:
    exact = set_exact = none = none_ok = 0
    errors = []
    for row in rows:
        expected = tuple(row["to_sections"])
        link = pmap.link(row["from_section"])
        got = link.to_sections if link else ()
        hit = got[:1] == expected[:1]
        exact += hit
        set_exact += got == expected
        if not expected:
            none += 1
            none_ok += not got
        if not hit:
            detail = f"{got[0]} ({link.score})" if got else (
                f"none (nearest {link.nearest} {link.nearest_score})" if link else "no such section")
            errors.append(f"{row['from_code']} {row['from_section']}: expected {expected[0] if expected else 'none'}, "
                          f"got {detail}")
    return CheckScore(len(rows), exact, set_exact, none, none_ok, tuple(errors))
