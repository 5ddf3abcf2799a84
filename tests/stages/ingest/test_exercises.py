"""What textbooks hold that statutes do not: exercises, activities and in-text questions flagged (a question is not
evidence for its own answer), labels drawn in layers kept once, running headers and footers ("Reprint 2026-27")
removed. Over a chapter this module builds with PyMuPDF."""

from __future__ import annotations

import pymupdf
import pytest

from contracts import GenerationPolicy, RetrieveConfig
from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
from contracts.ingest import ChunkSet
from stages.ingest.chunk import chunk_document
from stages.ingest.clean import clean_document
from stages.ingest.exercises import EXERCISE_FLAG, find_exercises
from stages.ingest.extract import extract_document, make_source_document
from stages.retrieval.context import build_context_pack
from stages.retrieval.retrieve import retrieve
from tests.fakes import HashEmbedder

# hess208.pdf's box, as PyMuPDF gives it: a title, then the box's narrow column.
JALLIANWALA_BOX = ["Activity", "Find out about the", "Jallianwala Bagh", "massacre. What is", "Jallianwala Bagh?",
                   "What atrocities were", "committed there? How", "were they committed?"]
PROSE = ["On 13 April 1919 General Dyer ordered his troops to fire on a peaceful gathering at Jallianwala Bagh in",
         "Amritsar. Hundreds of people were killed and many more were wounded in the firing that went on for ten",
         "minutes, and the massacre turned many Indians against the British government for good."]
ACTIVITY = ["Activity 1.2", "Activity 1.2", "Activity 1.2", "Activity 1.2", "Activity 1.2", "n",
            "Take a few zinc granules in a conical flask or a test tube.", "n",
            "Add dilute hydrochloric acid or sulphuric acid to this.", "n", "Do you observe anything happening?"]
QUESTIONS = ["Q", "U", "E", "S", "T", "I", "O", "N", "S", "1.", "Why should a magnesium ribbon be cleaned before",
             "burning in air?", "2.", "Write the balanced equation for the reaction of hydrogen and chlorine.", "?"]
EXERCISES = ["EXERCISES", "1. Which of the statements about the reaction below are incorrect?",
             "2. What is a balanced chemical equation? Why should chemical equations be balanced?"]
RUNNING = "Reprint 2026-27"


def chapter_pdf() -> bytes:
    doc = pymupdf.open()
    pages = [
        ["1.1 The Making of the National Movement", *PROSE, *JALLIANWALA_BOX],
        ["1.2 Chemical Reactions", "Zinc reacts with dilute sulphuric acid and hydrogen gas is given off in the",
         "reaction, which we can see as bubbles around the granules of zinc in the flask.", *ACTIVITY],
        ["1.3 Balanced Equations", "A balanced equation has the same number of atoms of each element on both",
         "sides, because mass is neither created nor destroyed in a chemical reaction.", *QUESTIONS],
        ["1.4 What you have seen", "Chemical reactions change substances into new substances with new",
         "properties, and we write them as balanced chemical equations.", *EXERCISES],
    ]
    for number, lines in enumerate(pages, 1):
        page = doc.new_page()
        for i, line in enumerate(lines):
            page.insert_text((56, 60 + 14 * i), line, fontsize=9)
        page.insert_text((56, 800), RUNNING, fontsize=8)
        page.insert_text((500, 800), str(number), fontsize=8)
    data = doc.tobytes()
    doc.close()
    return data


def ingest() -> tuple[str, ChunkSet]:
    data = chapter_pdf()
    source = make_source_document("hess208.pdf", data)
    cleaned = clean_document(extract_document(source, data, ExtractConfig(ocr_enabled=False)), CleanConfig())
    return cleaned.text, chunk_document(cleaned, ChunkConfig())


@pytest.mark.unit
def test_activities_questions_and_exercises_are_flagged_and_the_text_around_them_is_not():
    text, chunks = ingest()
    flagged = {c.semantic_id: c.text for c in chunks.chunks if EXERCISE_FLAG in c.flags}
    assert set(flagged) == {"hess208_Activity_0", "hess208_Activity1.2_0", "hess208_Questions_0",
                            "hess208_Exercises_0"}
    assert flagged["hess208_Activity_0"].splitlines() == JALLIANWALA_BOX
    assert flagged["hess208_Activity1.2_0"].endswith("Do you observe anything happening?")
    assert "Why should a magnesium ribbon" in flagged["hess208_Questions_0"]
    prose = {c.semantic_id: c for c in chunks.chunks if not c.flags}
    assert "Hundreds of people were killed" in prose["hess208_1.1_0"].text
    assert "Jallianwala Bagh?" not in prose["hess208_1.1_0"].text


@pytest.mark.unit
def test_layered_labels_are_kept_once_and_the_running_footer_is_removed():
    text, _ = ingest()
    assert text.count("Activity 1.2") == 1
    assert RUNNING not in text


@pytest.mark.integration
def test_the_question_of_an_activity_is_never_the_answer(build_index):
    _, chunks = ingest()
    embedder = HashEmbedder(dim=64)
    index = build_index(list(chunks.chunks), embedder)
    query = "How many people were killed at Jallianwala Bagh? What atrocities were committed there?"
    result = retrieve(query, index, embedder, RetrieveConfig(top_k=10), tenant_id="default", project_id="default")
    ids = [i.source_id for i in result.results]
    assert "hess208_1.1_0" in ids and not any(i.startswith("hess208_Activity") for i in ids)
    pack = build_context_pack(result, RetrieveConfig(top_k=10), GenerationPolicy())
    assert all(EXERCISE_FLAG not in c.flags for c in pack.chunks)


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    # A sentence that mentions an activity is text, not a box.
    "From the above three activities, we can say that any of the following observations helps us.",
    "The word-equation for Activity 1.3 may be represented as follows in the text.",
    # A title over a figure, with no box after it (an overlay label).
    "Activity 1.2\nFigure 1.2\nFormation of hydrogen gas by the action of dilute sulphuric acid on zinc",
])
def test_what_is_not_an_exercise(text):
    assert find_exercises(text) == ()


@pytest.mark.unit
def test_a_numbered_footer_is_removed_where_ocr_put_it_mid_page_and_a_mid_page_number_is_kept():
    from contracts.ingest import ExtractedDocument, PageText

    def body(n: int) -> list[str]:
        words = ["acids", "bases", "salts", "metals", "oxides", "alkalis", "indicators", "crystals", "solutions"]
        return [f"The {words[(n + k) % 9]} of this line are {words[(2 * n + k) % 9]} and {words[k]}." for k in range(8)]

    bodies = ["\n".join([*body(n), "Reprint 2026-27", str(n)]) for n in (1, 2, 3)]
    bodies.append("\n".join([*body(4)[:4], "Reprint 2026-27", "42", *body(4)[4:], "4"]))
    pages = tuple(PageText(page=i, text=t, origin="text_layer") for i, t in enumerate(bodies, 1))
    doc = ExtractedDocument(source=make_source_document("x.pdf", b"%PDF-1.7 x"), pages=pages)
    text = clean_document(doc, CleanConfig()).text
    assert "Reprint" not in text, text
    assert "\n42\n" in text, text  # the footer goes everywhere; a bare number only at the edge
