"""OCR of the pages extraction could not read from their text layer: scanned pages, and text layers judged not
language (``stages.ingest.page_text``), each read in the right language and kept only when its reading is.

A scanned page is read in ``ExtractConfig.ocr_lang``; when that reading is not language (``reading_fit``) it is
read again in each of ``ocr_other_langs`` (Hindi, Urdu) and the best reading that is language is kept. A text layer
judged not language is read in its own script's language. A language whose Tesseract data is missing is skipped
and named in the file's report; a page no reading makes language is left out (empty text) and said so. Pages are
sent to the engine in batches, one language at a time (``ocr_many`` when the engine has it: page-parallel).

>>> non_space_chars(" a b  c ")
3
"""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.config import ExtractConfig
from contracts.errors import OcrUnavailableError
from contracts.ingest import PageText
from stages.ingest.legibility import LANGUAGE_FLOOR, legibility
from stages.ingest.page_text import LayerVerdict, PageFindings, Reading, best_reading, reading_fit
from stages.ports import OcrEngine

__all__ = ["PendingOcr", "run_ocr", "non_space_chars"]


def non_space_chars(text: str) -> int:
    """Characters that are not white space (what ``ExtractConfig.min_text_chars`` counts)."""
    return sum(map(len, text.split()))


@dataclass
class PendingOcr:
    """A page awaiting OCR: its index, image, the language to read it in, the languages still to try if that
    reading is not language, its text layer, and the layer's verdict when the layer was judged not language."""

    index: int
    png: bytes
    lang: str
    layer_text: str
    then: tuple[str, ...] = ()
    layer: LayerVerdict | None = None
    readings: list[Reading] = field(default_factory=list)


def _ocr_batch(ocr: OcrEngine, pngs: list[bytes], lang: str) -> list[tuple[str, float | None]]:
    ocr_many = getattr(ocr, "ocr_many", None)
    return list(ocr_many(pngs, lang=lang)) if callable(ocr_many) else [ocr.ocr_png(p, lang=lang) for p in pngs]


def run_ocr(
    pending: list[PendingOcr], pages: list[PageText | None], ocr: OcrEngine, cfg: ExtractConfig,
    findings: PageFindings,
) -> None:
    """OCR the pending pages, language by language. A scanned page read in ``cfg.ocr_lang`` whose reading is not
    language is read again in each of ``cfg.ocr_other_langs`` (a language whose data is missing is skipped and
    named); the best reading that is language is kept, else the page is left out."""
    for item in pending:
        if item.layer is None and cfg.judge_legibility:
            item.then = tuple(lang for lang in cfg.ocr_other_langs if lang != item.lang)
    missing: set[str] = set()
    queue = list(pending)
    while queue:
        by_lang: dict[str, list[PendingOcr]] = {}
        for item in queue:
            by_lang.setdefault(item.lang, []).append(item)
        queue = []
        for lang, items in by_lang.items():
            try:
                results = _ocr_batch(ocr, [i.png for i in items], lang)
            except OcrUnavailableError:
                if lang == cfg.ocr_lang:
                    raise
                missing.add(lang)
                results = [None] * len(items)  # type: ignore[list-item]
            for item, result in zip(items, results, strict=True):
                if result is not None:
                    text, confidence = result
                    conf = None if confidence is None else min(100.0, max(0.0, float(confidence)))
                    item.readings.append(Reading("ocr", text, legibility(text), lang, conf))
                if _settled(item, cfg):
                    pages[item.index] = _settle(item, cfg, findings, missing)
                else:
                    item.lang, item.then = item.then[0], item.then[1:]
                    queue.append(item)


def _settled(item: PendingOcr, cfg: ExtractConfig) -> bool:
    """Whether a page needs no further reading: its last reading is language or cannot be judged, or no
    language is left to try."""
    if not item.then:
        return True
    if not item.readings:
        return False
    return reading_fit(item.readings[-1]) is not False


def _settle(item: PendingOcr, cfg: ExtractConfig, findings: PageFindings, missing: set[str]) -> PageText:
    number = item.index + 1
    layer = item.layer
    if layer is None and (not cfg.judge_legibility or (item.readings and _unjudged_or_fine(item.readings[0]))):
        # A scanned page read in the first language as before: kept as read when it reads (or cannot be judged).
        return _ocr_page(number, item.readings[0], item.layer_text)
    best = best_reading(item.readings)
    if best is not None:
        if layer is not None:
            findings.ocr_instead(number, best.lang or "", layer.measure, best.measure)
        elif best.lang != cfg.ocr_lang:
            findings.ocr_language(number, best.lang or "", best.measure)
        return _ocr_page(number, best, item.layer_text, layer_judged=layer is not None)
    if layer is not None and layer.measure.known_share >= LANGUAGE_FLOOR.get(layer.measure.language or "", 1.0):
        # The layer's words read (its fault was a few stray letters or control codes) and no reading is better.
        findings.kept_layer(number, layer.measure)
        return PageText(page=number, text=item.layer_text, origin="text_layer")
    tried = ", ".join(r.lang or "" for r in item.readings)
    lacking = sorted(missing & {item.lang, *cfg.ocr_other_langs})
    why = (f"OCR ({tried}) does not read it as language" if tried else "no OCR reading")
    if lacking:
        why += "; Tesseract has no data for " + ", ".join(lacking) + " (install tesseract-ocr-" + lacking[0] + ")"
    first = layer.measure if layer is not None else (item.readings[0].measure if item.readings else None)
    findings.left_out(number, ("the text layer is not language and " if layer is not None else "") + why, first)
    return PageText(page=number, text="", origin="ocr" if layer is None else "text_layer")


def _unjudged_or_fine(reading: Reading) -> bool:
    return reading_fit(reading) is not False


def _ocr_page(number: int, reading: Reading, layer_text: str, layer_judged: bool = False) -> PageText:
    # A scanned page, as before: its OCR text is kept when it holds at least as many characters as its (short) text
    # layer. A layer judged not language is never kept instead.
    if not layer_judged and non_space_chars(reading.text) < non_space_chars(layer_text):
        return PageText(page=number, text=layer_text, origin="text_layer")
    return PageText(page=number, text=reading.text, origin="ocr", ocr_confidence=reading.confidence)
