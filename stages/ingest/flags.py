"""The flags ingestion puts on chunks, and which of them make a chunk no evidence.

A flagged chunk stays in the store and the index (it is shown, counted and searchable by id), but retrieval skips
it and no context pack holds it: ``injection_suspected`` (``stages.ingest.injection``; quarantined, and shown as
such, when ``GenerationPolicy.quarantine_flagged``), ``front_matter`` (``stages.ingest.front_matter``: a table of
contents, an arrangement of sections) and ``exercise`` (``stages.ingest.exercises``: an exercise, an activity, an
in-text question), the last two whatever the policy: they name or ask what the text holds and answer nothing.

>>> sorted(NOT_EVIDENCE_FLAGS)
['exercise', 'front_matter']
"""

from __future__ import annotations

from stages.ingest.exercises import EXERCISE_FLAG
from stages.ingest.front_matter import FRONT_MATTER_FLAG

__all__ = ["FRONT_MATTER_FLAG", "EXERCISE_FLAG", "NOT_EVIDENCE_FLAGS", "FLAG_OF_LEVEL", "is_evidence"]

NOT_EVIDENCE_FLAGS = frozenset({FRONT_MATTER_FLAG, EXERCISE_FLAG})
FLAG_OF_LEVEL = {"front_matter": FRONT_MATTER_FLAG, "exercise": EXERCISE_FLAG}
"""The flag a chunk of a section of that level gets (``stages.ingest.chunk``)."""


def is_evidence(flags: tuple[str, ...]) -> bool:
    """Whether a chunk with these flags may be evidence (injection aside: that is the pack's policy).

    >>> is_evidence(("front_matter",)), is_evidence(())
    (False, True)
    """
    return not NOT_EVIDENCE_FLAGS.intersection(flags)
