"""The reader on dev: right / wrong / refused and retrieval recall, with and without its two models.

Four configurations: the base MiniLM embedder or the fine-tuned retriever (``models/reader/retriever``), each
with and without the trained reranker (``models/reader/reranker``). Question sets (dev only; the held-out sets
run with ``--held`` once the defaults are chosen):

* ``hw-<code>``: the hand-written dev split (``training.handwritten.split``), each code on its own store: the
  seven civictech Acts in one store (IPC, CrPC, IEA, NIA, CPC, IDA, MVA), the BNS PDF alone, the Hindu Marriage
  and Dowry Prohibition Acts (the unseen-document split: never trained on) in one;
* ``ipc-dev`` and the lay IPC tuning sets (``bench/data/ipc_questions.jsonl``: dev, held2..held8);
* ``hw-ncert`` / ``hw-unseen-ncert``: textbook questions on a store of the chapters written for (the library from
  ``CITEBOUND_NCERT_LIBRARY``; a cited chunk must hold the evidence); geography chapters are the unseen ones;
* ``off-topic``: SQuAD 2.0 questions on the Acts' store (every answer is wrong).

``P@1`` / ``P@5``: the gold among the context pack's first one / five provisions.

Usage: .venv/bin/python bench/reader_eval.py [--configs base,base+rr,reader,reader+rr] [--thresholds 0.3,0.5]
       [--sets hw-IPC,...] [--limit N] [--held]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contracts import GenerationPolicy, RetrieveConfig  # noqa: E402
from evaluation.corpora import (  # noqa: E402
    MemoEmbedder,
    act_chunks,
    answer_with_pack,
    build_index,
    ingested_chunks,
    ipc_queries,
    squad_questions,
)
from evaluation.splits import IPC_BENCH_TAGS, IPC_JUDGE  # noqa: E402
from bench.answer_eval import outcome  # noqa: E402 - one rule for right / wrong / refused
from stages.adapters.extractive_llm import ExtractiveLLM  # noqa: E402
from training.handwritten import read_slices, split  # noqa: E402
from training.reader_bundle import PARAMS, TEXTBOOK_CODE, resolve_evidence  # noqa: E402
from training.reader_prepare import DEV_SHARE, HANDWRITTEN, UNSEEN_CODES, textbook_library  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
CACHE = Path(tempfile.gettempdir()) / "citebound-bench-cache"
MODELS = ROOT / "models" / "reader"
PDF_CODES = {"BNS": "statute-pdfs/Bhartiya_Nyay_Sanhita_BNS.pdf",
             "HMA": "statute-pdfs/Hindu_Marriage_Act.pdf", "DPA": "statute-pdfs/Dowry_Prohibition_Act_1961.pdf"}
# The hand-written set's code names -> the doc codes of the stores here.
DOC_CODE = {"Hindu Marriage Act": "HMA", "Dowry Prohibition Act": "DPA"}
LAY_TUNING = {tag: name for tag, name in IPC_BENCH_TAGS.items() if name not in IPC_JUDGE}


def gold_of(code: str, section: str | None) -> set[str]:
    return {f"{DOC_CODE.get(code, code)}_{section}"} if section else set()


class Evidence(set):
    """A textbook question's gold: its evidence sentences (a cited chunk must hold one), not a section id."""


def handwritten_sets(limit: int) -> tuple[dict[str, list[tuple[str, set[str]]]], list[str]]:
    """The dev and unseen sets by store, and the textbook chapters they need."""
    questions, _ = read_slices(HANDWRITTEN)
    parts = split(questions, seed=int(PARAMS["seed"]), dev_share=DEV_SHARE, unseen_codes=UNSEEN_CODES)
    sets: dict[str, list[tuple[str, set[str]]]] = collections.defaultdict(list)
    chapters = sorted({q.code for q in questions if TEXTBOOK_CODE.match(q.code)})
    for name, part in (("hw", parts["dev"]), ("hw-unseen", parts["unseen"])):
        for q in part:
            if TEXTBOOK_CODE.match(q.code):
                gold: set[str] = Evidence(q.evidence) if q.section else set()
                sets[f"{name}-ncert"].append((q.question, gold))
            elif name == "hw":
                sets[f"hw-{q.code}"].append((q.question, gold_of(q.code, q.section)))
            else:
                sets["hw-unseen-acts"].append((q.question, gold_of(q.code, q.section)))
    return {k: (v[:limit] if limit else v) for k, v in sorted(sets.items())}, chapters


def judged(ans, pack, gold: set[str]) -> str:  # noqa: ANN001
    """right / wrong / refused / error; a textbook answer is right when a cited chunk holds its evidence."""
    if not isinstance(gold, Evidence):
        return outcome(ans, gold)
    if ans.status != "success":
        return "error" if ans.status == "error" else "refused"
    if not gold:
        return "wrong"
    cited = {c.chunk_id for c in ans.citations}
    texts = [(c.semantic_id, c.text) for c in pack.chunks if c.chunk_id in cited]
    return "right" if resolve_evidence(sorted(gold), texts) else "wrong"


