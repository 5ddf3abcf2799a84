"""The extractive backend answers with the focused clause: the asked term's definition, the named section's
penalty, within the sentence and character budget, never OCR debris nor a chunk's cut-off edge."""

from __future__ import annotations

import json

import pytest

from contracts.answer import GenerationPolicy
from stages.adapters.extractive_llm import ExtractiveLLM
from stages.generation.clause_units import clause_units
from stages.generation.extractive_reader import CHAR_BUDGET, defined_terms, section_of_id, sections_named
from stages.generation.prompt import generation_request
from stages.grounding.validate import extract_citations, validate_answer_text
from stages.text.normalise import stem
from stages.text.units import content_words, normalise_space, strip_citations
from tests.packs import make_chunk, make_pack

pytestmark = pytest.mark.unit

POLICY = GenerationPolicy()

# Chunk texts as the demo corpus (samples/corpus/wages_act_scanned.pdf, OCR'd) was chunked: section 2 is cut
# in the middle of clause (c), and clause (f) carries an OCR'd "}".
WAGES_2_1 = (
    "is responsible for\npaying their wages; and includes, in a factory, the person named as its manager, and, in\n\n"
    "any other establishment, the person in charge of its day-to-day running;\n"
    "(d) “inspector” means an inspector appointed under section 10;\n\n"
    '(e) "scheduled employment" means an employment named in the Schedule, or any\n\n'
    "process or branch of work forming part of such an employment;\n\n"
    '(f)} "wages" means all pay, in money, owed to an employee for work done, including any\n'
    "house rent allowance, but does not include the employer's contribution to a pension or\n\n"
    "provident fund, a travelling allowance, or a gratuity paid on leaving."
)
WAGES_2_0 = (
    "2. Definitions.—In this Act, unless the context otherwise requires,—\n\n"
    "(a) “appropriate Government\" means the Government that has fixed, or has the power to\n\n"
    "fix, the minimum rates of wages for a scheduled employment;\n\n"
    '(b) "employee" means any person employed for hire or reward to do any work, skilled or\n'
    "unskilled, manual or clerical, in a scheduled employment, and includes an out-worker who\n\n"
    "is given materials to make up, clean or repair at home;\n\n"
    '(c) "employer" means any person who engages one or more employees in a scheduled\n'
    "employment, whether directly or through a contractor or agent, and who is responsible for\n"
    "paying their wages; and includes, in a factory, the person named as its manager, and, in"
)
WAGES_6_0 = (
    "6. Payment of minimum rates.—Every employer shall pay each employee in a scheduled\n"
    "employment wages at a rate not less than the minimum rate fixed for that class of employee,\n\n"
    "without deductions other than those allowed by rules made under this Act."
)
WAGES_3_0 = (
    "3. Fixing of minimum rates of wages ——(1) The appropriate Government shall fix minimum\n"
    "rates of wages for every scheduled employment and shall review them at intervals of not more\n\n"
    "than three years.\n\n"
    "(2) Different rates may be fixed for different scheduled employments, for different classes\n"
    "of work in the same employment, for adults, adolescents and apprentices, and for different\n\nlocalities."
)
WAGES_12_0 = (
    "12. Penalties for certain offences——Any employer who pays an employee less than the\n"
    "minimum rate of wages, or breaks section 7 or section 8, shall be punishable with\n"
    "imprisonment for a term which may extend to six months, or with fine which may extend to\n\nRs. 10,000, or with both."
)
# samples/corpus/model_penal_code.pdf
PENAL_420_0 = (
    "420. Cheating and dishonestly inducing delivery of property.—Whoever cheats, and by that\n"
    "cheating dishonestly leads the person deceived to hand over any property to any person, or to\n"
    "make, change or destroy a valuable security or any signed or sealed document that can be turned\n"
    "into a valuable security, shall be punished with imprisonment of either description for a term\n"
    "which may extend to seven years, and shall also be liable to fine.\nIllustration\n"
    "A persuades Z to pay Rs. 50,000 as a deposit on a flat that A falsely claims to own. Z pays. A has\n"
    "cheated and dishonestly induced the delivery of property, and is punishable under this section."
)
PENAL_417_0 = (
    "417. Punishment for cheating.—Whoever cheats shall be punished with imprisonment of either\n"
    "description for a term which may extend to one year, or with fine, or with both."
)
PENAL_406_0 = (
    "406. Punishment for criminal breach of trust.—Whoever commits criminal breach of trust shall\n"
    "be punished with imprisonment of either description for a term which may extend to two years, or\n"
    "with fine which may extend to Rs. 20,000, or with both.\nOf cheating"
)
PENAL_415_0 = (
    '415. Cheating.—A person is said to "cheat" who, by deceiving another person,—\n(a) fraudulently or dishonestly leads '
    "the person deceived to hand over property to anyone, or\nto agree that anyone may keep property; or\n(b) intentionally "
    "leads the person deceived to do, or to leave undone, something that he\nwould not have done or left undone but for the "
    "deception, where that act or omission harms,\nor is likely to harm, him in body, mind, reputation or property.\n"
    "Explanation.—Dishonestly hiding a fact is a deception within the meaning of this section.\nIllustrations\n"
    "(a) A advertises a second-hand mobile phone for sale, takes an advance of Rs. 3,000 from Z,\nand never had any phone "
    "to sell. A cheats."
)
WAGES_P1_0 = (
    "THE SAMPLE MINIMUM WAGES ACT, 2024\n(fictional, for demonstration)\n\nAn Act to provide for minimum rates of wages "
    "in scheduled employments\nand for matters connected with them. Written for the citebound\ndemonstration corpus; it "
    "has no force of law anywhere."
)

