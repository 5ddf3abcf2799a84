"""Successor provisions in a context pack: which of its older provisions a newer code carries on, their text fetched
into the pack, the question that asks for one, and the checked lines that name them.

A store's successor maps (``ProvisionMap``, built by ``citebound provisions map``) say which section of a newer
code replaced each section of an older one. For every provision of a pack whose code a map starts from, the
pack gains a ``SuccessorNote``: the successor sections, and, fetched from the index in the question's own scope
(tenant, project), the successor's chunk most like the older provision's text (IPC 420 -> the sub-section of BNS
318 that re-enacts it). Fetched chunks are evidence like any other, checked by ``stages.grounding.validate``; the
generator is not given them (it answers from what retrieval found).

A question that names a section of the older code and the newer code, with a word that asks for the successor
("Which section of the BNS replaced section 379 of the IPC?", "What is IPC 420 called under the BNS?"), is
``asked``: its answer is the map's, one sentence citing both texts (``successor_answer``).

>>> successor_line(SuccessorNote(source_id="IPC_420_0", code="IPC", section="420", to_code="BNS", successors=(
...     Successor(code="BNS", section="318", title="Cheating", semantic_ids=("BNS_318_5",), commencement="2024-07-01"),)))
'IPC section 420 is replaced by BNS section 318 (Cheating), in force from 1 July 2024 [BNS_318_5].'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from contracts.index import IndexScope
from contracts.ingest import Chunk
from contracts.provisions import ProvisionMap, Successor, SuccessorNote
from contracts.retrieval import ContextPack, QueryAnalysis
from stages.ingest.injection import INJECTION_FLAG
from stages.ports import IndexBackend
from stages.text.normalise import search_terms

__all__ = ["STAGE_VERSION", "MAX_NOTES", "asked_sections", "successor_notes", "add_successors", "successor_line",
           "successor_answer", "succession_names", "asked_notes", "date_words"]

STAGE_VERSION = "successors.v1"

MAX_NOTES = 5
"""Older provisions of one pack whose successors are looked up, at most (in the pack's order)."""

# Words with which a question asks for the provision that replaced another (with both codes named).
_ASKS = re.compile(r"\b(?:replac\w*|successor\w*|succeed\w*|equivalent|correspond\w*|counterpart|called|renumber\w*|"
                   r"now|new|instead|in\s+place\s+of|becomes?|became|same\s+as|which\s+section|what\s+section)\b",
                   re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
# The words a successor line is written in; a fetched chunk's evidence carries them (``succession_names``).
_REPLACED = "is replaced by"


def date_words(iso: str | None) -> str | None:
    """``"2024-07-01"`` -> ``"1 July 2024"`` (None for None or a malformed date).

    >>> date_words("2024-07-01"), date_words("x")
    ('1 July 2024', None)
    """
    match = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", iso or "")
    if match is None or not 1 <= int(match.group(2)) <= 12:
        return None
    return f"{int(match.group(3))} {_MONTHS[int(match.group(2)) - 1]} {match.group(1)}"


def _same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and a.upper() == b.upper()  # type: ignore[union-attr]


def asked_sections(query: str, analysis: QueryAnalysis, pmap: ProvisionMap) -> frozenset[str]:
    """The sections of ``pmap.from_code`` (upper case) whose successor the question asks for: it names the newer
    code and a section of the older one, with a word that asks for a successor.

    >>> from contracts.retrieval import SectionRef
    >>> pmap = ProvisionMap(from_code="IPC", to_code="BNS", from_set_sha256="", to_set_sha256="", embedding_model="",
    ...                     config={}, links=())
    >>> q = "Which section of the BNS replaced section 379 of the IPC?"
    >>> sorted(asked_sections(q, QueryAnalysis(acts=("BNS", "IPC"), section_refs=(SectionRef(doc_code="IPC", section="379"),)), pmap))
    ['379']
    >>> asked_sections("What is section 379 of the IPC?", QueryAnalysis(acts=("IPC",)), pmap)
    frozenset()
    """
    if not any(_same(act, pmap.to_code) for act in analysis.acts) or not _ASKS.search(query):
        return frozenset()
    return frozenset(r.section.upper() for r in analysis.section_refs
                     if r.level == "section" and _same(r.doc_code, pmap.from_code))


def successor_notes(pack: ContextPack, maps: Sequence[ProvisionMap]) -> tuple[SuccessorNote, ...]:
    """One note for each older provision of the pack that a map carries on (or whose successor is asked for),
    in the pack's order, at most ``MAX_NOTES``; the successors' chunks are not yet known (no ``semantic_ids``)."""
    notes: list[SuccessorNote] = []
    seen: set[tuple[str, str, str]] = set()
    asked = {id(m): asked_sections(pack.query, pack.query_analysis, m) for m in maps}
    for chunk in pack.chunks:
        prov = chunk.provenance
        if not prov.section_id or chunk.semantic_id in pack.fetched:
            continue
        for pmap in maps:
            key = (prov.doc_code.upper(), prov.section_id.upper(), pmap.to_code.upper())
            if not _same(pmap.from_code, prov.doc_code) or key in seen:
                continue
            link = pmap.link(prov.section_id)
            is_asked = link is not None and link.from_section.upper() in asked[id(pmap)]
            if link is None or not (link.to_sections or is_asked):
                continue
            seen.add(key)
            notes.append(SuccessorNote(
                source_id=chunk.semantic_id, code=prov.doc_code, section=link.from_section,
                title=prov.section_title or link.from_title, to_code=pmap.to_code, asked=is_asked,
                successors=tuple(Successor(code=pmap.to_code, section=s, commencement=pmap.to_commencement)
                                 for s in link.to_sections),
                nearest=link.nearest, nearest_score=link.nearest_score))
    # Asked notes first: they are the answer; then the pack's order.
    notes.sort(key=lambda n: not n.asked)
    return tuple(notes[:MAX_NOTES])


def _most_like(text: str, candidates: Sequence[Chunk]) -> list[Chunk]:
    """``candidates`` best first by how many of ``text``'s search terms they share (Dice), ties in their order."""
    mine = set(search_terms(text))

    def dice(chunk: Chunk) -> float:
        theirs = set(search_terms(chunk.text))
        return 2 * len(mine & theirs) / (len(mine) + len(theirs)) if mine and theirs else 0.0

    return [c for _, _, c in sorted(((-dice(c), k, c) for k, c in enumerate(candidates)), key=lambda t: t[:2])]


def add_successors(
    pack: ContextPack, maps: Sequence[ProvisionMap], index: IndexBackend | None, *, tenant_id: str, project_id: str,
    quarantine_flagged: bool = True,
) -> ContextPack:
    """The pack with its successor notes and, for each successor, its chunk most like the older provision's text:
    taken from the pack when retrieval found it, else fetched from ``index`` within (tenant, project) and the
    newer code (``fetched``). Without an index, or for a newer code not in this scope, the notes name the
    successor sections with no chunk. Chunks flagged as injections are never fetched."""
    notes = successor_notes(pack, maps)
    if not notes:
        return pack
    texts = {c.semantic_id: c.text for c in pack.chunks}
    in_pack = [c for c in pack.chunks if c.semantic_id in set(pack.sources)]
    codes = index.doc_codes(scope=IndexScope(tenant_id=tenant_id, project_id=project_id)) if index is not None else frozenset()
    added: dict[str, Chunk] = {}
    out: list[SuccessorNote] = []
    for note in notes:
        successors = []
        for succ in note.successors:
            candidates = [c for c in in_pack if _same(c.provenance.doc_code, succ.code)
                          and _same(c.provenance.section_id, succ.section)]
            if not candidates and index is not None:
                in_code = frozenset(c for c in codes if _same(c, succ.code))
                if in_code:
                    scope = IndexScope(tenant_id=tenant_id, project_id=project_id, doc_codes=in_code)
                    hits = index.section_search("section", succ.section.lower(), in_code, scope=scope)
                    candidates = [e.chunk for e in hits.entries
                                  if not (quarantine_flagged and INJECTION_FLAG in e.chunk.flags)]
            ranked = _most_like(texts.get(note.source_id, ""), candidates)
            if ranked:
                best = ranked[0]
                if best.semantic_id not in texts:
                    added.setdefault(best.semantic_id, best)
                succ = succ.model_copy(update={"title": best.provenance.section_title or succ.title,
                                               "semantic_ids": (best.semantic_id,)})
            successors.append(succ)
        out.append(note.model_copy(update={"successors": tuple(successors)}))
    fetched = tuple(added.values())
    return pack.model_copy(update={
        "chunks": pack.chunks + fetched, "sources": pack.sources + tuple(c.semantic_id for c in fetched),
        "fetched": pack.fetched + tuple(c.semantic_id for c in fetched), "successors": tuple(out)})


def _named(succ: Successor) -> str:
    return f"{succ.code} section {succ.section}" + (f" ({succ.title})" if succ.title else "")


def _replacement(successors: Sequence[Successor]) -> str:
    """"BNS section 318 (Cheating), in force from 1 July 2024" (several joined with "and")."""
    named = " and ".join(_named(s) for s in successors)
    when = date_words(successors[0].commencement)
    return f"{named}, in force from {when}" if when else named


def successor_line(note: SuccessorNote) -> str | None:
    """The line an answer gains for a cited provision that has successors whose chunks are in the pack, citing
    them; None when no successor's chunk is there."""
    shown = [s for s in note.successors if s.semantic_ids]
    if not shown:
        return None
    ids = ", ".join(s.semantic_ids[0] for s in shown)
    return f"{note.code} section {note.section} {_REPLACED} {_replacement(shown)} [{ids}]."


def asked_notes(pack: ContextPack) -> tuple[SuccessorNote, ...]:
    """The notes of the provisions whose successor the question asks for."""
    return tuple(n for n in pack.successors if n.asked)


def successor_answer(pack: ContextPack) -> str | None:
    """The map's answer to a question that asks for a successor: one sentence per asked provision that has a
    successor chunk in the pack, citing the older provision's chunk and the successor's; None when there is none.

    "Section 379 of the IPC (Punishment for theft) is replaced by BNS section 303 (Theft), in force from 1 July 2024
    [IPC_379_0, BNS_303_1]." """
    lines = []
    for note in asked_notes(pack):
        shown = [s for s in note.successors if s.semantic_ids]
        if not shown:
            continue
        title = f" ({note.title})" if note.title else ""
        ids = ", ".join([note.source_id, *(s.semantic_ids[0] for s in shown)])
        lines.append(f"Section {note.section} of the {note.code}{title} {_REPLACED} {_replacement(shown)} [{ids}].")
    return "\n".join(lines) or None


def succession_names(pack: ContextPack) -> dict[str, str]:
    """For each successor chunk in the pack, the words the map lets it support, as a chunk's own names (its code,
    section and title) are: the provision it replaced and when its code came into force ("IPC 420 is replaced by
    ... in force from 1 July 2024"). The map is part of the pack, so a line naming the succession is checked
    against it like any other sentence against its chunk."""
    out: dict[str, list[str]] = {}
    for note in pack.successors:
        for succ in note.successors:
            when = date_words(succ.commencement)
            for sid in succ.semantic_ids:
                out.setdefault(sid, []).append(f"{note.code} {note.section} {_REPLACED}"
                                               + (f" in force from {when}" if when else ""))
    return {sid: " ".join(parts) for sid, parts in out.items()}