def pack_hits(pack, gold: set[str]) -> list[bool]:  # noqa: ANN001
    """Per pack position (provision order, first five): does it hold the gold?"""
    if isinstance(gold, Evidence):
        return [bool(resolve_evidence(sorted(gold), [(c.semantic_id, c.text)])) for c in pack.chunks[:5]]
    got = list(dict.fromkeys(f"{c.provenance.doc_code}_{c.provenance.section_id}" for c in pack.chunks))
    return [g in gold for g in got[:5]]


def calibrate(config: str, embedders: dict, reranker, chunk_sets: dict, sets: dict) -> None:  # noqa: ANN001
    """Each dev question's fused pool (retrieval without the reranker), the reranker's logit and the fused rank of
    every candidate, and whether it is the gold: a logistic fit over both, written to the reranker's card. Prints
    first-candidate accuracy for the fused order, the reranker alone and the fit, on dev (fitted) and on the
    unseen documents (never fitted)."""
    import numpy as np

    from stages.retrieval.retrieve import retrieve
    from training.reader_models import fit_calibration, set_calibration

    embedder = embedders[config.split("+")[0]]
    indexes = {name: build_index(chunks, embedder.inner, CACHE) for name, chunks in chunk_sets.items()}
    rows: dict[str, list[tuple[int, float, int, bool]]] = {"dev": [], "unseen": []}
    for name, items in sets.items():
        part = "unseen" if "unseen" in name else "dev"
        store = "ncert" if "ncert" in name else "BNS" if "BNS" in name else "unseen" if "unseen" in name else "acts"
        for qi, (question, gold) in enumerate(items):
            result = retrieve(question, indexes[store], embedder, RetrieveConfig(top_k=reranker.pool + 5),
                              tenant_id="eval", project_id="eval")
            pool = [i for i in result.results if "section_ref" not in i.matched_by][: reranker.pool]
            texts = []
            for item in pool:
                m = item.metadata
                text = item.content_snippet
                if m.section_title and m.section_title.lower()[:40] not in text[:200].lower():
                    text = f"Section {(m.section_id or '').split('_')[-1]}. {m.section_title}\n{text}"
                texts.append(text)
            logits = reranker.logits(question, texts)
            key = hash((name, qi))
            for rank, (item, logit) in enumerate(zip(pool, logits, strict=True), start=1):
                if isinstance(gold, Evidence):
                    label = bool(resolve_evidence(sorted(gold), [(item.source_id, item.content_snippet)]))
                else:
                    label = f"{item.metadata.doc_code}_{item.metadata.section_id}" in gold
                rows[part].append((key, float(logit), rank, label))

    def arrays(part: str):  # noqa: ANN202
        keys, logits, ranks, labels = zip(*rows[part], strict=True)
        return np.array(keys), np.array(logits), np.array(ranks, dtype=float), np.array(labels, dtype=float)

    def first_right(part: str, score) -> str:  # noqa: ANN001
        keys, logits, ranks, labels = arrays(part)
        right = total = 0
        for key in dict.fromkeys(keys.tolist()):
            rows_of = np.flatnonzero(keys == key)
            if labels[rows_of].any():
                total += 1
                right += bool(labels[rows_of[np.argmax(score(logits[rows_of], ranks[rows_of]))]])
        return f"{right}/{total} = {right / max(1, total):.3f}"

    keys, logits, ranks, labels = arrays("dev")
    questions = len(set(keys.tolist()))
    fitted_on = f"dev: {questions} questions, {len(logits)} pool candidates ({int(labels.sum())} gold)"
    both = fit_calibration(logits, ranks, labels, fitted_on)
    platt = fit_calibration(logits, ranks, labels, fitted_on, use_rank=False)
    for part in ("dev", "unseen"):
        if rows[part]:
            print(f"{part}: first candidate right (of the questions whose gold is in the pool): "
                  f"fused {first_right(part, lambda lo, r: -r)}, reranker alone {first_right(part, lambda lo, r: lo)}, "
                  f"reranker+rank {first_right(part, lambda lo, r: both.slope * lo + both.prior / r)}")
    print(f"Platt only: {platt}")
    set_calibration(MODELS / "reranker", both)
    print(f"calibration written: {both}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="base,base+rr,reader,reader+rr")
    parser.add_argument("--thresholds", default="")
    parser.add_argument("--sets", default="")
    parser.add_argument("--limit", type=int, default=0, help="at most N questions per set")
    parser.add_argument("--negatives", type=int, default=100)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--held", action="store_true", help="the held-out sets instead (once, defaults chosen)")
    parser.add_argument("--calibrate", action="store_true",
                        help="fit the reranker's Platt scaling on the dev sets (first config) and write it to its card")
    args = parser.parse_args()

    from stages.adapters.onnx_embedder import OnnxMiniLMEmbedder
    from stages.adapters.onnx_reranker import OnnxReranker
    from stages.adapters.reader_embedder import OnnxReaderEmbedder

    model_cache = CACHE / "models"
    embedders = {"base": MemoEmbedder(OnnxMiniLMEmbedder(model_cache, threads=0))}
    if (MODELS / "retriever" / "card.json").exists():
        embedders["reader"] = MemoEmbedder(OnnxReaderEmbedder(model_cache, MODELS / "retriever", threads=0))
    reranker = OnnxReranker(MODELS / "reranker", threads=0) if (MODELS / "reranker" / "card.json").exists() else None
    configs = [c for c in args.configs.split(",") if c.split("+")[0] in embedders and (reranker or "+rr" not in c)]

    chunk_sets = {"acts": act_chunks(SHARED),
                  "BNS": ingested_chunks({SHARED / PDF_CODES["BNS"]: "BNS"}),
                  "unseen": ingested_chunks({SHARED / PDF_CODES["HMA"]: "HMA", SHARED / PDF_CODES["DPA"]: "DPA"})}
    chapters: list[str] = []
    if args.held:
        sets = {"held-ipc-lay": [], "held-bns-lay": []}
        for name, store in (("ipc_lay_v2.jsonl", "held-ipc-lay"), ("bns_lay_v1.jsonl", "held-bns-lay")):
            for line in (ROOT / "evaluation" / "heldout" / name).read_text().splitlines():
                row = json.loads(line)
                code = "IPC" if "ipc" in name else "BNS"
                sets[store].append((row["question"], gold_of(code, row.get("section"))))
        sets |= {tag: [(q, g) for _, q, g in ipc_queries(split_name)] for tag, split_name in IPC_BENCH_TAGS.items()
                 if split_name in IPC_JUDGE}
    else:
        sets, chapters = handwritten_sets(args.limit)
        sets["ipc-dev"] = [(q, g) for qid, q, g in ipc_queries("dev") if not qid.startswith("ipc-r")]
        sets |= {f"ipc-{tag}": [(q, g) for _, q, g in ipc_queries(name)] for tag, name in LAY_TUNING.items()}
        sets["off-topic"] = [(q, set()) for q in squad_questions(SHARED, args.negatives)]
    if args.sets:
        wanted = set(args.sets.split(","))
        sets = {k: v for k, v in sets.items() if k in wanted}

    library = textbook_library()
    if chapters and library is not None:
        chunk_sets["ncert"] = ingested_chunks({library / f"{c}.pdf": None for c in chapters
                                               if (library / f"{c}.pdf").is_file()})
    else:
        sets = {k: v for k, v in sets.items() if "ncert" not in k}

    def store_of(name: str) -> str:
        if "ncert" in name:
            return "ncert"
        return "BNS" if "BNS" in name or "bns" in name else "unseen" if "unseen" in name else "acts"

    if args.calibrate:
        calibrate(configs[0], embedders, reranker, chunk_sets, sets)
        return
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()] or [GenerationPolicy().min_confidence]
    llm = ExtractiveLLM()
    results: dict = {}
    started = time.perf_counter()
    # Each question is answered once per configuration with no confidence floor; an answer at floor t is one given
    # at 0 whose pack confidence reaches t (the floor is a precheck of its own: it changes nothing else).
    for config in configs:
        embedder = embedders[config.split("+")[0]]
        rr = reranker if "+rr" in config else None
        indexes = {name: build_index(chunks, embedder.inner, CACHE) for name, chunks in chunk_sets.items()}
        outcomes: dict[str, list[tuple[str, float, list[bool]]]] = {}
        for name, questions in sets.items():
            outcomes[name] = []
            for question, gold in questions:
                ans, pack = answer_with_pack(question, indexes[store_of(name)], embedder, RetrieveConfig(top_k=5),
                                             GenerationPolicy(min_confidence=0.0), llm, reranker=rr)
                outcomes[name].append((judged(ans, pack, gold), pack.confidence, pack_hits(pack, gold) if gold else []))
        for threshold in thresholds:
            print(f"\n{config}  min_confidence={threshold}")
            print(f"{'set':<16}{'n':>5}{'right':>8}{'wrong':>8}{'refused':>9}{'prec':>8}{'P@1':>7}{'P@5':>7}")
            for name, rows in outcomes.items():
                bins: collections.Counter[str] = collections.Counter()
                for kind, confidence, hits in rows:
                    bins["refused" if kind in ("right", "wrong") and confidence < threshold else kind] += 1
                    bins["r1"] += bool(hits[:1] and hits[0])
                    bins["r5"] += any(hits)
                n = len(rows) or 1
                answered = bins["right"] + bins["wrong"]
                row = {"n": len(rows), "right": bins["right"], "wrong": bins["wrong"], "refused": bins["refused"],
                       "precision": round(bins["right"] / answered, 4) if answered else None,
                       "r1": bins["r1"], "r5": bins["r5"]}
                results[f"{config}|{threshold}|{name}"] = row
                prec = f"{row['precision']:.1%}" if answered else "-"
                print(f"{name:<16}{len(rows):>5}{bins['right'] / n:>8.1%}{bins['wrong'] / n:>8.1%}"
                      f"{bins['refused'] / n:>9.1%}{prec:>8}{bins['r1'] / n:>7.1%}{bins['r5'] / n:>7.1%}", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