EMPLOYER_PACK = make_pack(
    "Who is an employer under the wages act?",
    [make_chunk("WagesAct_2_1", WAGES_2_1, section_id="2"), make_chunk("WagesAct_2_0", WAGES_2_0, section_id="2"),
     make_chunk("WagesAct_6_0", WAGES_6_0, section_id="6"), make_chunk("WagesAct_3_0", WAGES_3_0, section_id="3")],
    intent="definition", keywords=("employer", "wage", "act"),
)


def _penal_pack(query: str) -> object:
    return make_pack(
        query,
        [make_chunk("IPC_420_0", PENAL_420_0, section_id="420"), make_chunk("IPC_417_0", PENAL_417_0, section_id="417"),
         make_chunk("IPC_406_0", PENAL_406_0, section_id="406"), make_chunk("WagesAct_12_0", WAGES_12_0, section_id="12")],
        intent="punishment", expansions=("cheating", "punished"),
    )


def _run(pack, llm=None, policy=POLICY) -> str:  # noqa: ANN001
    return (llm or ExtractiveLLM()).generate(generation_request(pack, policy)).text


def _ok(text: str, pack) -> None:  # noqa: ANN001
    answer = validate_answer_text(text, pack, POLICY)
    assert answer.status == "success", (text, answer.refusal_reason)


# --- the two demo questions --------------------------------------------------------------------------


def test_demo_employer_question_gets_clause_c_only() -> None:
    text = _run(EMPLOYER_PACK)
    assert text == ('"employer" means any person who engages one or more employees in a scheduled employment, whether '
                    "directly or through a contractor or agent, and who is responsible for paying their wages [WagesAct_2_0].")
    _ok(text, EMPLOYER_PACK)


def test_demo_section_420_punishment_quotes_only_section_420_and_not_its_illustration() -> None:
    pack = _penal_pack("What is the punishment for cheating under section 420?")
    text = _run(pack)
    assert extract_citations(text) == ("IPC_420_0",)
    assert text.startswith("Whoever cheats, and by that cheating") and "seven years" in text
    assert "one year" not in text and "A has cheated" not in text and "Illustration" not in text
    _ok(text, pack)


@pytest.mark.parametrize("query", [
    "What is the punishment under s. 420 for cheating?",
    "What is the punishment for cheating under IPC 420?",
    "Punishment for cheating u/s 420 IPC",
    "What is the punishment for cheating under 420 IPC?",
])
def test_every_way_of_naming_the_section_focuses_on_it(query: str) -> None:
    text = _run(_penal_pack(query))
    assert extract_citations(text) == ("IPC_420_0",) and "seven years" in text


def test_without_a_named_section_other_cheating_penalties_remain() -> None:
    text = _run(_penal_pack("What is the punishment for cheating?"))
    assert set(extract_citations(text)) == {"IPC_417_0", "IPC_420_0"}


def test_a_named_section_absent_from_the_pack_does_not_empty_it() -> None:
    text = _run(_penal_pack("What is the punishment for cheating under section 999?"))
    assert "IPC_417_0" in extract_citations(text)


