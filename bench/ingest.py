"""Ingestion speed and memory against the raw libraries, measured in the same run.

1. Text PDFs (``statute-pdfs/*.pdf`` + ``ncert-textbook-pdfs/*.pdf``): pages/s of citebound's
   extract+clean+chunk against raw PyMuPDF ``page.get_text()`` over the same files (target: within 2x).
2. OCR on the real scans (``scanned-pdfs/*.pdf``): pages/s of ``extract_document`` with the page-parallel
   ``TesseractOcr`` against raw single-process pytesseract (``image_to_string``, tesseract's default threading,
   the same 300-dpi renders) on the same pages (target: >= 0.9 pages/s on 2 cores).
3. Peak memory (ru_maxrss of a fresh subprocess) ingesting a generated 1,000-page PDF (target < 1 GiB), with
   the same subprocess's baseline after imports, for scale.

    .venv/bin/python bench/ingest.py [--repeat 3] [--pages 1000] [--skip-ocr]

Data comes from ``$CITEBOUND_SHARED_DATA`` (default ``<repo>/../shared/data``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


def text_pdfs() -> list[Path]:
    return sorted((SHARED / "statute-pdfs").glob("*.pdf")) + sorted((SHARED / "ncert-textbook-pdfs").glob("*.pdf"))


def bench_text(repeat: int) -> dict[str, float]:
    import pymupdf

    from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
    from stages.chunk import chunk_document
    from stages.clean import clean_document
    from stages.extract import extract_document, make_source_document

    files = [(p, p.read_bytes()) for p in text_pdfs()]
    # Warm up both paths once (imports, tokenizer load) so neither pays a one-off cost in the timing.
    for path, data in files[:1]:
        src = make_source_document(str(path), data)
        chunk_document(clean_document(extract_document(src, data, ExtractConfig()), CleanConfig()), ChunkConfig())

    raw_best = ours_best = float("inf")
    pages = chunks = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        pages = 0
        for _, data in files:
            doc = pymupdf.open(stream=data, filetype="pdf")
            for page in doc:
                page.get_text()
                pages += 1
            doc.close()
        raw_best = min(raw_best, time.perf_counter() - t0)

        t0 = time.perf_counter()
        chunks = 0
        for path, data in files:
            src = make_source_document(str(path), data)
            cleaned = clean_document(extract_document(src, data, ExtractConfig(), None), CleanConfig())
            chunks += len(chunk_document(cleaned, ChunkConfig()).chunks)
        ours_best = min(ours_best, time.perf_counter() - t0)
    return {"files": len(files), "pages": pages, "chunks": chunks, "raw_s": raw_best, "ours_s": ours_best}


def bench_ocr() -> dict[str, float]:
    import pymupdf
    import pytesseract
    from PIL import Image

    from contracts.config import ExtractConfig
    from stages.adapters.tesseract_ocr import TesseractOcr
    from stages.extract import extract_document, make_source_document

    files = [(p, p.read_bytes()) for p in sorted((SHARED / "scanned-pdfs").glob("*.pdf"))]
    cfg = ExtractConfig()
    renders: list[bytes] = []
    for _, data in files:
        doc = pymupdf.open(stream=data, filetype="pdf")
        for page in doc:
            renders.append(page.get_pixmap(dpi=cfg.ocr_dpi, colorspace=pymupdf.csGRAY).tobytes("png"))
        doc.close()

    # Raw: one process, tesseract's default OpenMP threading (OMP_THREAD_LIMIT removed for the child).
    saved = os.environ.pop("OMP_THREAD_LIMIT", None)
    try:
        t0 = time.perf_counter()
        raw_words = 0
        for png in renders:
            with Image.open(io.BytesIO(png)) as image:
                raw_words += len(pytesseract.image_to_string(image, lang=cfg.ocr_lang).split())
        raw_s = time.perf_counter() - t0
    finally:
        if saved is not None:
            os.environ["OMP_THREAD_LIMIT"] = saved

    with TesseractOcr() as ocr:
        ocr.ocr_png(renders[-1])  # start the worker pool outside the timing
        t0 = time.perf_counter()
        ours_words = 0
        confidences = []
        for path, data in files:
            extracted = extract_document(make_source_document(str(path), data), data, cfg, ocr)
            ours_words += sum(len(p.text.split()) for p in extracted.pages)
            confidences += [p.ocr_confidence for p in extracted.pages if p.ocr_confidence is not None]
        ours_s = time.perf_counter() - t0
        workers = ocr.workers
    return {
        "pages": len(renders), "raw_s": raw_s, "ours_s": ours_s, "raw_words": raw_words, "ours_words": ours_words,
        "workers": workers, "mean_conf": sum(confidences) / max(len(confidences), 1),
    }


_MEMORY_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from contracts.config import ChunkConfig, CleanConfig, ExtractConfig
from stages.chunk import chunk_document
from stages.clean import clean_document
from stages.extract import extract_document, make_source_document
from stages.tokens import count_tokens
count_tokens("warm up")
data = open(sys.argv[2], "rb").read()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
src = make_source_document(sys.argv[2], data)
extracted = extract_document(src, data, ExtractConfig(), None)
cleaned = clean_document(extracted, CleanConfig())
chunks = chunk_document(cleaned, ChunkConfig())
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"pages": len(extracted.pages), "chunks": len(chunks.chunks), "seconds": seconds,
                  "base_kib": base, "peak_kib": peak, "bytes": len(data)}))
"""


