"""Retrieval quality: BM25 alone, dense alone and hybrid, side by side, on two dev sets.

* AILA 2019 statutes (``$CITEBOUND_SHARED_DATA/aila2019-statutes``): 197 statutes, 50 long fact-pattern
  queries, TREC qrels (2-5 relevant statutes per query; 4 positives name the missing S58).
* Our IPC question set (``bench/data/ipc_questions.jsonl``): plain-language and by-reference questions,
  each with the one IPC section that answers it, asked over ALL seven acts of ``indian-acts-json``
  (1,931 sections), so "IPC 420" must beat CrPC 420 and a question about theft must beat the CrPC.
  75 "dev" questions (55 natural, 20 by reference) were used to tune fusion, the synonym map and (in
  retrieve.v3) the qualifier prior; 20 "heldout" natural questions were written after the first tuning.
  Six more sets of lay-worded natural questions were written later, each committed before it was first
  run: "heldout2" (22) and "heldout3" (20) after the fusion tuning (their misses were then looked at, so
  they are no longer clean), "heldout4" (20) before the answerer changes (its misses were looked at too),
  "heldout5" (22) to judge a thesaurus experiment (reverted) and never used to choose anything,
  "heldout6" (22) whose misses were then studied for ranking ideas (all rejected), and "heldout7" (22),
  kept unseen until the retrieve.v4 confidence fit (fitted on dev + heldout..heldout6) had been chosen.
  Two more (25 each) were committed before their first run for the provision rerank (issue 16): "heldout8",
  run once with the old code for a baseline and never used in a fit, and "heldout9", the held-out judge,
  run only with ``bench/answer_eval.py --judge`` once the code was frozen.
  Together they measure what the dev figures cannot: how the tuned system does on questions it has not
  seen (about half first; see the README).

Chunks: one chunk per statute record ("Section <n>. <title>\\n<text>"), from ``evaluation.corpora`` (the
corpora ``citebound eval`` measures; the bench does not depend on the ingestion stages). Embeddings are cached
under ``$TMPDIR/citebound-bench-cache``. The measures are ``evaluation.suites.retrieval``'s (the same per-query
functions as ``citebound eval --suite retrieval``, which reports them with intervals): this script keeps the
views used while tuning.

Prints recall@1/5/10, MRR and nDCG@10 per method and set. The long-query (AILA) fusion of retrieve.v2
(z-score CombSUM, equal weights) and its consensus rules were not tuned: the held-out IPC questions were
checked after the change. ``--tune`` grid-searches the fusion
parameters (rrf_k, dense/BM25 weights) on these same sets (there is no separate held-out split: 10
AILA training queries are too few); ``--calibrate`` fits the confidence model of ``stages.retrieval.retrieve``
and proposes ``GenerationPolicy.min_confidence``.

Usage: .venv/bin/python bench/retrieval_eval.py [--tune] [--calibrate]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from contracts import RetrieveConfig  # noqa: E402
from evaluation.corpora import (  # noqa: E402
    PROJECT,
    TENANT,
    MemoEmbedder,
    act_chunks,
    aila_chunks,
    aila_queries,
    build_index,
    ingested_chunks,
    ipc_queries,
    ncert_queries,
    squad_questions,
)
from evaluation.splits import IPC_BENCH_TAGS, IPC_JUDGE  # noqa: E402
from evaluation.suites.retrieval import mean_scores, ranked_ids  # noqa: E402
from stages.index.faiss_backend import FaissBm25Index  # noqa: E402
from stages.retrieval.retrieve import retrieve  # noqa: E402
from stages.text.normalise import search_terms  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
CACHE = Path(tempfile.gettempdir()) / "citebound-bench-cache"

# Lay-worded question sets written after all tuning (see the module docstring for what each was used for).
FRESH_SPLITS = {tag: name for tag, name in IPC_BENCH_TAGS.items() if name not in IPC_JUDGE}
# The held-out judge of the provision rerank (issue 16): 25 lay questions committed with heldout8 before any run,
# run only with --judge once the code is frozen. Never fitted, never looked at while tuning.
JUDGE_SPLITS = {tag: name for tag, name in IPC_BENCH_TAGS.items() if name in IPC_JUDGE}


def evaluate(sets, embedder, cfg: RetrieveConfig) -> dict[tuple[str, str], dict[str, float]]:  # noqa: ANN001
    table = {}
    for set_name, (index, queries) in sets.items():
        for mode in ("bm25", "dense", "hybrid"):
            mode_cfg = cfg.model_copy(update={"mode": mode, "top_k": 10})
            runs = [(ranked_ids(index, embedder, question, mode_cfg), relevant) for _, question, relevant in queries]
            table[(set_name, mode)] = mean_scores(runs)
    return table


def print_table(table: dict[tuple[str, str], dict[str, float]]) -> None:
    columns = ("R@1", "R@5", "R@10", "MRR", "nDCG@10")
    print(f"{'set':<16}{'method':<8}" + "".join(f"{c:>9}" for c in columns) + "   hybrid >= best single?")
    for set_name in dict.fromkeys(s for s, _ in table):
        best = {c: max(table[(set_name, m)][c] for m in ("bm25", "dense")) for c in columns}
        for mode in ("bm25", "dense", "hybrid"):
            row = table[(set_name, mode)]
            verdict = ""
            if mode == "hybrid":
                verdict = "yes" if all(row[c] >= best[c] - 1e-9 for c in columns) else "NO: " + ",".join(
                    c for c in columns if row[c] < best[c] - 1e-9)
            print(f"{set_name:<16}{mode:<8}" + "".join(f"{row[c]:9.3f}" for c in columns) + f"   {verdict}")


def hybrid_ok(table) -> bool:  # noqa: ANN001
    columns = ("R@1", "R@5", "R@10", "MRR", "nDCG@10")
    return all(
        table[(s, "hybrid")][c] >= max(table[(s, "bm25")][c], table[(s, "dense")][c]) - 1e-9
        for s in dict.fromkeys(s for s, _ in table) for c in columns
    )


def safety(sets, embedder, cfg: RetrieveConfig, min_confidence: float) -> None:  # noqa: ANN001
    """What the confidence threshold does with the misses: a wrong first section must be refused, not answered.

    Per set (hybrid, natural-language questions only): share answered with the right section first; answered
    although the first section is wrong but the right one is in the top 5 (the pack the answerer sees); answered
    with the right section nowhere in the top 5 (the dangerous case: a confident answer from the wrong law);
    refused as low-confidence (safe, but a miss for the user).
    """
    print(f"\nsafety at GenerationPolicy.min_confidence={min_confidence} (pack confidence = its best chunk's):")
    print(f"{'set':<16}{'n':>4}{'right 1st':>11}{'in top 5':>10}{'wrong':>8}{'refused':>9}"
          f"   top-1 confidence: mean vs observed R@1; right when >= 0.7")
    for set_name, (index, queries) in sets.items():
        counts = {"right": 0, "top5": 0, "wrong": 0, "refused": 0}
        top_confidence: list[tuple[float, bool]] = []
        natural = [(q, rel) for qid, q, rel in queries if not qid.startswith("ipc-r")]
        for question, relevant in natural:
            result = retrieve(question, index, embedder, cfg.model_copy(update={"top_k": 5}), tenant_id=TENANT,
                              project_id=PROJECT)
            ranked = [f"{i.metadata.doc_code}_{i.metadata.section_id}" for i in result.results]
            if result.results:
                top_confidence.append((result.results[0].confidence, ranked[0] in relevant))
            if max((i.confidence for i in result.results), default=0.0) < min_confidence:
                counts["refused"] += 1
            elif ranked[:1] and ranked[0] in relevant:
                counts["right"] += 1
            elif relevant & set(ranked):
                counts["top5"] += 1
            else:
                counts["wrong"] += 1
        n = len(natural)
        confident = [right for conf, right in top_confidence if conf >= 0.7]
        calibration = (f"   {np.mean([c for c, _ in top_confidence]):.2f} vs {np.mean([r for _, r in top_confidence]):.2f}; "
                       f"{np.mean(confident) if confident else float('nan'):.2f} of {len(confident)}")
        print(f"{set_name:<16}{n:>4}" + "".join(f"{counts[k] / n:>{w}.1%}" for k, w in
                                                (("right", 11), ("top5", 10), ("wrong", 8), ("refused", 9)))
              + calibration)


def _top_features(index: FaissBm25Index, embedder, question: str, result) -> tuple[float, float, int]:  # noqa: ANN001
    """(cosine, keyword coverage, firsts) of a result's first item, as ``stages.retrieval.retrieve`` computes them."""
    from stages.retrieval.query_analysis import analyze_query

    top = result.results[0]
    keywords = set(analyze_query(question).keywords)
    qvec = embedder.embed([question])[0]
    engine = index.search_index  # the tuning tools read the FAISS index's own slots
    cosine = float(engine.vectors_of([engine.slot_of(top.metadata.chunk_id)])[0] @ qvec)
    coverage = len(keywords & set(search_terms(top.content_snippet))) / len(keywords) if keywords else 0.0
    firsts = 0
    for mode in ("dense", "bm25"):
        single = retrieve(question, index, embedder, RetrieveConfig(mode=mode, top_k=1), tenant_id=TENANT,
                          project_id=PROJECT)
        firsts += bool(single.results) and single.results[0].source_id == top.source_id
    return cosine, coverage, firsts


