"""Prepare the reader's training: the hand-written set read, checked, cleaned of eval items and split, and the
bundle the trainer reads written. ``python -m training.reader_prepare OUT`` (the shared data from
``CITEBOUND_SHARED_DATA`` or ``../shared/data``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from contracts._base import sha256_file
from training.handwritten import check_gold, drop_eval_items, eval_questions, read_slices, split
from training.reader_bundle import (
    CODE_SOURCES,
    PARAMS,
    TEXTBOOK_CODE,
    read_code_sections,
    resolve_evidence,
    textbook_chunks,
    write_bundle,
)

__all__ = ["ROOT", "HANDWRITTEN", "DEV_SHARE", "UNSEEN_CODES", "prepare", "resolve_textbook", "shared_data", "textbook_library"]

ROOT = Path(__file__).resolve().parent.parent
HANDWRITTEN = ROOT / "models" / "reader" / "handwritten"
DEV_SHARE = 0.2
# Whole documents never trained on: the unseen-document dev split (what a user ingesting a new Act, or a subject
# nobody wrote training questions for, sees): two Acts and every NCERT geography chapter.
UNSEEN_CODES = ("Hindu Marriage Act", "Dowry Prohibition Act", "kegy*", "legy*")


def shared_data() -> Path:
    return Path(os.environ.get("CITEBOUND_SHARED_DATA") or ROOT.parent / "shared" / "data")


def textbook_library() -> Path | None:
    """The NCERT chapter PDFs the textbook questions were written from (never committed: © NCERT)."""
    value = os.environ.get("CITEBOUND_NCERT_LIBRARY")
    return Path(value) if value else None


def resolve_textbook(questions: list[HandwrittenQuestion], library: Path | None
                     ) -> tuple[list[HandwrittenQuestion], dict[str, list[tuple[str, str]]], Counter[str]]:
    """Textbook questions with ``section`` set to the chunk that holds their evidence, each chapter's chunks, and
    what was dropped (no library given, a chapter missing, evidence found in no chunk)."""
    kept: list[HandwrittenQuestion] = []
    chunks: dict[str, list[tuple[str, str]]] = {}
    dropped: Counter[str] = Counter()
    for q in questions:
        if library is None:
            dropped["textbook library not given (CITEBOUND_NCERT_LIBRARY)"] += 1
            continue
        if q.code not in chunks:
            pdf = library / f"{q.code}.pdf"
            chunks[q.code] = textbook_chunks(pdf) if pdf.is_file() else []
        if not chunks[q.code]:
            dropped["chapter not in the library"] += 1
        elif q.kind == "no_answer":
            kept.append(q)
        elif (sid := resolve_evidence(q.evidence, chunks[q.code])) is None:
            dropped["evidence in no chunk of the chapter"] += 1
        else:
            kept.append(q.model_copy(update={"section": sid}))
    return kept, {c: rows for c, rows in chunks.items() if rows}, dropped


def prepare(out: Path, data_root: Path | None = None, folder: Path = HANDWRITTEN,
            library: Path | None = None) -> dict:
    """Read, check, clean, split and bundle; returns the summary the set's card is made from."""
    from stages.adapters.minilm import model_dir

    data_root = data_root or shared_data()
    questions, problems = read_slices(folder)
    textbook = [q for q in questions if TEXTBOOK_CODE.match(q.code)]
    statutes = [q for q in questions if not TEXTBOOK_CODE.match(q.code)]
    codes = sorted({q.code for q in questions})
    unknown = sorted({q.code for q in statutes if q.code not in CODE_SOURCES})
    sections = read_code_sections(data_root, sorted({q.code for q in statutes if q.code in CODE_SOURCES}))
    checked, dropped = check_gold(statutes, {c: {s for s, _, _ in rows} for c, rows in sections.items()})
    resolved, chunks, dropped_textbook = resolve_textbook(textbook, library or textbook_library())
    dropped.update(dropped_textbook)
    clean, dropped_eval = drop_eval_items([*checked, *resolved], eval_questions(ROOT))
    dropped.update(dropped_eval)
    parts = split(clean, seed=int(PARAMS["seed"]), dev_share=DEV_SHARE, unseen_codes=UNSEEN_CODES)
    files = write_bundle(out, parts, sections, model_dir(), chunks=chunks)
    lib = library or textbook_library()
    sources = {CODE_SOURCES[c][0]: sha256_file(data_root / CODE_SOURCES[c][0]) for c in sections}
    if lib is not None:
        sources |= {f"ncert/{c}.pdf": sha256_file(lib / f"{c}.pdf") for c in chunks}
    return {
        "seed": PARAMS["seed"],
        "sources": sources,
        "problems": problems,
        "unknown_codes": unknown,
        "questions_read": len(questions),
        "dropped": dict(dropped),
        "split_counts": {k: len(v) for k, v in parts.items()},
        "by_code": dict(Counter(q.code for q in clean)),
        "by_kind": dict(Counter(q.kind for q in clean)),
        "sections_covered": {c: len({q.section or q.sounds_like for q in clean if q.code == c}) for c in codes
                             if not TEXTBOOK_CODE.match(c)},
        "chapters": sorted({q.code for q in clean if TEXTBOOK_CODE.match(q.code)}),
        "bundle_files": files,
    }


if __name__ == "__main__":
    summary = prepare(Path(sys.argv[1]))
    print(json.dumps({k: v for k, v in summary.items() if k != "problems"}, indent=1))
    for line in summary["problems"][:20]:
        print("problem:", line)
