"""Validation cost per answer (10 sentences over 8 chunks; target < 2 ms) against naive baselines measured
in the same run. (The injection scan's detection and false-flag rates are measured by ``citebound eval --suite
injection``.)

    .venv/bin/python bench/validate.py [--repeat 300]

Chunks are real IPC sections from ``indian-acts-json/ipc.json``; the answer quotes one sentence of each
cited chunk, so every check runs to the end (the success path is the expensive one).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contracts.answer import GenerationPolicy  # noqa: E402
from contracts.retrieval import ContextPack  # noqa: E402
from stages.grounding import claim_details, injected_support, validate  # noqa: E402
from stages.text import normalise  # noqa: E402
from stages.text.units import split_sentences  # noqa: E402
from evaluation.packs import make_chunk, make_pack  # noqa: E402

DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))


def build_case() -> tuple[ContextPack, str]:
    sections = json.loads((DATA / "indian-acts-json" / "ipc.json").read_text())
    chosen = [s for s in sections if len(str(s.get("section_desc", ""))) > 300][:8]
    chunks = [make_chunk(f"IPC_{s['Section']}_0", str(s["section_desc"]), section_id=str(s["Section"]),
                         section_title=s.get("section_title")) for s in chosen]
    pack = make_pack("What do these sections say?", chunks)
    lines: list[str] = []
    for i in range(10):
        chunk = chunks[i % len(chunks)]
        sentences = [s for s in split_sentences(chunk.text) if len(s) > 40] or [chunk.text]
        lines.append(f"{sentences[(i // len(chunks)) % len(sentences)].rstrip('.')} [{chunk.semantic_id}].")
    return pack, "\n".join(lines)


def naive_enforce_c3(answer: str, pack: ContextPack) -> bool:
    """The seed's Phase-2 check: refusal, a citation regex, a set difference."""
    if answer.strip() == "I cannot answer based on the provided documents.":
        return True
    cited = set(re.findall(r"\[([A-Za-z0-9_]+)\]", answer))
    return bool(cited) and not (cited - set(pack.sources))


def naive_word_overlap(answer: str, pack: ContextPack) -> bool:
    """The NCERT seed's grounding score: split words, overlap >= 0.5 with some chunk, 70% of sentences."""
    sentences = [s for s in re.split(r"[.!?]\s+", answer) if s.strip()]
    grounded = 0
    for sentence in sentences:
        words = set(sentence.lower().split())
        for chunk in pack.chunks:
            if len(words & set(chunk.text.lower().split())) / max(1, len(words)) >= 0.5:
                grounded += 1
                break
    return grounded / max(1, len(sentences)) >= 0.7


def clear_chunk_caches() -> None:
    """As for a pack never validated before in this process (the stemmer's word cache stays warm)."""
    validate._chunk_profile.cache_clear()
    validate._chunk_phrase_text.cache_clear()
    validate._chunk_terms.cache_clear()
    claim_details.evidence_terms.cache_clear()
    injected_support.chunk_support_split.cache_clear()


def clear_all_caches() -> None:
    """As for the first answer of a fresh process."""
    clear_chunk_caches()
    normalise.stem.cache_clear()
    claim_details.claim_details.cache_clear()


def timed(fn, repeat: int, *, before=None) -> list[float]:  # noqa: ANN001
    samples = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    pack, answer = build_case()
    policy = GenerationPolicy()
    result = validate.validate_answer_text(answer, pack, policy)
    assert result.status == "success", result.refusal_reason
    n_sentences = len(result.sentences)

    runs = {
        "naive enforce_c3 (seed 000: regex + set)": timed(lambda: naive_enforce_c3(answer, pack), args.repeat),
        "naive word overlap (seed 002: split + sets)": timed(lambda: naive_word_overlap(answer, pack), args.repeat),
        "citebound validate_answer_text (warm caches)": timed(lambda: validate.validate_answer_text(answer, pack, policy), args.repeat),
        "citebound validate_answer_text (new pack)": timed(lambda: validate.validate_answer_text(answer, pack, policy), args.repeat,
                                                           before=clear_chunk_caches),
        "citebound validate_answer_text (fresh process)": timed(lambda: validate.validate_answer_text(answer, pack, policy), args.repeat,
                                                                before=clear_all_caches),
    }
    base = statistics.median(runs["naive enforce_c3 (seed 000: regex + set)"])
    print(f"\nValidation of one answer: {n_sentences} sentences over {len(pack.chunks)} chunks "
          f"({sum(len(c.text) for c in pack.chunks)} chars of evidence), {args.repeat} runs each\n")
    print(f"{'method':48} {'median ms':>10} {'p95 ms':>9} {'x enforce_c3':>13}")
    for name, samples in runs.items():
        med = statistics.median(samples)
        p95 = sorted(samples)[int(0.95 * (len(samples) - 1))]
        print(f"{name:48} {med:10.3f} {p95:9.3f} {med / base:13.1f}")
    print("\ntarget: citebound < 2 ms per answer")


if __name__ == "__main__":
    main()