def calibrate(fit_sets, check_sets, embedder, cfg: RetrieveConfig, n_negative: int) -> None:  # noqa: ANN001
    """Fit confidence = sigmoid(b0 + b1*cosine + b2*coverage + b3*[both first] + b4*[neither first]) on each
    query's top result over ``fit_sets``; report its reliability on ``check_sets`` (never fitted); propose
    min_confidence.

    One example per query whose top result was not reached through a section reference (those get
    REF_CONFIDENCE): the features of its top result, labelled 1 when that result is a relevant statute (qrels
    / the gold IPC section) and 0 otherwise; every off-topic SQuAD question contributes a 0 per index of the
    fit sets. The confidence therefore estimates "the best chunk is the right one", which is what the refusal
    threshold needs.
    """
    from stages.retrieval.retrieve import confidence_of

    def examples(sets, with_negatives: bool) -> list[tuple[str, float, float, int, float]]:  # noqa: ANN001
        rows = []
        negatives = squad_questions(SHARED, n_negative) if with_negatives else []
        seen_indexes: set[int] = set()
        for set_name, (index, queries) in sets.items():
            jobs = [(set_name, q, rel) for qid, q, rel in queries if not qid.startswith("ipc-r")]
            if id(index) not in seen_indexes:
                seen_indexes.add(id(index))
                jobs += [("off-topic", q, set()) for q in negatives]
            for group, question, relevant in jobs:
                result = retrieve(question, index, embedder, cfg, tenant_id=TENANT, project_id=PROJECT)
                if not result.results or "section_ref" in result.results[0].matched_by:
                    continue  # answered by an explicit reference: REF_CONFIDENCE, not this model
                top = result.results[0]
                label = 1.0 if f"{top.metadata.doc_code}_{top.metadata.section_id}" in relevant else 0.0
                rows.append((group, *_top_features(index, embedder, question, result), label))
        return rows

    def design(rows) -> np.ndarray:  # noqa: ANN001
        return np.asarray([(1.0, c, v, float(f >= 2), float(f == 0)) for _, c, v, f, _ in rows])

    rows = examples(fit_sets, with_negatives=True)
    x, y = design(rows), np.asarray([r[-1] for r in rows])
    w = np.zeros(x.shape[1])
    for _ in range(60):  # Newton-Raphson for logistic regression, with a little ridge for stability
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (y - p) - 1e-2 * w
        hessian = -(x.T * (p * (1 - p))) @ x - 1e-2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hessian, gradient)
    print(f"\nconfidence fit on {len(y)} top results ({int(y.sum())} right) of {', '.join(fit_sets)} + off-topic: "
          f"CONF_BIAS={w[0]:.2f} CONF_COSINE={w[1]:.2f} CONF_COVERAGE={w[2]:.2f} "
          f"CONF_BOTH_FIRST={w[3]:.2f} CONF_NEITHER_FIRST={w[4]:.2f}")
    checks = examples(check_sets, with_negatives=False)
    for label, data in (("fitted data", rows), ("check sets (not fitted)", checks)):
        if not data:
            continue
        labels = np.asarray([r[-1] for r in data])
        current = np.asarray([confidence_of(c, v, firsts=f) for _, c, v, f, _ in data])
        fitted = 1.0 / (1.0 + np.exp(-(design(data) @ w)))
        print(f"\nreliability on the {label}: predicted bin -> observed rate of right top results, n "
              "(stages.retrieval.retrieve's coefficients | the fit above)")
        for lo in np.arange(0.0, 1.0, 0.2):
            cells = []
            for conf in (current, fitted):
                sel = (conf >= lo) & (conf < lo + 0.2 + (1e-9 if lo >= 0.8 else 0))
                cells.append(f"predicted {conf[sel].mean():.3f} observed {labels[sel].mean():.3f} n={int(sel.sum()):3}"
                             if sel.any() else f"{'-':>37}")
            print(f"  [{lo:.1f},{lo + 0.2:.1f})  " + "  |  ".join(cells))
        groups = np.asarray([g for g, *_ in data])
        names = list(dict.fromkeys(groups))
        for name, conf in (("current coefficients", current), ("the fit above", fitted)):
            print(f"  {name}: per group mean confidence vs observed; log loss; refused / wrong-and-kept at 0.3 and 0.5")
            for g in names:
                sel = groups == g
                c, yy = conf[sel], labels[sel]
                loss = -np.mean(yy * np.log(c + 1e-9) + (1 - yy) * np.log(1 - c + 1e-9))
                cells = "  ".join(f"{np.mean(c < t):.2f}/{np.mean((c >= t) & (yy == 0)):.2f}" for t in (0.3, 0.5))
                print(f"    {g:<12} n={int(sel.sum()):3}  {c.mean():.2f} vs {yy.mean():.2f}  {loss:.3f}  {cells}")


