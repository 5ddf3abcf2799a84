"""Successors in a context pack and in an answer, on small made-up codes: the notes a map gives a pack, the successor's
chunk fetched in the question's scope, the checked line, the question that asks for a successor, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from contracts.answer import GenerationPolicy
from contracts.index import IndexScope
from contracts.provisions import AlignConfig, LinkEvidence, ProvisionLink, ProvisionMap
from stages.generation.generate import SUCCESSOR_MAP_BACKEND, generate_draft
from stages.grounding.precheck import precheck_pack
from stages.grounding.validate import validate_draft
from stages.ports import IndexedChunk, IndexHits
from stages.provisions.successors import add_successors, asked_sections, successor_line, successor_notes
from stages.retrieval.query_analysis import analyze_query
from tests.fakes import ScriptedLLM
from tests.packs import make_chunk, make_pack

pytestmark = pytest.mark.unit

_EV = LinkEvidence(heading=1.0, embedding=1.0, words=1.0, in_order=True, shared=("cheat",))
MAP = ProvisionMap(
    from_code="IPC", to_code="BNS", from_set_sha256="a" * 64, to_set_sha256="b" * 64, embedding_model="none",
    config=AlignConfig(), to_commencement="2024-07-01", links=(
        ProvisionLink(from_section="379", from_title="Punishment for theft", to_sections=("303",), score=0.8, evidence=_EV),
        ProvisionLink(from_section="420", from_title="Cheating", to_sections=("318",), score=0.8, evidence=_EV),
        ProvisionLink(from_section="311", from_title="Punishment", score=0.0, evidence=_EV, nearest="4",
                      nearest_score=0.64, reason="no_evidence"),
    ))

IPC_420 = make_chunk("IPC_420_0", "420. Cheating and dishonestly inducing delivery of property.—Whoever cheats and "
                     "thereby dishonestly induces the person deceived to deliver any property shall be punished with "
                     "imprisonment for a term which may extend to seven years, and shall also be liable to fine.",
                     section_id="420", section_title="Cheating and dishonestly inducing delivery of property")
IPC_379 = make_chunk("IPC_379_0", "379. Punishment for theft.—Whoever commits theft shall be punished with "
                     "imprisonment for a term which may extend to three years, or with fine, or with both.",
                     section_id="379", section_title="Punishment for theft")
IPC_311 = make_chunk("IPC_311_0", "311. Punishment.—Whoever is a thug shall be punished with imprisonment for life.",
                     section_id="311", section_title="Punishment")
BNS_318_DEF = make_chunk("BNS_318_0", "318. Cheating.—(1) Whoever, by deceiving any person, fraudulently induces the "
                         "person so deceived to deliver any property, is said to cheat.", section_id="318",
                         section_title="Cheating")
BNS_318_4 = make_chunk("BNS_318_3", "(4) Whoever cheats and thereby dishonestly induces the person deceived to deliver "
                       "any property shall be punished with imprisonment for a term which may extend to seven years, "
                       "and shall also be liable to fine.", section_id="318", section_title="Cheating")
BNS_303 = make_chunk("BNS_303_1", "(2) Whoever commits theft shall be punished with imprisonment for a term which may "
                     "extend to three years, or with fine, or with both.", section_id="303", section_title="Theft")


class FakeIndex:
    """``section_search`` and ``doc_codes`` over a few chunks, each with its tenant; records the scopes asked."""

    def __init__(self, chunks: dict[str, list]) -> None:  # tenant -> chunks
        self.chunks, self.scopes = chunks, []

    def doc_codes(self, *, scope: IndexScope) -> frozenset[str]:
        return frozenset(c.provenance.doc_code for c in self.chunks.get(scope.tenant_id, []))

    def section_search(self, level, number, doc_codes, *, scope: IndexScope) -> IndexHits:  # noqa: ANN001
        self.scopes.append(scope)
        found = [c for c in self.chunks.get(scope.tenant_id, []) if c.provenance.section_id.lower() == number
                 and c.provenance.doc_code in (doc_codes or {c.provenance.doc_code})]
        entries = tuple(IndexedChunk(key=k, chunk=c, kinds=frozenset(), qualifier=None) for k, c in enumerate(found))
        return IndexHits(np.arange(len(found), dtype=np.int64), np.zeros(len(found), dtype=np.float32), entries)


def _pack(query: str, *chunks):  # noqa: ANN001, ANN202
    pack = make_pack(query, chunks)
    return pack.model_copy(update={"query_analysis": analyze_query(query)})


def test_a_provision_with_a_successor_gets_its_most_like_chunk_fetched_in_its_own_scope():
    index = FakeIndex({"t": [BNS_318_DEF, BNS_318_4], "other": [BNS_303]})
    pack = add_successors(_pack("What is the punishment for cheating under section 420?", IPC_420), [MAP], index,
                          tenant_id="t", project_id="p")
    [note] = pack.successors
    assert (note.code, note.section, note.asked) == ("IPC", "420", False)
    [succ] = note.successors
    # The sub-section that re-enacts IPC 420 (its words), not the section's first chunk (the definition of cheating).
    assert (succ.code, succ.section, succ.semantic_ids, succ.commencement) == ("BNS", "318", ("BNS_318_3",), "2024-07-01")
    assert pack.fetched == ("BNS_318_3",) and pack.sources[-1] == "BNS_318_3"
    assert all(s.tenant_id == "t" and s.project_id == "p" and s.doc_codes == ("BNS",) for s in index.scopes)


def test_another_tenants_successor_is_never_fetched_and_flagged_chunks_neither():
    index = FakeIndex({"other": [BNS_303], "t": [BNS_303.model_copy(update={"flags": ("injection_suspected",)})]})
    pack = add_successors(_pack("What is the punishment for theft under section 379?", IPC_379), [MAP], index,
                          tenant_id="t", project_id="p")
    [note] = pack.successors
    assert note.successors[0].semantic_ids == () and pack.fetched == ()


def test_a_successor_already_retrieved_is_used_from_the_pack():
    index = FakeIndex({})
    pack = add_successors(_pack("What is section 420?", IPC_420, BNS_318_4), [MAP], index, tenant_id="t", project_id="p")
    assert pack.successors[0].successors[0].semantic_ids == ("BNS_318_3",) and pack.fetched == () and not index.scopes


def test_a_question_asks_for_a_successor_only_naming_both_codes_and_asking():
    asks = ("Which section of the BNS replaced section 379 of the IPC?", "What is IPC 420 called under the BNS?",
            "What is the BNS equivalent of IPC 420?")
    for q in asks:
        assert asked_sections(q, analyze_query(q), MAP), q
    for q in ("What is the punishment under section 379 of the IPC?", "Which section of the BNS punishes theft?",
              "Was section 379 of the IPC replaced?"):  # no newer code named / no older section / no newer code
        assert not asked_sections(q, analyze_query(q), MAP), q


def test_the_successor_line_is_checked_and_the_citation_carries_the_successor():
    index = FakeIndex({"t": [BNS_318_4]})
    pack = add_successors(_pack("What is the punishment for cheating under section 420?", IPC_420), [MAP], index,
                          tenant_id="t", project_id="p")
    main = ("Whoever cheats and thereby dishonestly induces the person deceived to deliver any property shall be "
            "punished with imprisonment for a term which may extend to seven years [IPC_420_0].")
    policy = GenerationPolicy()
    llm = ScriptedLLM([main])
    answer = validate_draft(generate_draft(pack, llm, policy), pack, policy)
    # The generator answers from what retrieval found: the fetched successor's chunk is not in its request.
    assert [e.source_id for e in llm.requests[0].evidence] == ["IPC_420_0"]
    assert answer.status == "success", answer.refusal_reason
    line = "IPC section 420 is replaced by BNS section 318 (Cheating), in force from 1 July 2024 [BNS_318_3]."
    assert answer.answer == f"{main}\n{line}"
    cited = {c.source_id: c for c in answer.citations}
    assert set(cited) == {"IPC_420_0", "BNS_318_3"}
    [succ] = cited["IPC_420_0"].successors
    assert (succ.code, succ.section, succ.semantic_ids) == ("BNS", "318", ("BNS_318_3",))
    assert "BNS_318_3" not in {r.source_id for r in answer.related}


def test_the_line_is_refused_when_its_chunk_is_not_in_the_pack():
    index = FakeIndex({"t": [BNS_318_4]})
    pack = add_successors(_pack("What is the punishment for cheating under section 420?", IPC_420), [MAP], index,
                          tenant_id="t", project_id="p")
    # The successor's chunk taken out of the pack's sources (as if it had been quarantined after the notes were made).
    gone = pack.model_copy(update={"sources": tuple(s for s in pack.sources if s != "BNS_318_3"),
                                   "chunks": tuple(c for c in pack.chunks if c.semantic_id != "BNS_318_3")})
    main = "Whoever cheats shall be punished with imprisonment which may extend to seven years [IPC_420_0]."
    policy = GenerationPolicy()
    answer = validate_draft(generate_draft(gone, ScriptedLLM([main]), policy), gone, policy)
    assert answer.status == "success" and answer.answer == main
    [dropped] = [c for c in answer.checks if c.name == "successor_line"]
    assert not dropped.passed and dropped.reason_code == "invalid_citations"
    # The citation still names the successor, but no chunk of it that the pack does not hold.
    assert answer.citations[0].successors[0].semantic_ids == ()


def test_the_words_of_succession_are_supported_only_by_a_successors_chunk():
    # The same line citing the older provision's own chunk: nothing in the pack says that chunk replaced anything.
    pack = _pack("What is the punishment for cheating under section 420?", IPC_420)
    forged = "IPC section 420 is replaced by BNS section 318 (Cheating), in force from 1 July 2024 [IPC_420_0]."
    policy = GenerationPolicy()
    answer = validate_draft(generate_draft(pack, ScriptedLLM([forged]), policy), pack, policy)
    assert answer.status == "hallucination_detected" and "replac" in answer.refusal_reason


def test_a_question_asking_for_the_successor_is_answered_from_the_map_citing_both():
    q = "Which section of the BNS replaced section 379 of the IPC?"
    pack = add_successors(_pack(q, IPC_379), [MAP], FakeIndex({"t": [BNS_303]}), tenant_id="t", project_id="p")
    policy = GenerationPolicy()
    assert precheck_pack(pack, policy) is None
    draft = generate_draft(pack, ScriptedLLM(["never asked"]), policy)
    assert draft.backend == SUCCESSOR_MAP_BACKEND
    answer = validate_draft(draft, pack, policy)
    assert answer.status == "success", answer.refusal_reason
    assert answer.answer == ("Section 379 of the IPC (Punishment for theft) is replaced by BNS section 303 (Theft), "
                             "in force from 1 July 2024 [IPC_379_0, BNS_303_1].")
    assert {c.source_id for c in answer.citations} == {"IPC_379_0", "BNS_303_1"}


def test_a_definition_worded_successor_question_is_not_refused_for_want_of_a_definition():
    q = "What is IPC 420 called under the BNS?"
    pack = add_successors(_pack(q, IPC_420), [MAP], FakeIndex({"t": [BNS_318_4]}), tenant_id="t", project_id="p")
    assert pack.query_analysis.intent == "definition" and precheck_pack(pack, GenerationPolicy()) is None


def test_no_successor_and_a_successor_not_ingested_are_refusals_with_reasons():
    q = "Which section of the BNS replaced section 311 of the IPC?"
    pack = add_successors(_pack(q, IPC_311), [MAP], FakeIndex({"t": []}), tenant_id="t", project_id="p")
    refusal = precheck_pack(pack, GenerationPolicy())
    assert refusal is not None and refusal.reason_code == "no_successor"
    assert "BNS 4" in refusal.refusal_reason and "0.64" in refusal.refusal_reason
    q = "Which section of the BNS replaced section 379 of the IPC?"
    pack = add_successors(_pack(q, IPC_379), [MAP], FakeIndex({"t": []}), tenant_id="t", project_id="p")
    refusal = precheck_pack(pack, GenerationPolicy())
    assert refusal is not None and refusal.reason_code == "successor_not_ingested"


def test_no_map_for_the_packs_code_and_a_provision_without_successor_give_no_notes():
    pack = _pack("What is section 311?", IPC_311)
    assert successor_notes(pack, [MAP]) == ()
    other = MAP.model_copy(update={"from_code": "CRPC"})
    assert successor_notes(_pack("What is section 420?", IPC_420), [other]) == ()


def test_switched_off_nothing_is_named():
    pack = add_successors(_pack("What is the punishment for cheating under section 420?", IPC_420), [MAP],
                          FakeIndex({"t": [BNS_318_4]}), tenant_id="t", project_id="p")
    policy = GenerationPolicy(name_successors=False)
    main = "Whoever cheats shall be punished with imprisonment which may extend to seven years [IPC_420_0]."
    answer = validate_draft(generate_draft(pack, ScriptedLLM([main]), policy), pack, policy)
    assert answer.answer == main and answer.citations[0].successors == ()


def test_a_line_for_a_successor_with_no_chunk_is_not_written():
    [note] = successor_notes(_pack("What is section 420?", IPC_420), [MAP])
    assert successor_line(note) is None
