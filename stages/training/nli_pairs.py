"""Verifier training pairs from natural-language inference data: does the premise entail the hypothesis?

An NLI row is (premise, hypothesis, label). Entailment becomes a supported claim (1); neutral and
contradiction both become unsupported (0), since a claim the evidence does not entail must not pass even when
nothing contradicts it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from contracts.verifier import LabelledPair, VerifierPair

__all__ = ["nli_pairs"]


def nli_pairs(rows: Iterable[tuple[str, str, str]], *, source: str) -> list[LabelledPair]:
    """``rows`` of (premise, hypothesis, label in entailment/neutral/contradiction); unknown labels skipped.
    ``source`` names the data set (``nli.<name>``); the group is the premise, so one premise's hypotheses fall
    on the same side of the validation split."""
    out: list[LabelledPair] = []
    for premise, hypothesis, label in rows:
        label = label.strip().lower()
        if label not in ("entailment", "neutral", "contradiction") or not premise.strip() or not hypothesis.strip():
            continue
        out.append(LabelledPair(pair=VerifierPair(task="supports", text=hypothesis.strip(), passage=premise.strip()),
                                label=1 if label == "entailment" else 0, source=f"{source}.{label}",
                                group=f"{source}:{premise.strip()[:200]}"))
    return out


def sufficiency_pairs(records: Iterable[dict], *, source: str) -> list[LabelledPair]:
    """SufficientFacts records: a claim, its evidence with one piece removed (``evidence``) and the evidence
    before the removal (``text_orig``, the removed words marked by a red span). Where the removal left the
    evidence insufficient (``label_after`` NOT ENOUGH) and the claim was supported before (``label_before``
    SUPPORTS), the full evidence supports the claim (1) and the reduced one does not (0): a minimal pair."""
    out: list[LabelledPair] = []
    for record in records:
        claim = str(record.get("claim", "")).strip()
        reduced = " ".join(sentence for _, sentence in record.get("evidence", []) if sentence).strip()
        original = _unmark(str(record.get("text_orig", "")))
        if not (claim and reduced and original):
            continue
        group = f"{source}:{claim}"
        if str(record.get("label_before", "")).upper() == "SUPPORTS":
            out.append(LabelledPair(pair=VerifierPair(task="supports", text=claim, passage=original), label=1,
                                    source=f"{source}.full_evidence", group=group))
        if str(record.get("label_after", "")).upper().startswith("NOT ENOUGH"):
            out.append(LabelledPair(pair=VerifierPair(task="supports", text=claim, passage=reduced), label=0,
                                    source=f"{source}.reduced_evidence", group=group))
    return out


_TAG = re.compile(r"<[^>]+>")
_TITLE = re.compile(r"\[\[([^\]]+)\]\]")


def _unmark(text: str) -> str:
    """The original evidence text: markup removed, ``[[Title]]`` kept as the title's words."""
    return " ".join(_TITLE.sub(r"\1 .", _TAG.sub("", text)).split())