def rerank_rows(sets, embedder, cfg: RetrieveConfig, negatives: list[str]):  # noqa: ANN001
    """Per query (natural questions only, not answered by a section reference): the fused candidates' rerank
    features (``stages.retrieval.rerank``), the index of the gold one among them (None: not in the pool) and the set."""
    from stages.retrieval.query_analysis import analyze_query
    from stages.retrieval.rerank import RERANK_POOL
    from stages.retrieval.retrieve import rerank_features

    plain = cfg.model_copy(update={"rerank": False, "top_k": RERANK_POOL})
    rows = []
    seen: set[int] = set()
    for set_name, (index, queries) in sets.items():
        jobs = [(set_name, q, rel) for qid, q, rel in queries if not qid.startswith("ipc-r")]
        if id(index) not in seen and negatives:
            seen.add(id(index))
            jobs += [("off-topic", q, set()) for q in negatives]
        for group, question, relevant in jobs:
            result = retrieve(question, index, embedder, plain, tenant_id=TENANT, project_id=PROJECT)
            if not result.results or "section_ref" in result.results[0].matched_by:
                continue
            engine = index.search_index  # the tuning tools read the FAISS index's own slots
            slots = [engine.slot_of(i.metadata.chunk_id) for i in result.results]
            qvec = embedder.embed([question])[0]
            firsts = []
            for mode in ("dense", "bm25"):
                single = retrieve(question, index, embedder, RetrieveConfig(mode=mode, top_k=1), tenant_id=TENANT,
                                  project_id=PROJECT)
                if single.results:
                    firsts.append(engine.slot_of(single.results[0].metadata.chunk_id))
            feats = rerank_features(question, analyze_query(question), [engine.chunk_at(s) for s in slots], embedder,
                                    slots, engine.vectors_of(slots) @ qvec, firsts)
            ids = [f"{i.metadata.doc_code}_{i.metadata.section_id}" for i in result.results]
            gold = next((k for k, x in enumerate(ids) if x in relevant), None)
            rows.append((group, question, feats, gold, ids))
    return rows