def test_another_definition_in_the_same_list_is_chosen_by_its_term() -> None:
    for query, start, cited in (
        ("What does 'wages' mean under the wages act?", '"wages" means all pay', "WagesAct_2_1"),
        ("Who is an employee?", '"employee" means any person employed for hire', "WagesAct_2_0"),
        ("Who is an inspector under the Act?", "“inspector” means an inspector appointed under section 10", "WagesAct_2_1"),
    ):
        pack = make_pack(query, EMPLOYER_PACK.chunks, intent="definition")
        text = _run(pack)
        assert text.startswith(start) and text.splitlines()[0].endswith(f"[{cited}].") and "(f)}" not in text, text
        _ok(text, pack)


def test_a_lead_in_keeps_the_items_that_continue_its_sentence() -> None:
    pack = make_pack("What is cheating?", [make_chunk("IPC_415_0", PENAL_415_0, section_id="415"),
                                           make_chunk("IPC_417_0", PENAL_417_0, section_id="417")], intent="definition")
    text = _run(pack)
    assert text.startswith('A person is said to "cheat" who, by deceiving another person,— (a) fraudulently')
    assert "; or (b) intentionally leads" in text and text.endswith("reputation or property [IPC_415_0].")
    assert len(text.splitlines()) == 1
    _ok(text, pack)


def test_section_titles_and_weak_matches_are_left_out() -> None:
    pack = make_pack("How often are minimum wages reviewed?", [make_chunk("WagesAct_3_0", WAGES_3_0),
                     make_chunk("WagesAct_6_0", WAGES_6_0), make_chunk("WagesAct_p1_0", WAGES_P1_0)])
    text = _run(pack)
    assert text == ("The appropriate Government shall fix minimum rates of wages for every scheduled employment and shall "
                    "review them at intervals of not more than three years [WagesAct_3_0].")


# --- clause units --------------------------------------------------------------------------------------


def test_clause_units_cut_enumerations_semicolons_dashes_and_labels_verbatim() -> None:
    units = clause_units(" ".join(WAGES_2_0.split()))
    texts = [u.text for u in units]
    assert texts[:3] == ["Definitions.", "In this Act, unless the context otherwise requires,",
                         "“appropriate Government\" means the Government that has fixed, or has the power to fix, the "
                         "minimum rates of wages for a scheduled employment"]
    # clause (c) is cut by the chunk's end: its complete part and its truncated continuation are apart
    assert texts[-2].startswith('"employer" means') and texts[-2].endswith("paying their wages")
    assert units[-1].fragment and not units[-2].fragment
    kinds = [(u.text[:10], u.kind) for u in clause_units(" ".join(PENAL_420_0.split()))]
    assert kinds[-1] == ("A has chea", "illustration") and kinds[1] == ("Whoever ch", "provision")
    assert clause_units(" ".join(WAGES_2_1.split()))[0].fragment  # the chunk starts mid-sentence
    assert [u.text for u in clause_units(" ".join(WAGES_2_1.split()))][-1].startswith('"wages" means')


def test_clause_units_are_verbatim_on_real_ipc_sections(shared_data) -> None:  # noqa: ANN001
    sections = json.loads((shared_data / "indian-acts-json" / "ipc.json").read_text())
    cut = 0
    for section in sections:
        text = str(section.get("section_desc", ""))
        flat = normalise_space(text)
        units = clause_units(text)
        cut += len(units) > len(flat.split(". "))
        for unit in units:
            assert unit.text and unit.text in flat, (section["Section"], unit.text)
    assert cut > 20  # clause cuts do happen on real statute text


def test_definition_helpers() -> None:
    # Terms are the normaliser's stems ("employer" -> "employ").
    assert defined_terms('(c) "employer" means any person') == content_words("employer") == {stem("employer")}
    assert defined_terms("Whoever ... is said to “cheat”") == frozenset({"cheat"})
    assert defined_terms("“Wrongful loss”: Wrongful loss is the loss by unlawful means") >= content_words("wrongful loss")
    assert defined_terms("Whoever cheats shall be punished with fine") == frozenset()
    assert section_of_id("WagesAct_12_0") == ("WagesAct", "12") and section_of_id("IPC_p3_0") == ("IPC", "p3")
    assert sections_named("What does section 2 say about wages?") == {(None, "2")}
    assert sections_named("punishment for theft") == frozenset()


# --- budget, debris, fragments, refusal -------------------------------------------------------------