def make_big_pdf(path: Path, pages: int) -> None:
    import pymupdf

    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page()
        lines = [f"THE GENERATED CODE, {2000 + n % 3}", ""]
        lines += [
            f"{n}. Generated section number {n}.--Whoever contravenes the provisions of clause {k} of this section "
            f"shall be punished with fine which may extend to {n * k} rupees, and the Court may order costs."
            for k in range(1, 9)
        ]
        lines += ["", str(n)]
        page.insert_textbox(pymupdf.Rect(40, 40, 555, 800), "\n".join(lines), fontsize=9)
    doc.save(path, garbage=3, deflate=True)
    doc.close()


def bench_memory(pages: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"generated_{pages}_pages.pdf"
        make_big_pdf(path, pages)
        out = subprocess.run(
            [sys.executable, "-c", _MEMORY_CHILD, str(ROOT), str(path)], capture_output=True, text=True, check=True
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--skip-ocr", action="store_true")
    args = parser.parse_args()

    rows: list[tuple[str, str, str, str]] = []
    t = bench_text(args.repeat)
    raw_pps, ours_pps = t["pages"] / t["raw_s"], t["pages"] / t["ours_s"]
    rows.append((
        f"text PDFs: {t['files']} files, {t['pages']} pages, {t['chunks']} chunks (best of {args.repeat})",
        f"{raw_pps:,.0f} pages/s  (raw page.get_text())", f"{ours_pps:,.0f} pages/s  (extract+clean+chunk)",
        f"raw is {t['ours_s'] / t['raw_s']:.2f}x faster  [target <= 2x]",
    ))
    if not args.skip_ocr:
        o = bench_ocr()
        rows.append((
            f"OCR: {o['pages']} scanned pages at 300 dpi, {o['workers']} workers",
            f"{o['pages'] / o['raw_s']:.2f} pages/s  (raw pytesseract, 1 process, default threads; "
            f"{o['raw_words']} words)",
            f"{o['pages'] / o['ours_s']:.2f} pages/s  (extract_document + TesseractOcr; {o['ours_words']} words, "
            f"mean conf {o['mean_conf']:.1f})",
            f"ours is {o['raw_s'] / o['ours_s']:.1f}x faster  [target >= 0.9 pages/s]",
        ))
    m = bench_memory(args.pages)
    rows.append((
        f"memory: generated {m['pages']}-page PDF ({m['bytes'] / 2**20:.1f} MiB), {m['chunks']} chunks",
        f"{m['base_kib'] / 1024:.0f} MiB  (process after imports)",
        f"{m['peak_kib'] / 1024:.0f} MiB peak RSS  ({m['pages'] / m['seconds']:.0f} pages/s)",
        f"{'under' if m['peak_kib'] < 1024 * 1024 else 'OVER'} 1 GiB  [target < 1 GiB]",
    ))
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)} | raw / baseline | citebound | ratio")
    for r in rows:
        print(f"{r[0].ljust(width)} | {r[1]} | {r[2]} | {r[3]}")


if __name__ == "__main__":
    main()
