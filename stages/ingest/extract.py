"""Extraction: a file's bytes to pages of raw text (PyMuPDF text layer, Tesseract OCR, text and JSON readers).

* PDF: opened from memory with PyMuPDF and read page by page (each page is dropped before the next is
  loaded, so memory stays flat on a 1,000-page file). A page whose text layer has fewer than
  ``cfg.min_text_chars`` non-space characters is rendered at ``cfg.ocr_dpi`` (grey PNG) and read by the OCR
  engine; OCR pages are sent in small batches to ``ocr.ocr_many`` when the engine has it (page-parallel),
  else one by one to ``ocr.ocr_png``. Without an engine such a page is kept with its (short) text and a warning.
* Every text-layer page is judged (``stages.ingest.page_text``, ``cfg.judge_legibility``): a page whose text is
  not language is reversed when a font's codes are shifted by a constant, else OCR'd in its script's language
  (``stages.ingest.ocr_pages``), else left out with empty text; a scanned page whose reading is not language is
  read again in ``cfg.ocr_other_langs``; a page with nothing drawn on it is blank and not OCR'd. Each finding is one
  line of ``warnings`` ("38 page(s) in a font whose character codes are 29 below the letters it draws ...").
* ``.txt`` / ``.md``: UTF-8 (BOM stripped; UTF-16 with a BOM accepted); if UTF-8 fails, cp1252 then latin-1
  with a warning, but only when the result looks like text; form feeds split pages.
* ``.json``: statute records (see ``json_records``), one page per record, origin ``json_record``.

Every unusable file raises ``IngestError`` with a reason code (``empty_file``, ``not_a_pdf``, ``encrypted``,
``corrupt``, ``zero_pages``, ``too_large``, ``bad_encoding``, ``bad_json``, ``no_text``, ``unsupported_type``).

>>> src = make_source_document("notes/ipc.txt", b"420. Cheating.--Whoever cheats.")
>>> (src.doc_code, src.media_type, extract_document(src, b"420. Cheating.--Whoever cheats.", ExtractConfig()).pages[0].origin)
('IPC', 'text/plain', 'text_file')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from contracts._base import sha256_bytes
from contracts.config import ExtractConfig
from contracts.errors import ConfigError, IngestError
from contracts.ingest import SEMANTIC_ID_PATTERN, ExtractedDocument, MediaType, PageText, SourceDocument
from stages.ingest.legibility import LANGUAGE_FLOOR, MIN_SHIFT_EVIDENCE
from stages.ingest.ocr_pages import PendingOcr, non_space_chars, run_ocr
from stages.ingest.page_text import PageFindings, layer_verdict, ocr_language_for, unshift_spans
from stages.ingest.sections import normalise_section_number
from stages.ports import OcrEngine

__all__ = ["STAGE_VERSION", "make_source_document", "extract_document", "derive_doc_code", "json_records"]

STAGE_VERSION = "extract.v2"

_OCR_BATCH_PAGES = 8  # pages rendered and held as PNG at once: bounds memory, still fills the OCR workers
_STATUTE_WORDS = {"act", "code", "rules", "sanhita", "regulations", "regulation", "ordinance", "order", "constitution"}
_SMALL_WORDS = {"and", "of", "the", "for", "to", "in", "on"}
_ID_SAFE = re.compile(SEMANTIC_ID_PATTERN)
_MAX_DOC_CODE = 48


def derive_doc_code(filename: str) -> str:
    """A readable document code from a file name (the rule behind ``--doc-code``'s default).

    The stem is cut into alphanumeric words. If a statute word (Act, Code, Rules, Sanhita, Regulations,
    Ordinance, Order, Constitution) occurs after the first word, the words after the first such word are dropped
    (years, "and Central Rules", "Forms I to IV"); otherwise a trailing year and everything after it is dropped.
    Several words are joined in CamelCase; a single short lower-case word (an abbreviation such as ``ipc``) is
    upper-cased; the result is cut to 48 characters and is ``DOC`` if nothing is left.

    >>> derive_doc_code("Minimum_Wages_Act_and_Central_Rules_1950_Forms_I_to_IV.pdf")
    'MinimumWagesAct'
    >>> derive_doc_code("ipc.json"), derive_doc_code("constitution_of_india.json"), derive_doc_code("jemh105.pdf")
    ('IPC', 'ConstitutionOfIndia', 'jemh105')
    >>> derive_doc_code("Dowry_Prohibition_Act_1961.pdf"), derive_doc_code("NCERT maths 2023 ch5.pdf")
    ('DowryProhibitionAct', 'NCERTMaths')
    """
    stem = filename.rsplit(".", 1)[0] if "." in filename else filename
    words = re.findall(r"[A-Za-z0-9]+", stem)
    if not words:
        return "DOC"
    cut = next((i for i, w in enumerate(words) if i > 0 and w.lower() in _STATUTE_WORDS), None)
    if cut is not None:
        words = words[: cut + 1]
    else:
        year = next((i for i, w in enumerate(words) if i > 0 and re.fullmatch(r"1[89]\d\d|20\d\d", w)), None)
        if year is not None:
            words = words[:year]
    if len(words) == 1:
        word = words[0]
        code = word.upper() if word.isalpha() and word.islower() and len(word) <= 5 else word
    else:
        code = "".join(w[:1].upper() + w[1:] for w in words)
    return code[:_MAX_DOC_CODE] or "DOC"


def _sniff_media_type(filename: str, data: bytes) -> MediaType:
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if b"%PDF-" in data[:1024]:
        return "application/pdf"
    if suffix == "pdf":
        raise IngestError("not_a_pdf", "the file is named .pdf but does not start with a PDF header", filename=filename)
    if suffix in ("txt", "text"):
        return "text/plain"
    if suffix in ("md", "markdown"):
        return "text/markdown"
    if suffix == "json":
        return "application/json"
    raise IngestError(
        "unsupported_type", f"unsupported file type {('.' + suffix) if suffix else '(no suffix)'}: "
        "use .pdf, .txt, .md or .json", filename=filename,
    )


def make_source_document(
    path: str,
    data: bytes,
    *,
    doc_code: str | None = None,
    tenant_id: str = "default",
    project_id: str = "default",
) -> SourceDocument:
    """Identify one input file: sha256 of its bytes, media type sniffed from bytes and suffix, doc code.

    Raises ``IngestError`` (``empty_file``, ``not_a_pdf``, ``unsupported_type``) for files that cannot be
    ingested, and ``ConfigError`` for a ``doc_code`` outside ``[A-Za-z0-9_.#-]``.

    >>> make_source_document("/x/Hindu_Marriage_Act.pdf", b"%PDF-1.7 ...").doc_code
    'HinduMarriageAct'
    """
    filename = PureWindowsPath(path).name if "\\" in path else PurePosixPath(path).name
    filename = filename or path
    if not data:
        raise IngestError("empty_file", "the file is empty (0 bytes)", filename=filename)
    media_type = _sniff_media_type(filename, data)
    if doc_code is None:
        code = derive_doc_code(filename)
    else:
        code = doc_code.strip()
        if not _ID_SAFE.match(code):
            raise ConfigError(f"doc code {doc_code!r} may only use letters, digits and _ . # -")
    if not tenant_id or not project_id:
        raise ConfigError("tenant_id and project_id must not be empty")
    return SourceDocument(
        path=path, filename=filename, sha256=sha256_bytes(data), size_bytes=len(data), media_type=media_type,
        doc_code=code, tenant_id=tenant_id, project_id=project_id,
    )


def extract_document(
    source: SourceDocument, data: bytes, cfg: ExtractConfig, ocr: OcrEngine | None = None
) -> ExtractedDocument:
    """Pages of raw text from one file (see the module docstring); raises ``IngestError`` with a reason.

    >>> src = make_source_document("a.md", "# Title\\nText".encode())
    >>> extract_document(src, "# Title\\nText".encode(), ExtractConfig()).pages[0].text
    '# Title\\nText'
    """
    if len(data) > cfg.max_file_bytes:
        raise IngestError(
            "too_large", f"{len(data):,} bytes is over the limit of {cfg.max_file_bytes:,}", filename=source.filename
        )
    if sha256_bytes(data) != source.sha256:
        raise IngestError("corrupt", "the bytes do not match the source document's sha256", filename=source.filename)
    if source.media_type == "application/pdf":
        pages, warnings = _extract_pdf(source.filename, data, cfg, ocr if cfg.ocr_enabled else None)
    elif source.media_type == "application/json":
        text, warnings = _decode_text(source.filename, data)
        pages, more = _json_pages(source.filename, text)
        warnings += more
    else:
        text, warnings = _decode_text(source.filename, data)
        pages = [PageText(page=i + 1, text=t, origin="text_file") for i, t in enumerate(text.split("\f"))]
    if not any(p.text.strip() for p in pages):
        raise IngestError("no_text", "no text could be extracted from any page", filename=source.filename)
    return ExtractedDocument(source=source, pages=tuple(pages), warnings=tuple(warnings))


# ----------------------------------------------------------------------------------------------- PDF


def _extract_pdf(
    filename: str, data: bytes, cfg: ExtractConfig, ocr: OcrEngine | None
) -> tuple[list[PageText], list[str]]:
    import pymupdf

    if b"%%EOF" not in data[-2048:]:
        # MuPDF would "repair" a truncated file and silently lose its last pages: refuse it instead.
        raise IngestError("corrupt", "the PDF is truncated (no %%EOF marker at its end)", filename=filename)
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # PyMuPDF raises several types (FileDataError, RuntimeError, ValueError)
        raise IngestError("corrupt", f"PyMuPDF cannot open it: {exc}", filename=filename) from exc
    try:
        if doc.needs_pass:
            raise IngestError("encrypted", "the PDF is password-protected", filename=filename)
        if doc.page_count == 0:
            raise IngestError("zero_pages", "the PDF has no pages", filename=filename)
        if doc.page_count > cfg.max_pages:
            raise IngestError(
                "too_large", f"{doc.page_count:,} pages is over the limit of {cfg.max_pages:,}", filename=filename
            )
        warnings: list[str] = []
        if doc.is_repaired:
            warnings.append("the PDF was damaged and repaired by PyMuPDF while opening")
        findings = PageFindings()
        pages: list[PageText | None] = []
        pending: list[PendingOcr] = []
        no_ocr_pages: list[int] = []
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                text = page.get_text("text")
            except Exception as exc:
                raise IngestError("corrupt", f"page {index + 1} cannot be read: {exc}", filename=filename) from exc
            if non_space_chars(text) >= cfg.min_text_chars:
                layer = _read_layer(page, index + 1, text, cfg, ocr, findings)
                if isinstance(layer, PageText):
                    pages.append(layer)
                else:
                    pages.append(None)
                    pending.append(layer)
            elif _is_blank(page):
                pages.append(PageText(page=index + 1, text=text, origin="text_layer"))
                findings.blank(index + 1)
            elif ocr is None:
                pages.append(PageText(page=index + 1, text=text, origin="text_layer"))
                no_ocr_pages.append(index + 1)
            else:
                pages.append(None)
                pending.append(PendingOcr(index, _render(page, cfg.ocr_dpi), cfg.ocr_lang, layer_text=text))
            if len(pending) >= _OCR_BATCH_PAGES:
                run_ocr(pending, pages, ocr, cfg, findings)  # type: ignore[arg-type]
                pending = []
            del page
        if pending:
            run_ocr(pending, pages, ocr, cfg, findings)  # type: ignore[arg-type]
        if no_ocr_pages:
            warnings.append(
                f"{len(no_ocr_pages)} page(s) have little or no text layer and OCR is off: "
                f"{_page_list(no_ocr_pages)}"
            )
        done = [p for p in pages if p is not None]
        empty_ocr = [p.page for p in done if p.origin == "ocr" and not p.text.strip()]
        if empty_ocr:
            warnings.append(f"OCR found no text on page(s) {_page_list(empty_ocr)}")
        warnings.extend(findings.lines())
        if len(findings.blank_pages) == len(done):
            raise IngestError("no_text", f"no text on any page: all {len(done)} page(s) are blank (nothing drawn "
                              "on them)", filename=filename)
        return done, warnings
    finally:
        doc.close()


def _render(page: Any, dpi: int) -> bytes:
    import pymupdf

    return page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY).tobytes("png")


def _is_blank(page: Any) -> bool:
    """Nothing drawn: no image, no vector drawing (a page with too little text to read is OCR'd otherwise)."""
    return not page.get_images(full=False) and not page.get_drawings()


def _read_layer(
    page: Any, number: int, text: str, cfg: ExtractConfig, ocr: OcrEngine | None, findings: PageFindings
) -> PageText | PendingOcr:
    """A page's text layer if it is language (or cannot be judged), reversed if a shifted font made it unreadable,
    else the page queued for OCR in its script's language, or left out (empty text) when it cannot be read."""
    if not cfg.judge_legibility:
        return PageText(page=number, text=text, origin="text_layer")
    verdict = layer_verdict(text)
    if verdict.status != "not_language":
        return PageText(page=number, text=text, origin="text_layer")
    # A page with too few words to show its shift takes the one its document's other pages showed.
    shift = verdict.shift if verdict.shift is not None else findings.last_shift
    if shift is not None and verdict.measure.script == "latin":
        import pymupdf

        repaired = unshift_spans(page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT), shift)
        after = layer_verdict(repaired.text)
        gained = after.measure.known > verdict.measure.known or (
            after.measure.known == verdict.measure.known
            and after.measure.control_chars < verdict.measure.control_chars)
        if after.status != "not_language" and gained and (
                repaired.reversed_words < MIN_SHIFT_EVIDENCE or repaired.reversed_share >= LANGUAGE_FLOOR["en"]):
            findings.shifted(number, shift, verdict.measure, after.measure)
            return PageText(page=number, text=repaired.text, origin="text_layer")
    lang = ocr_language_for(verdict.measure.script)
    if ocr is not None and lang is not None:
        return PendingOcr(number - 1, _render(page, cfg.ocr_dpi), lang, layer_text=text, layer=verdict)
    why = ("OCR is off" if lang is not None else
           f"its script ({verdict.measure.script}) has no word list or OCR language here")
    findings.left_out(number, f"the text layer is not language and {why}", verdict.measure)
    return PageText(page=number, text="", origin="text_layer")


def _page_list(numbers: Sequence[int], limit: int = 20) -> str:
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f" and {len(numbers) - limit} more" if len(numbers) > limit else "")


# ---------------------------------------------------------------------------------------------- text


def _looks_like_text(text: str) -> bool:
    if "\x00" in text:
        return False
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f") + text.count("\x7f")
    return controls <= max(2, len(text) // 200)


def _decode_text(filename: str, data: bytes) -> tuple[str, list[str]]:
    """UTF-8 (BOM stripped) or UTF-16 with a BOM; else cp1252 / latin-1 with a warning, if it looks like text."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise IngestError("bad_encoding", f"invalid UTF-16: {exc}", filename=filename) from exc
        return text, []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        for encoding in ("cp1252", "latin-1"):
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError:
                continue
            if _looks_like_text(text):
                return text, [f"not valid UTF-8 (byte {exc.start}); decoded as {encoding}, check accented characters"]
        raise IngestError(
            "bad_encoding", f"not UTF-8 (byte {exc.start}) and not recognisable text in cp1252/latin-1",
            filename=filename,
        ) from exc
    if not _looks_like_text(text):
        raise IngestError("bad_encoding", "the file holds binary data, not text", filename=filename)
    return text, []


# ---------------------------------------------------------------------------------------------- JSON

# Field names read from each statute record (keys compared case-insensitively), first match wins.
_NUMBER_FIELDS = ("section", "article", "rule", "section_no", "section_number", "number")
_TITLE_FIELDS = ("title", "section_title", "article_title", "heading", "name")
_TEXT_FIELDS = ("text", "section_desc", "description", "desc", "content", "body")


def _field(record: dict[str, Any], names: Sequence[str]) -> tuple[str | None, Any]:
    lowered = {k.lower(): k for k in record}
    for name in names:
        if name in lowered:
            return name, record[lowered[name]]
    return None, None


def json_records(value: Any) -> Iterator[dict[str, Any]]:
    """The statute records inside parsed JSON: a top-level list of objects, or the first list of objects
    found as a value of a top-level object (``{"sections": [...]}``).

    >>> list(json_records({"sections": [{"section": 1}]}))
    [{'section': 1}]
    """
    if isinstance(value, list):
        yield from (r for r in value if isinstance(r, dict))
    elif isinstance(value, dict):
        for v in value.values():
            if isinstance(v, list) and any(isinstance(r, dict) for r in v):
                yield from (r for r in v if isinstance(r, dict))
                return


def _json_pages(filename: str, text: str) -> tuple[list[PageText], list[str]]:
    """One page per statute record, laid out as ``<number>. <title>.—<text>`` so every record is one section.

    Fields read (case-insensitive; first present wins): number from ``section``/``Section``, ``article``,
    ``rule``, ``section_no``, ``section_number``, ``number``; title from ``title``, ``section_title``,
    ``article_title``, ``heading``, ``name``; text from ``text``, ``section_desc``, ``description``, ``desc``,
    ``content``, ``body``. Chapter fields (``chapter``, ``chapter_title``) are not used. Article records give
    ``article``-level sections (article 0 titled Preamble gets the id ``Preamble``). A record without a number
    gets ``r<index>``; a record without title and text is skipped with a warning.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError("bad_json", f"invalid JSON: {exc}", filename=filename) from exc
    pages: list[PageText] = []
    warnings: list[str] = []
    skipped: list[int] = []
    for index, record in enumerate(json_records(value)):
        number_field, number = _field(record, _NUMBER_FIELDS)
        _, title = _field(record, _TITLE_FIELDS)
        _, body = _field(record, _TEXT_FIELDS)
        title = " ".join(str(title).split()) if title not in (None, "") else None
        body = str(body).strip() if body not in (None, "") else ""
        if title is None and not body:
            skipped.append(index)
            continue
        section_id = normalise_section_number(number) if number not in (None, "") else ""
        if number_field == "article" and section_id == "0" and (title or "").lower() == "preamble":
            section_id = "Preamble"
        section_id = section_id or f"r{index}"
        label = "" if section_id == "Preamble" else f"{number_field == 'article' and 'Article ' or ''}{section_id}. "
        heading = f"{label}{title.rstrip('.') if title else ''}".strip()
        pages.append(
            PageText(
                page=len(pages) + 1, text=f"{heading}.—{body}" if heading else body, origin="json_record",
                section_id=section_id, section_title=title,
            )
        )
    if skipped:
        warnings.append(f"{len(skipped)} JSON record(s) had neither title nor text and were skipped")
    if not pages:
        raise IngestError(
            "bad_json", "no statute records found (expected a list of objects with section/title/text fields)",
            filename=filename,
        )
    return pages, warnings