def test_answer_stays_within_the_character_budget_unless_one_unit_is_longer() -> None:
    texts = [f"Theft of a {thing} in a dwelling house by a servant or a clerk is punished with a fine of one hundred "
             f"rupees for every day of the absence of the {thing} from its owner." for thing in ("cow", "goat", "bike", "lamp", "ring")]
    pack = make_pack("What is the punishment for theft by a servant?",
                     [make_chunk(f"T_{n}_0", t) for n, t in enumerate(texts)], intent="punishment")
    text = _run(pack, policy=GenerationPolicy(max_answer_sentences=5))
    assert 1 < len(text.splitlines()) < 5 and len(strip_citations(text)) <= CHAR_BUDGET
    assert len(_run(pack, ExtractiveLLM(char_budget=50), GenerationPolicy(max_answer_sentences=5)).splitlines()) == 1


def test_ocr_debris_is_not_quoted() -> None:
    pack = make_pack("What is the fine for late payment of wages?", [make_chunk("W_p2_0",
        "~~ |l| wages ;: _= 1. fine }} ,, late ^^ %% paid. The fine for late payment of wages is five hundred rupees.")],
        intent="punishment")
    text = _run(pack)
    assert text == "The fine for late payment of wages is five hundred rupees [W_p2_0]."


def test_a_chunks_cut_off_edge_yields_to_complete_units() -> None:
    pack = make_pack("What is the fine for employers?", [
        make_chunk("W_7_1", "employers the fine for late wages of employers, and for employers who"),
        make_chunk("W_8_0", "An employer who pays late shall be liable to a fine of Rs. 500."),
    ], intent="punishment")
    assert extract_citations(_run(pack)) == ("W_8_0",)


def test_section_focus_still_refuses_without_relevant_units() -> None:
    pack = make_pack("What is the punishment under section 23?", [make_chunk("IPC_23_0",
        "Wrongful gain is gain by unlawful means of property to which the person gaining is not legally entitled.")],
        intent="punishment")
    assert _run(pack) == POLICY.refusal_text


# --- real IPC records ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ipc(shared_data) -> dict[str, str]:  # noqa: ANN001
    records = json.loads((shared_data / "indian-acts-json" / "ipc.json").read_text())
    return {str(r["Section"]): str(r["section_desc"]) for r in records}


def _ipc_pack(ipc: dict[str, str], query: str, sections: tuple[str, ...], intent: str):  # noqa: ANN202
    return make_pack(query, [make_chunk(f"IPC_{s}_0", ipc[s], section_id=s) for s in sections], intent=intent)  # type: ignore[arg-type]


@pytest.mark.parametrize(("query", "sections", "cited", "phrase"), [
    ("What is wrongful loss?", ("24", "23", "25"), "IPC_23_0", "Wrongful loss is the loss by unlawful means"),
    ("What is theft?", ("379", "378", "415"), "IPC_378_0", "is said to commit theft"),
    ("What does dishonestly mean?", ("25", "23", "24"), "IPC_24_0", "is said to do that thing “dishonestly”"),
    ("What is injury under the Penal Code?", ("43", "44", "45"), "IPC_44_0", "The word “injury” denotes"),
])
def test_definition_questions_on_real_ipc_records(ipc, query, sections, cited, phrase) -> None:  # noqa: ANN001
    pack = _ipc_pack(ipc, query, sections, "definition")
    text = _run(pack)
    first = text.splitlines()[0]
    assert phrase in first and first.endswith(f"[{cited}]."), text
    _ok(text, pack)


def test_punishment_questions_on_real_ipc_records(ipc) -> None:  # noqa: ANN001
    murder = _ipc_pack(ipc, "What is the punishment for murder?", ("299", "300", "302", "304"), "punishment")
    first = _run(murder).splitlines()[0]
    assert first.startswith("Whoever commits murder shall be punished with death") and first.endswith("[IPC_302_0].")
    named = _ipc_pack(ipc, "What is the punishment under section 379?", ("378", "379", "417", "420"), "punishment")
    text = _run(named)
    assert extract_citations(text) == ("IPC_379_0",) and "three years" in text
    _ok(text, named)
    cheating = _ipc_pack(ipc, "What is the punishment for cheating under section 420 IPC?", ("415", "417", "420"), "punishment")
    text = _run(cheating)
    assert extract_citations(text) == ("IPC_420_0",) and "seven years" in text and "one year" not in text
    _ok(text, cheating)
