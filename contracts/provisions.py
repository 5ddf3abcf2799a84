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

__all__ = ["ProvisionsError", "ProvisionText", "ProvisionSet", "AlignConfig", "LinkEvidence", "ProvisionLink", "ProvisionMap"]


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
    """

    heading_weight: float = Field(default=0.35, ge=0.0)
    embedding_weight: float = Field(default=0.35, ge=0.0)
    words_weight: float = Field(default=0.30, ge=0.0)
    order_window: int = Field(default=6, ge=0)
    jump_penalty: float = Field(default=0.12, ge=0.0)
    no_successor_below: float = Field(default=0.40, ge=0.0, le=1.0)
    split_above: float = Field(default=0.60, ge=0.0, le=1.0)


class LinkEvidence(Contract):
    """Why a pair was chosen (or, with no successor, what the nearest candidate scored): each part in [0, 1];
    ``in_order`` says whether the step kept the codes' order."""

    heading: float
    embedding: float
    words: float
    in_order: bool


class ProvisionLink(Contract):
    """One older section and its successor(s) in the newer code, best first; none when it was not re-enacted."""

    from_section: str
    from_title: str
    to_sections: tuple[str, ...] = ()
    score: float
    evidence: LinkEvidence
    nearest: str | None = None  # with no successor: the best candidate that was rejected
    nearest_score: float | None = None


class ProvisionMap(Contract):
    """Every section of ``from_code`` aligned to ``to_code`` (one link each, in the older code's order)."""

    kind: Literal["provision_map.v1"] = "provision_map.v1"
    from_code: str
    to_code: str
    from_set_sha256: str
    to_set_sha256: str
    embedding_model: str
    config: AlignConfig
    links: tuple[ProvisionLink, ...]

    def link(self, section: str) -> ProvisionLink | None:
        """The link of one older section (``"420"``, case-insensitive), or None when the code has no such section."""
        wanted = section.strip().upper()
        return next((lk for lk in self.links if lk.from_section.upper() == wanted), None)
