"""Provisions of a code and the map from an older code's provisions to their successors in a newer one.

A ``ProvisionSet`` is one code read as its sections (number, heading, text). A ``ProvisionMap`` says, for every
section of the older code, which section(s) of the newer one carry it on (best first), how sure the alignment is,
and why (the evidence); a section that was not re-enacted has no successor, and the map still names the nearest
candidate and its score, so a reader can see what was rejected.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts._base import Contract
from contracts.errors import CiteboundError

__all__ = ["ProvisionsError", "ProvisionText", "ProvisionSet", "AlignConfig", "LinkEvidence", "ProvisionLink", "ProvisionMap",
           "Successor", "SuccessorNote"]


class ProvisionsError(CiteboundError):
    """A code that cannot be read as sections, or a map or section that is not there: one line for the user."""


class ProvisionText(Contract):
    """One section of a code: its number as printed ("420", "498A"), its heading and its flattened text."""

    section: str = Field(min_length=1, max_length=16)
    title: str
    text: str


class ProvisionSet(Contract):
    """A code read as its sections, in the code's own order; ``source_sha256`` names the bytes they were read from."""

    kind: Literal["provision_set.v1"] = "provision_set.v1"
    code: str = Field(min_length=1, max_length=64)
    source_sha256: str
    provisions: tuple[ProvisionText, ...]


class AlignConfig(Contract):
    """How similarities are weighed and how far the alignment may leave the codes' common order.

    ``score = heading_weight * heading + embedding_weight * embedding + words_weight * words`` (each in [0, 1]).
    A step to a section at most ``order_window`` after the previous successor is in order; any other step costs
    ``jump_penalty``. An older section whose best in-context score is under ``no_successor_below`` gets none.
    A newer section that no older one chose goes, as a second successor (a split), to the older section it is
    most like when that score is at least ``split_above``.

    Evidence: a pair is a candidate only when the two sections share a term (heading or text) that is not common
    in the older code, i.e. found in at most ``common_term_share`` of its sections (or in at most two). A
    section whose only overlap with its best candidate is the code's boilerplate ("Punishment", "Whoever ...
    shall be punished with imprisonment") is reported as having no successor.
    """

    heading_weight: float = Field(default=0.35, ge=0.0)
    embedding_weight: float = Field(default=0.35, ge=0.0)
    words_weight: float = Field(default=0.30, ge=0.0)
    order_window: int = Field(default=6, ge=0)
    jump_penalty: float = Field(default=0.12, ge=0.0)
    no_successor_below: float = Field(default=0.40, ge=0.0, le=1.0)
    split_above: float = Field(default=0.60, ge=0.0, le=1.0)
    common_term_share: float = Field(default=0.10, gt=0.0, le=1.0)


class LinkEvidence(Contract):
    """Why a pair was chosen (or, with no successor, what the nearest candidate scored): each part in [0, 1];
    ``in_order`` says whether the step kept the codes' order; ``shared`` the terms (stems) of the older section
    that the pair shares and the older code does not use commonly, rarest first (at most eight): none means the
    pair had no evidence."""

    heading: float
    embedding: float
    words: float
    in_order: bool
    shared: tuple[str, ...] = ()


class ProvisionLink(Contract):
    """One older section and its successor(s) in the newer code, best first; none when it was not re-enacted."""

    from_section: str
    from_title: str
    to_sections: tuple[str, ...] = ()
    score: float
    evidence: LinkEvidence
    nearest: str | None = None  # with no successor: the best candidate that was rejected
    nearest_score: float | None = None
    reason: Literal["below_bar", "no_evidence"] | None = None
    """With no successor, why: the best in-context pair scored under ``no_successor_below``, or no candidate
    shared an uncommon term with the section (its nearest shares none)."""


class ProvisionMap(Contract):
    """Every section of ``from_code`` aligned to ``to_code`` (one link each, in the older code's order).

    ``to_commencement``: the date the newer code came into force (ISO ``YYYY-MM-DD``), as its own text states it
    (its commencement clause or the footnote that clause points to); None when the text does not say."""

    kind: Literal["provision_map.v2"] = "provision_map.v2"
    from_code: str
    to_code: str
    to_commencement: str | None = None
    from_set_sha256: str
    to_set_sha256: str
    embedding_model: str
    config: AlignConfig
    links: tuple[ProvisionLink, ...]

    def link(self, section: str) -> ProvisionLink | None:
        """The link of one older section (``"420"``, case-insensitive), or None when the code has no such section."""
        wanted = section.strip().upper()
        return next((lk for lk in self.links if lk.from_section.upper() == wanted), None)


class Successor(Contract):
    """A provision of a newer code that carries an older one on, as a successor map names it.

    ``semantic_ids``: its chunks fetched into the context pack (the one most like the older provision's text
    first), empty when the newer code is not among the documents the question was asked of; ``commencement``:
    when the newer code came into force (ISO date, from its own text), None when its text does not say."""

    code: str
    section: str
    title: str = ""
    semantic_ids: tuple[str, ...] = ()
    commencement: str | None = None


class SuccessorNote(Contract):
    """What a context pack knows of one older provision it holds: its successors by the map (best first).

    ``source_id`` is the older provision's chunk in the pack. ``asked``: the question asks which provision
    replaced it ("Which section of the BNS replaced section 379 of the IPC?"), so the answer is the map's, citing
    both texts. With no successor, ``nearest`` and ``nearest_score`` are the map's rejected candidate."""

    source_id: str
    code: str
    section: str
    title: str = ""
    to_code: str
    successors: tuple[Successor, ...] = ()
    asked: bool = False
    nearest: str | None = None
    nearest_score: float | None = None