def _newton(loglik, gradient_and_hessian, d: int, steps: int) -> np.ndarray:
    """Maximise a concave ``loglik`` by Newton steps, halving a step until it does not lower the objective
    (undamped Newton overshoots and diverges on nearly separable data)."""
    w = np.zeros(d)
    current = loglik(w)
    for _ in range(steps):
        gradient, hessian = gradient_and_hessian(w)
        step = np.linalg.solve(hessian, gradient)
        t = 1.0
        while t > 1e-6 and loglik(w - t * step) < current:
            t /= 2
        w, previous = w - t * step, current
        current = loglik(w)
        if abs(current - previous) < 1e-9:
            break
    return w


def fit_conditional_logit(pools, golds, ridge: float = 1e-2, steps: int = 60) -> np.ndarray:
    """Weights of a conditional logit (softmax of a linear score over each pool) maximising the L2-penalised
    log-likelihood of the gold candidate. ``pools``: one (n_i, d) array per query."""
    d = pools[0].shape[1]

    def loglik(w: np.ndarray) -> float:
        total = -0.5 * ridge * float(w @ w)
        for x, gold in zip(pools, golds, strict=True):
            z = x @ w
            total += float(z[gold] - z.max() - np.log(np.exp(z - z.max()).sum()))
        return total

    def gradient_and_hessian(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gradient, hessian = -ridge * w, -ridge * np.eye(d)
        for x, gold in zip(pools, golds, strict=True):
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ x
            gradient = gradient + x[gold] - mean
            hessian = hessian - ((x.T * p) @ x - np.outer(mean, mean))
        return gradient, hessian

    return _newton(loglik, gradient_and_hessian, d, steps)


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-2, steps: int = 60) -> np.ndarray:
    """Logistic-regression weights (x carries its own constant column), L2-penalised."""

    def loglik(w: np.ndarray) -> float:
        z = x @ w
        return float(y @ z - np.logaddexp(0.0, z).sum() - 0.5 * ridge * w @ w)

    def gradient_and_hessian(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        return x.T @ (y - p) - ridge * w, -(x.T * (p * (1 - p))) @ x - ridge * np.eye(x.shape[1])

    return _newton(loglik, gradient_and_hessian, x.shape[1], steps)


def fit_rerank_models(rows) -> tuple[tuple[float, ...], tuple[float, ...]]:  # noqa: ANN001
    """Both models of ``stages.retrieval.rerank``: the conditional logit on the queries whose pool holds the gold
    candidate, then the in-pool logistic on the first candidate that logit puts first (label: the pool holds
    the gold one; off-topic questions never do)."""
    pools = [np.asarray([f.vector() for f in feats]) for _, _, feats, _, _ in rows]
    held = [(x, gold) for x, (_, _, _, gold, _) in zip(pools, rows, strict=True) if gold is not None]
    rank_w = fit_conditional_logit([x for x, _ in held], [g for _, g in held])
    tops = []
    for feats in (feats for _, _, feats, _, _ in rows):
        top = feats[int(np.argmax([float(np.dot(rank_w, f.vector())) for f in feats]))]
        tops.append((1.0, top.cosine, top.coverage, top.both_first, top.neither_first))
    in_pool = np.asarray([float(gold is not None) for _, _, _, gold, _ in rows])
    pool_w = fit_logistic(np.asarray(tops), in_pool)
    return tuple(float(v) for v in rank_w), tuple(float(v) for v in pool_w)


def fit_rerank(fit_sets, check_sets, embedder, cfg: RetrieveConfig, n_negative: int) -> None:  # noqa: ANN001
    """Fit ``stages.retrieval.rerank.RANK_COEFFICIENTS`` and ``POOL_COEFFICIENTS`` on ``fit_sets`` (+ off-topic
    questions); report first-place accuracy and the top-result confidence on the fitted and on the unseen
    ``check_sets``, for the fused order, the current coefficients and the new fit."""
    from stages.retrieval.rerank import POOL_COEFFICIENTS, RANK_COEFFICIENTS, rerank

    rows = rerank_rows(fit_sets, embedder, cfg, squad_questions(SHARED, n_negative))
    rank_w, pool_w = fit_rerank_models(rows)
    print(f"\nrerank fit on {len(rows)} queries of {', '.join(fit_sets)} + off-topic:")
    print("RANK_COEFFICIENTS = (" + ", ".join(f"{v:.3f}" for v in rank_w) + ")")
    print("POOL_COEFFICIENTS = (" + ", ".join(f"{v:.3f}" for v in pool_w) + ")")
    checks = rerank_rows(check_sets, embedder, cfg, []) if check_sets else []
    for label, data in (("fitted", rows), ("check (not fitted)", checks)):
        groups = list(dict.fromkeys(g for g, *_ in data))
        for g in groups:
            sel = [r for r in data if r[0] == g]
            for name, coef in (("fused order", None), ("current", (RANK_COEFFICIENTS, POOL_COEFFICIENTS)),
                               ("fit", (rank_w, pool_w))):
                firsts, confs, right_conf = 0, [], []
                for _, _, feats, gold, _ in sel:
                    if coef is None:
                        best = 0
                    else:
                        probs = rerank(feats, *coef)
                        best = int(np.argmax(probs))
                        confs.append(probs[best])
                        right_conf.append(best == gold)
                    firsts += best == gold
                extra = ""
                if confs:
                    c, r = np.asarray(confs), np.asarray(right_conf)
                    extra = (f"  top confidence {c.mean():.2f} vs right {r.mean():.2f}; at 0.3/0.5/0.7 answered-wrong "
                             + "/".join(f"{int(((c >= t) & ~r).sum())}" for t in (0.3, 0.5, 0.7))
                             + " answered-right " + "/".join(f"{int(((c >= t) & r).sum())}" for t in (0.3, 0.5, 0.7)))
                print(f"  {label:<18} {g:<14} n={len(sel):3} {name:<11} R@1 {firsts / max(1, len(sel)):.3f}{extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune", action="store_true", help="grid-search rrf_k and the fusion weights")
    parser.add_argument("--calibrate", action="store_true", help="fit the confidence model; propose min_confidence")
    parser.add_argument("--fit-rerank", action="store_true",
                        help="fit stages.retrieval.rerank's coefficients on the old sets")
    parser.add_argument("--negatives", type=int, default=150, help="off-topic SQuAD questions for --calibrate")
    args = parser.parse_args()

    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    real = SentenceTransformersEmbedder()
    real.warm_up()
    embedder = MemoEmbedder(real)
    print("building indexes ...", file=sys.stderr)
    all_acts = act_chunks(SHARED)
    acts_index = build_index(all_acts, real, CACHE)
    # The set: questions over the IPC JSON, searched in an index of the IPC alone (575 sections).
    # "IPC" below is the stricter variant kept from tuning: the same questions against all 7 acts (1,931
    # sections), where a CrPC or Evidence Act section can outrank the IPC one.
    if args.fit_rerank:
        # Fitted on the dev sets and the old fresh sets (held2-held7); heldout8 (run once for a baseline) and
        # heldout9 (the judge) are not looked at while fitting: the NCERT questions are the unseen check.
        fit_sets = {"IPC": (acts_index, ipc_queries("dev")), "IPC-held": (acts_index, ipc_queries("heldout"))} | {
            f"IPC-{tag}": (acts_index, ipc_queries(split)) for tag, split in FRESH_SPLITS.items() if tag != "held8"}
        ncert = build_index(ingested_chunks({SHARED / "ncert-textbook-pdfs" / "jemh105.pdf": None}), real, CACHE)
        fit_rerank(fit_sets, {"NCERT": (ncert, ncert_queries())},
                   embedder, RetrieveConfig(rerank=True), args.negatives)
        return
    ipc_index = build_index([c for c in all_acts if c.provenance.doc_code == "IPC"], real, CACHE)
    sets = {
        "AILA": (build_index(aila_chunks(SHARED), real, CACHE), aila_queries(SHARED)),
        "IPC": (acts_index, ipc_queries("dev")),
        "IPC-only": (ipc_index, ipc_queries("dev")),
        "NCERT": (build_index(ingested_chunks({SHARED / "ncert-textbook-pdfs" / "jemh105.pdf": None}), real, CACHE),
                  ncert_queries()),
    }
    heldout = {"IPC-held": (acts_index, ipc_queries("heldout")), "IPC-only-held": (ipc_index, ipc_queries("heldout"))}
    fresh = {f"IPC-{tag}": (acts_index, ipc_queries(split)) for tag, split in FRESH_SPLITS.items()} | {
        f"IPC-only-{tag}": (ipc_index, ipc_queries(split)) for tag, split in FRESH_SPLITS.items()}
    cfg = RetrieveConfig()
    started = time.perf_counter()
    table = evaluate(sets, embedder, cfg)
    print(f"\ndefaults: rrf_k={cfg.rrf_k} dense_weight={cfg.dense_weight} bm25_weight={cfg.bm25_weight} "
          f"candidate_k={cfg.candidate_k}  ({time.perf_counter() - started:.1f} s)")
    print_table(table)
    print("\nheld-out IPC questions (written after tuning, never used to tune):")
    print_table(evaluate(heldout, embedder, cfg))
    print("\nfresh held-out sets (lay-worded natural questions written after the dev tuning; see the docstring):")
    print_table(evaluate(fresh, embedder, cfg))
    for set_name, (index, queries) in fresh.items():
        for qid, q, rel in queries:
            top = ranked_ids(index, embedder, q, cfg)
            if not top or top[0] not in rel:
                print(f"  {set_name}: not first: {qid} {q!r} want {sorted(rel)} got {top[:3]}")
    from contracts import GenerationPolicy

    safety({name: sets[name] for name in ("IPC", "IPC-only")} | heldout | fresh, embedder, cfg,
           GenerationPolicy().min_confidence)
    ipc = sets["IPC"]
    ref_rows = [(q, rel) for qid, q, rel in ipc[1] if qid.startswith("ipc-r")]
    ref_first = sum((ranked_ids(ipc[0], embedder, q, cfg) or [""])[0] in rel for q, rel in ref_rows)
    print(f"\nIPC by-reference questions with that section first (hybrid): {ref_first}/{len(ref_rows)}")
    for set_name in ("IPC", "IPC-only"):
        index, queries = sets[set_name]
        for qid, q, rel in queries:
            top = ranked_ids(index, embedder, q, cfg)
            if not top or top[0] not in rel:
                print(f"  {set_name}: not first: {qid} {q!r} want {sorted(rel)} got {top[:3]}")

    if args.tune:
        print("\ngrid (hybrid must be >= the better single method everywhere):")
        print(f"{'rrf_k':>6}{'w_dense':>9}{'w_bm25':>8}  AILA MRR  AILA nDCG  IPC R@1  IPC MRR  ok")
        for rrf_k in (5, 10, 20, 30, 60):
            for w_dense in (0.5, 0.75, 1.0, 1.5, 2.0):
                trial = cfg.model_copy(update={"rrf_k": rrf_k, "dense_weight": w_dense, "bm25_weight": 1.0})
                t = evaluate(sets, embedder, trial)
                print(f"{rrf_k:>6}{w_dense:>9}{1.0:>8}  {t[('AILA', 'hybrid')]['MRR']:8.3f}  "
                      f"{t[('AILA', 'hybrid')]['nDCG@10']:9.3f}  {t[('IPC', 'hybrid')]['R@1']:7.3f}  "
                      f"{t[('IPC', 'hybrid')]['MRR']:7.3f}  {'yes' if hybrid_ok(t) else 'no'}")
    if args.calibrate:
        # Fitted on the dev sets and on the fresh lay-worded sets up to held6 (lay questions are what users ask,
        # and the dev set alone under-represents the misses); held7 was kept unseen to check the fit.
        fit_sets = {"AILA": sets["AILA"], "IPC": sets["IPC"], "IPC-held": heldout["IPC-held"]} | {
            name: fresh[name] for name in fresh if name.startswith("IPC-held") and name != "IPC-held7"}
        check_sets = {name: fresh[name] for name in ("IPC-held7",) if name in fresh} | {"NCERT": sets["NCERT"]}
        calibrate(fit_sets, check_sets, embedder, cfg, args.negatives)


if __name__ == "__main__":
    main()
