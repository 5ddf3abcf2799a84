"""Writes ``ingest_hashes.json``: the sha256 of what extract, clean, chunk and flag make of every PDF in
``shared/data`` (the statute and NCERT text PDFs, the real scans through Tesseract), the bundled demo corpus
and the Indian Acts JSON files, under the default configs.

The hashes were recorded from the code at ``33f4866``, before the ingest passes were made faster (issue 22);
``tests/stages/ingest/test_ingest_hashes.py`` holds every later version of the code to them, byte for byte.
Re-recorded for issue 37 (text quality): every clean hash (CleanedDocument v2: Section.level gains
``front_matter`` and ``exercise``); the chunks and flags of the BNS, the Hindu Marriage Act and the Dowry Prohibition
Act (their arrangements of sections flagged ``front_matter``, in chunks of their own) and of jemh105 (its exercise
sets flagged ``exercise``). Every extract hash, and every other chunk set, is unchanged.

Re-run this only when a change to an ingest stage's *output* is intended, and say so in the commit:

    CITEBOUND_SHARED_DATA=../shared/data python tests/data/build_ingest_hashes.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))
OUT = HERE / "ingest_hashes.json"


def inputs() -> list[tuple[str, Path]]:
    """(name as recorded, path): names are relative to shared/data or to the repository (``samples/...``)."""
    shared = [p for folder in ("statute-pdfs", "ncert-textbook-pdfs", "scanned-pdfs", "indian-acts-json")
              for p in sorted((DATA / folder).iterdir()) if p.suffix in (".pdf", ".json")]
    own = sorted((ROOT / "samples" / "corpus").glob("*.*"))
    return ([(str(p.relative_to(DATA)), p) for p in shared]
            + [(str(p.relative_to(ROOT)), p) for p in own if p.suffix in (".pdf", ".md")])


def stage_hashes(path: Path, ocr: object) -> dict[str, str]:
    from contracts import content_sha256
    from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
    from stages.ingest.chunk import chunk_document
    from stages.ingest.clean import clean_document
    from stages.ingest.extract import extract_document, make_source_document
    from stages.ingest.injection import flag_injections

    data = path.read_bytes()
    source = make_source_document(path.name, data)
    extracted = extract_document(source, data, ExtractConfig(), ocr)
    cleaned = clean_document(extracted, CleanConfig())
    chunks = chunk_document(cleaned, ChunkConfig())
    flagged = flag_injections(chunks)
    return {"extract": content_sha256(extracted), "clean": content_sha256(cleaned),
            "chunk": content_sha256(chunks), "flag": content_sha256(flagged), "chunks": str(len(chunks.chunks))}


def main() -> None:
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    from stages.adapters.tesseract_ocr import TesseractOcr

    out: dict[str, dict[str, str]] = {}
    with TesseractOcr() as ocr:
        for name, path in inputs():
            out[name] = stage_hashes(path, ocr)
            print(name, out[name]["chunks"], "chunks", flush=True)
    OUT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
