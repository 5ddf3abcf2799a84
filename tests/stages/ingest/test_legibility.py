"""Text that is not text: a shifted font reversed, a text layer that is not language read by OCR in its language,
a scanned page read in the language it is written in, blank pages and pages nothing can read left out, each said
in one report line. PDFs are made here with PyMuPDF; OCR is a fake that answers by language."""

from __future__ import annotations

import pymupdf
import pytest

from contracts.config import ExtractConfig
from contracts.errors import IngestError
from stages.ingest.extract import extract_document, make_source_document
from stages.ingest.legibility import find_shift, is_language, legibility, unshift
from stages.ingest.page_text import Reading, best_reading, page_ranges, reading_fit
from tests.fakes import LanguageOcr

pytestmark = pytest.mark.unit

PROSE = ("in the previous unit you have learnt that the element carbon has the unique property called catenation "
         "due to which it forms covalent bonds with other carbon atoms. it also forms covalent bonds with atoms of "
         "other elements like hydrogen, oxygen, nitrogen, sulphur and phosphorus.")
HINDI = ("हमारा जीवन भोजन के चारों ओर केंद्रित रहता है। भोजन जैविक आवश्यकता से भी अधिक महत्त्व रखता है। यह हमारी "
         "सांस्कृतिक पहचान में सहायक है और सामाजिक और धार्मिक प्रथाओं का भाग है।")
# What a legacy Devanagari font gives for the same words: conjuncts as Ethiopic letters, doubled vowels.
HINDI_LAYER = ("हमारा जीवन भोजन के चारों ओर केंद्रित रहता है। ययह हमारी सांस्‍ कृतिक पहचान में सहाययक है और "
               "सामाजिक और धार्मिक ्ቚथाओं का भाग है। ययह आतिथ्‍य सत्‍काकार, ्ቚतिष्‍ ा और शक््‍त‍ि का भी ्ቚतीक है। "
               "हमारे भोजन की रुचिययों के दूरगामी ्ቚभाव होते हैं।")
GARBLED = "Sant Slat ASH H UN BK Hie Cat el Ais Vs strana S oft siftew Wea Vac at ae cist ft ace et ead Caan Ft Gea"


def shifted(text: str, offset: int = 29) -> str:
    """Text as a font whose codes sit ``offset`` below its letters puts it in the text layer."""
    return "".join(ch if ch == " " else chr(ord(ch) - offset) for ch in text)


def pdf(*pages: list[tuple[str, str]] | None) -> bytes:
    """Pages of (kind, text) boxes: ``text`` inserted as is; None: a page with a drawing and no text; []: blank."""
    doc = pymupdf.open()
    for page_spec in pages:
        page = doc.new_page()
        if page_spec is None:
            page.draw_rect(pymupdf.Rect(72, 72, 300, 200), color=(0, 0, 0), fill=(0.5, 0.5, 0.5))
            continue
        y = 72
        for _, text in page_spec:
            page.insert_textbox(pymupdf.Rect(72, y, 520, y + 300), text, fontsize=11)
            y += 320
    data = doc.tobytes()
    doc.close()
    return data


def extract(data: bytes, ocr=None, **cfg):
    return extract_document(make_source_document("ch.pdf", data), data, ExtractConfig(**cfg), ocr)


# ------------------------------------------------------------------------------------------- the measures


def test_a_constant_shift_is_found_and_reversed_exactly():
    encoded = shifted(PROSE)
    assert not is_language(legibility(encoded))
    assert find_shift(encoded) == 29
    assert unshift(encoded, 29) == PROSE
    assert find_shift(PROSE) is None  # sound text has no shift to find


def test_small_capitals_keep_their_letter_and_control_codes_are_the_shifted_spaces():
    # kech202.pdf: a capital drawn as a small capital keeps the lower-case code ("tKLV" is "This").
    assert unshift("tKLV\x03XQLW\x03LQFRUSRUDWHV\x03iupac\x03QDPHV\x11", 29) == "This unit incorporates IUPAC names."


def test_prose_is_language_and_too_few_words_are_not_judged():
    assert is_language(legibility(PROSE)) is True
    assert is_language(legibility("Fig. 1.2 (a) CH3COOH")) is None
    hindi = legibility(HINDI)
    assert (hindi.script, hindi.language, is_language(hindi)) == ("devanagari", "hi", True)


def test_a_legacy_devanagari_layer_is_not_language():
    measure = legibility(HINDI_LAYER)
    assert measure.script == "devanagari" and measure.foreign_letters > 0
    assert is_language(measure) is False


def test_an_ocr_reading_in_the_wrong_language_is_not_fit_however_many_short_words_it_lists():
    garbled = legibility(GARBLED)
    assert garbled.known_share > 0.6  # the English list holds "at", "ae", "ft"...
    assert reading_fit(Reading("ocr", GARBLED, garbled, "eng", 33.4)) is False
    right = Reading("ocr", HINDI, legibility(HINDI), "hin", 90.0)
    assert best_reading([Reading("ocr", GARBLED, garbled, "eng", 33.4), right]) is right


