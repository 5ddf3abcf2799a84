"""What ingestion makes of a library's text, file by file: pages, OCR'd pages, extraction's report lines (a shifted
font reversed, a layer read by OCR instead, pages left out, blank pages), chunks flagged ``front_matter`` and
``exercise``, and running footers (``Reprint 20xx-yy``) left after cleaning. The stages alone (extract, clean,
chunk; Tesseract for OCR), no store, no Prefect. The figures in ``docs/TEXT_QUALITY.md`` come from it.

Usage: .venv/bin/python bench/text_quality.py [--library DIR] [--out rows.jsonl]
(the NCERT chapters are © NCERT: use a local copy, never commit them or their text). ``--library`` defaults to
``$CITEBOUND_NCERT_LIBRARY``; with neither, it says so in one line and skips (as ``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_KINDS = (("reversed", "character codes are"), ("ocr_instead", "read by OCR ("), ("ocr_language", "scanned page(s) read"),
          ("kept_layer", "kept, OCR read"), ("left_out", "left out"), ("blank", "blank page(s)"))


def survey(library: Path, out_path: Path | None) -> list[dict]:
    from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
    from contracts.errors import IngestError
    from stages.adapters.tesseract_ocr import TesseractOcr
    from stages.ingest.chunk import chunk_document
    from stages.ingest.clean import clean_document
    from stages.ingest.extract import extract_document, make_source_document

    rows: list[dict] = []
    out = out_path.open("w", encoding="utf-8") if out_path else None
    with TesseractOcr() as ocr:
        for path in sorted(library.glob("*.pdf")):
            started = time.perf_counter()
            data = path.read_bytes()
            row: dict = {"file": path.name}
            try:
                doc = extract_document(make_source_document(str(path), data), data, ExtractConfig(), ocr)
                cleaned = clean_document(doc, CleanConfig())
                chunks = chunk_document(cleaned, ChunkConfig()).chunks
                row.update(pages=len(doc.pages), ocr=sum(p.origin == "ocr" for p in doc.pages), notes=list(doc.warnings),
                           chunks=len(chunks), front=sum("front_matter" in c.flags for c in chunks),
                           exercise=sum("exercise" in c.flags for c in chunks),
                           reprint_left=len(re.findall(r"(?m)^Reprint 20\d\d-\d\d$", cleaned.text)))
            except IngestError as exc:
                row.update(error=exc.reason, message=str(exc))
            row["seconds"] = round(time.perf_counter() - started, 1)
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
    if out:
        out.close()
    return rows


def summary(rows: list[dict]) -> list[str]:
    """The survey's totals, one line each."""
    ok = [r for r in rows if "error" not in r]
    lines = [f"{len(rows)} files: {len(ok)} read, {len(rows) - len(ok)} failed "
             f"({', '.join(f'{k} {v}' for k, v in Counter(r['error'] for r in rows if 'error' in r).items())}); "
             f"{sum(r['pages'] for r in ok)} pages, {sum(r['ocr'] for r in ok)} OCR'd, {sum(r['chunks'] for r in ok)} chunks"]
    for kind, marker in _KINDS:
        files = pages = 0
        for r in ok:
            hits = [n for n in r["notes"] if marker in n]
            if hits:
                files += 1
                pages += sum(int(n.split(" ", 1)[0]) for n in hits)
        lines.append(f"{kind}: {pages} pages in {files} files")
    lines.append(f"front matter: {sum(r['front'] for r in ok)} chunks in {sum(1 for r in ok if r['front'])} files")
    lines.append(f"exercise: {sum(r['exercise'] for r in ok)} chunks in {sum(1 for r in ok if r['exercise'])} files")
    lines.append(f"'Reprint 20xx-yy' lines left after cleaning: {sum(r['reprint_left'] for r in ok)} in "
                 f"{sum(1 for r in ok if r['reprint_left'])} files")
    lines.append(f"seconds: {sum(r['seconds'] for r in rows):.0f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", type=Path, default=os.environ.get("CITEBOUND_NCERT_LIBRARY") or None,
                        help="a folder of chapter PDFs (default $CITEBOUND_NCERT_LIBRARY)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--rows", type=Path, help="summarise rows written before instead of reading the library")
    args = parser.parse_args()
    if args.rows is None and args.library is None:
        print("skipped: no library of chapter PDFs given (--library DIR or CITEBOUND_NCERT_LIBRARY)")
        return
    rows = ([json.loads(line) for line in args.rows.read_text().splitlines() if line] if args.rows
            else survey(args.library, args.out))
    print("\n".join(summary(rows)))


if __name__ == "__main__":
    main()
