"""Front matter is never evidence: found at ingestion (an arrangement of sections, a table of contents, an index),
its chunks flagged ``front_matter``, skipped by retrieval and kept out of every context pack. Over the BNS PDF
(shared/data) and an NCERT-like chapter with a contents page that this module builds with PyMuPDF."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from contracts import GenerationPolicy, RetrieveConfig
from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
from contracts.ingest import ChunkSet
from stages.ingest.chunk import chunk_document
from stages.ingest.clean import clean_document
from stages.ingest.extract import extract_document, make_source_document
from stages.ingest.front_matter import FRONT_MATTER_FLAG, find_front_matter
from stages.ingest.injection import flag_injections
from stages.retrieval.context import build_context_pack
from stages.retrieval.retrieve import retrieve
from tests.fakes import HashEmbedder

CONTENTS = [
    "Chapter 1",
    "Acids, Bases and Salts",
    "Contents",
    "1.1 Understanding the Chemical Properties of Acids and Bases .......... 18",
    "1.2 What do all Acids and all Bases have in Common? .......... 24",
    "1.3 How Strong are Acid or Base Solutions? .......... 26",
    "1.4 More about Salts .......... 28",
    "Exercises .......... 35",
]
BODY = [
    ["1.1 Understanding the Chemical Properties of Acids and Bases",
     "Acids are sour in taste and change the colour of blue litmus to red, whereas bases are bitter and change the",
     "colour of red litmus to blue. Litmus is a natural indicator; turmeric is another such indicator.",
     "1.2 What do all Acids and all Bases have in Common?",
     "All acids generate hydrogen ions in water, and all bases generate hydroxide ions in water. That is what",
     "acids have in common with each other, and what bases have in common with each other."],
    ["1.3 How Strong are Acid or Base Solutions?",
     "We can test the strength of an acid or a base with a universal indicator and the pH scale, which runs from",
     "zero for very acidic to fourteen for very alkaline; a neutral solution has a pH of seven.",
     "1.4 More about Salts",
     "Salts of strong acids and strong bases are neutral with a pH value of seven, and common salt is one of them."],
]


def chapter_pdf() -> bytes:
    """A chapter: a contents page, then two pages of text under the headings the contents lists."""
    doc = pymupdf.open()
    for lines in [CONTENTS, *BODY]:
        page = doc.new_page()
        for i, line in enumerate(lines):
            page.insert_text((56, 72 + 16 * i), line, fontsize=9)
    data = doc.tobytes()
    doc.close()
    return data


def ingest(name: str, data: bytes) -> ChunkSet:
    source = make_source_document(name, data)
    extracted = extract_document(source, data, ExtractConfig(ocr_enabled=False))
    return flag_injections(chunk_document(clean_document(extracted, CleanConfig()), ChunkConfig()))


def front(chunks: ChunkSet) -> list[str]:
    return [c.semantic_id for c in chunks.chunks if FRONT_MATTER_FLAG in c.flags]


# ------------------------------------------------------------------------------------------- detection


@pytest.mark.unit
def test_a_contents_listing_is_found_and_ends_before_the_first_heading_of_the_text():
    text = "\n".join([*CONTENTS, *BODY[0]])
    (region,) = find_front_matter(text)
    assert (region.section_id, region.level) == ("Contents", "front_matter")
    assert text[region.char_start:region.char_end].splitlines()[-1] == "Exercises .......... 35"


@pytest.mark.unit
def test_an_unnumbered_contents_box_listed_before_its_title_is_found():
    # kepy102.pdf: the box's lines come out before its "Contents" title, the epigraph after it.
    text = ("After reading this chapter, you would be able to explain the goals of enquiry.\nIntroduction\n"
            "Goals of Psychological Enquiry\nSteps in Conducting Scientific Research\nNature of Psychological Data\n"
            "Key Terms\nSummary\nContents\nAn idea that is developed and put\ninto action is more important.")
    (region,) = find_front_matter(text)
    listed = text[region.char_start:region.char_end]
    assert listed.startswith("Introduction\n") and listed.endswith("Summary\nContents")


@pytest.mark.unit
def test_an_index_of_pages_is_front_matter():
    text = "INDEX\nAcid rain, 45, 67\nAlkali, 12\nAmmonia, 33-35\nBaking soda, 40\nText after it goes on in prose here."
    assert [s.section_id for s in find_front_matter(text)] == ["Index"]


@pytest.mark.unit
@pytest.mark.parametrize("text", [
    # Exercises are numbered lines too, but no title calls them a listing.
    "EXERCISES\n1. Find the sum of the first 40 positive integers divisible by 6.\n2. Find the 20th term.",
    "Exercise 1.1\n1. Find the sum of the first 40 positive integers.\n2. Which term of the AP is 78?\n3. Justify.",
    # A heading "Contents" over prose is no listing.
    "Contents\nThe contents of a cell are held together by its membrane, which lets some substances in and out.",
])
def test_what_is_not_a_listing(text):
    assert find_front_matter(text) == ()


# ------------------------------------------------------------------------------------------- ingestion


@pytest.mark.unit
def test_a_chapters_contents_page_is_flagged_and_its_headings_stay_the_texts():
    chunks = ingest("jesc102.pdf", chapter_pdf())
    assert front(chunks) == ["jesc102_Contents_0"]
    (contents,) = [c for c in chunks.chunks if FRONT_MATTER_FLAG in c.flags]
    assert contents.provenance.page == 1 and "1.4 More about Salts" in contents.text
    ids = [c.semantic_id for c in chunks.chunks]
    # The listed "1.1 ..." lines are not headings: the text's own headings keep their plain ids.
    assert {"jesc102_1.1_0", "jesc102_1.2_0", "jesc102_1.3_0", "jesc102_1.4_0"} <= set(ids)
    assert not any("#" in i for i in ids)


@pytest.fixture(scope="module")
def bns(shared_data) -> ChunkSet:
    path = Path(shared_data) / "statute-pdfs" / "Bhartiya_Nyay_Sanhita_BNS.pdf"
    return ingest(path.name, path.read_bytes())


@pytest.mark.unit
def test_the_bns_arrangement_of_sections_is_flagged_and_no_section_of_the_act_is(bns):
    flagged = [c for c in bns.chunks if FRONT_MATTER_FLAG in c.flags]
    assert len(flagged) >= 20
    assert flagged[0].text.startswith("THE BHARATIYA NYAYA SANHITA, 2023\n________\nARRANGEMENT OF SECTIONS")
    assert {p for c in flagged for p in range(c.provenance.page, c.provenance.page_end + 1)} == set(range(3, 17))
    # Every arrangement line ("303. Theft.") is in a flagged chunk; the Act's sections are not flagged.
    listed = "\n".join(c.text for c in flagged)
    assert "303. Theft." in listed and "358. Repeal and savings." in listed
    theft = [c for c in bns.chunks if c.provenance.section_id == "303"]
    assert theft and all(not c.flags for c in theft) and "Whoever, intending to take dishonestly" in theft[0].text
    sections = [c for c in bns.chunks if (c.provenance.section_id or "x")[0].isdigit()]
    assert len({c.provenance.section_id for c in sections}) >= 350 and not any(c.flags for c in sections)
    assert [c.provenance.page for c in sections][0] == 16  # the Act begins where its arrangement ends


# ------------------------------------------------------------------------------------------- never evidence


@pytest.mark.integration
@pytest.mark.parametrize("query", [
    "What is the punishment for theft under the Bharatiya Nyaya Sanhita?",
    "arrangement of sections theft snatching extortion robbery dacoity",  # the listing's own words
])
def test_retrieval_and_the_pack_never_hold_the_bns_arrangement(bns, build_index, query):
    embedder = HashEmbedder(dim=64)
    index = build_index(list(bns.chunks), embedder)
    result = retrieve(query, index, embedder, RetrieveConfig(top_k=10), tenant_id="default", project_id="default")
    assert result.results and not any(FRONT_MATTER_FLAG in i.metadata.flags for i in result.results)
    pack = build_context_pack(result, RetrieveConfig(top_k=10), GenerationPolicy())
    assert not any("ARRANGEMENT OF SECTIONS" in c.text or FRONT_MATTER_FLAG in c.flags for c in pack.chunks)


@pytest.mark.integration
def test_a_contents_page_is_never_in_a_pack_even_when_the_question_is_its_own_words(build_index):
    chunks = ingest("jesc102.pdf", chapter_pdf())
    embedder = HashEmbedder(dim=64)
    index = build_index(list(chunks.chunks), embedder)
    result = retrieve("\n".join(CONTENTS), index, embedder, RetrieveConfig(top_k=10), tenant_id="default",
                      project_id="default")
    assert [i.source_id for i in result.results] and "jesc102_Contents_0" not in [i.source_id for i in result.results]