def test_page_ranges():
    assert page_ranges([5, 1, 2, 3, 9]) == "1-3, 5, 9"


# ------------------------------------------------------------------------------------------- extraction


def test_a_page_in_a_shifted_font_is_reversed_and_said_in_one_line():
    data = pdf([("heading", "Organic Chemistry"), ("body", shifted(PROSE))], [("body", PROSE)])
    doc = extract(data)
    first = " ".join(doc.pages[0].text.split())
    assert "Organic Chemistry" in first and "covalent bonds with other carbon atoms." in first
    assert doc.pages[1].text.split() == PROSE.split()  # a sound page is left as it was
    lines = [w for w in doc.warnings if "character codes are 29 below" in w]
    assert len(lines) == 1 and lines[0].startswith("1 page(s)") and lines[0].endswith(": 1")


def test_a_short_page_of_a_shifted_document_takes_the_shift_its_other_pages_showed():
    short = shifted("table 8.4 some functional groups and classes of organic compounds in the text")
    doc = extract(pdf([("body", shifted(PROSE))], [("body", short)]))
    assert "functional groups" in doc.pages[1].text
    assert any("reversed" in w and w.endswith(": 1-2") for w in doc.warnings)


def test_a_text_layer_that_is_not_language_is_read_by_ocr_instead():
    ocr = LanguageOcr({"eng": (PROSE, 92.0)})
    doc = extract(pdf([("body", GARBLED.lower().replace(" ", "q ") * 2)]), ocr)
    assert doc.pages[0].origin == "ocr" and doc.pages[0].text == PROSE
    assert any("read by OCR (eng) instead" in w for w in doc.warnings)


def test_a_text_layer_that_is_not_language_is_left_out_when_ocr_is_off():
    doc = extract(pdf([("body", PROSE)], [("body", GARBLED.lower().replace(" ", "q ") * 2)]), ocr_enabled=False)
    assert doc.pages[1].text == ""
    assert [w for w in doc.warnings if "left out" in w] == [
        "1 page(s) left out: the text layer is not language and OCR is off (17% of words known): 2"]


def test_a_scanned_page_in_hindi_is_read_in_hindi_when_english_reads_it_as_garbage():
    ocr = LanguageOcr({"eng": (GARBLED, 33.4), "hin": (HINDI, 90.0)})
    doc = extract(pdf([("body", PROSE)], None), ocr)
    assert doc.pages[1].text == HINDI and doc.pages[1].origin == "ocr"
    assert ocr.calls == [("eng", 1), ("hin", 1)]
    assert any(w.startswith("1 scanned page(s) read by OCR in hin") for w in doc.warnings)


def test_a_scanned_page_no_installed_language_reads_is_left_out_naming_the_missing_data():
    ocr = LanguageOcr({"eng": (GARBLED, 33.4)})  # no hin, no urd data
    doc = extract(pdf([("body", PROSE)], None), ocr)
    assert doc.pages[1].text == ""
    (line,) = [w for w in doc.warnings if "left out" in w]
    assert "OCR (eng) does not read it as language" in line and "install tesseract-ocr-hin" in line
    assert line.endswith(": 2")


def test_a_sound_scanned_page_is_read_once_in_english():
    ocr = LanguageOcr({"eng": (PROSE, 91.0), "hin": (HINDI, 90.0)})
    doc = extract(pdf(None), ocr)
    assert doc.pages[0].text == PROSE and ocr.calls == [("eng", 1)] and doc.warnings == ()


def test_blank_pages_are_not_sent_to_ocr_and_a_file_of_blank_pages_says_so():
    ocr = LanguageOcr({"eng": (PROSE, 91.0)})
    doc = extract(pdf([("body", PROSE)], []), ocr)
    assert ocr.calls == [] and doc.warnings == ("1 blank page(s) (nothing drawn on them): 2",)
    with pytest.raises(IngestError) as info:
        extract(pdf([], []), ocr)
    assert info.value.reason == "no_text" and "all 2 page(s) are blank" in str(info.value)


def test_judging_can_be_turned_off():
    doc = extract(pdf([("body", shifted(PROSE))]), judge_legibility=False)
    assert "WKH" in doc.pages[0].text and doc.warnings == ()


def test_greek_symbols_and_a_quoted_hindi_word_are_not_foreign_to_an_english_page():
    page = ("The wavelength λ of the light and its frequency ν are related by the speed of light, and the angle α "
            "of incidence equals the angle β of reflection. The word पानी means water in Hindi.")
    assert is_language(legibility(page)) is True
    assert is_language(legibility(page + " ቚኔብ" * 3)) is False  # Ethiopic letters are a broken font's
