"""SQuAD 2.0 through the real chain: is an unanswerable question refused, is an answerable one answered right?

``$CITEBOUND_SHARED_DATA/squad2-dev-subset/dev-v2.0.json`` holds 16 Wikipedia articles with crowd-written
questions, about half of them unanswerable from the article (written to look answerable: a detail of the
paragraph changed). Each article becomes one ``.txt`` file (its paragraphs separated by blank lines) and goes
through the real ingest flow (``flows.ingest_flow.ingest_flow``: extract, clean, chunk, injection scan, embed,
catalog, index) into a store kept under ``$TMPDIR/citebound-squad-store`` between runs. Every question then
goes through the answer stages exactly as ``flows.answer_flow.run_answer_chain`` chains them (request ->
retrieve -> context -> precheck -> generate -> validate, each a task of ``flows.tasks`` run in process with
``.fn``, so every artifact goes through the store) with default settings and the default extractive answerer.

Split, fixed before any run: the 16 titles sorted, the even positions (0, 2, ...) are **dev** (tune on these),
the odd positions are **held** (run once, at the end, with the code frozen). ``--per-class N`` questions of each
kind (answerable, unanswerable) per split, taken evenly over the split's questions in file order.

Reported per split: % unanswerable refused, % answerable answered with a gold answer in the answer text
(case and spacing ignored), % answerable answered without it, refusal reasons, and a risk-coverage table over
the confidence threshold (an answer counts as given at threshold t when it succeeded with confidence >= t:
raising ``min_confidence`` to t refuses exactly the others; below the default threshold nothing changes, as
the precheck already refused those). Risk = share of the given answers that are wrong (an unanswerable
question answered, or an answerable one answered without its gold answer).

Usage: .venv/bin/python bench/squad_eval.py [--split dev|held] [--per-class 160] [--reingest] [--show N]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")

# The shared data sits beside the repository (../shared/data) or beside the folder of worktrees.
SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA") or next(
    (p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared" / "data"))
DATA = SHARED / "squad2-dev-subset" / "dev-v2.0.json"
STORE = Path(tempfile.gettempdir()) / "citebound-squad-store"
TENANT, PROJECT = "squad", "squad"
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def articles() -> list[dict]:
    return json.loads(DATA.read_text())["data"]


def split_titles(split: str) -> list[str]:
    """The fixed split: sorted titles, even positions dev, odd positions held."""
    titles = sorted(a["title"] for a in articles())
    return titles[0::2] if split == "dev" else titles[1::2]


def questions(split: str, per_class: int) -> list[dict]:
    """``per_class`` answerable and ``per_class`` unanswerable questions of the split, evenly spaced."""
    wanted = set(split_titles(split))
    rows = [{"id": qa["id"], "title": a["title"], "question": qa["question"], "impossible": qa["is_impossible"],
             "gold": [ans["text"] for ans in qa["answers"]]}
            for a in articles() if a["title"] in wanted for p in a["paragraphs"] for qa in p["qas"]]
    out = []
    for impossible in (False, True):
        kind = [r for r in rows if r["impossible"] is impossible]
        step = max(1, len(kind) // per_class)
        out.extend(kind[::step][:per_class])
    return out


def ingest(reingest: bool) -> str:
    """The 16 articles through the real ingest flow into the cached store; returns the store root."""
    from contracts import ArtifactStore
    from flows.ingest_flow import INDEX_POINTER

    store_root = STORE
    if not reingest and (store_root / "pointers").is_dir() and ArtifactStore(str(store_root)).get_pointer(INDEX_POINTER):
        return str(store_root)
    docs = store_root.parent / "citebound-squad-docs"
    docs.mkdir(parents=True, exist_ok=True)
    for a in articles():
        text = "\n\n".join(p["context"].strip() for p in a["paragraphs"])
        (docs / f"{a['title']}.txt").write_text(f"{a['title'].replace('_', ' ')}\n\n{text}\n", encoding="utf-8")
    os.environ.setdefault("PREFECT_HOME", str(store_root.parent / "citebound-squad-prefect"))
    from flows.ingest_flow import ingest_flow

    started = time.perf_counter()
    report = ingest_flow([str(docs)], tenant=TENANT, project=PROJECT, store=str(store_root), ocr=False)
    bad = [f for f in report.files if f.status == "error"]
    print(f"ingested {len(report.files)} files, {report.n_vectors} chunks in {time.perf_counter() - started:.1f} s"
          + (f"; errors: {bad}" if bad else ""), file=sys.stderr)
    return str(store_root)


def answer(store_root: str, question: str):  # noqa: ANN201
    """One question through the answer chain's tasks, in process, in ``run_answer_chain``'s order."""
    from contracts import Answer, AnswerRequest, GenerationPolicy, RetrieveConfig
    from flows.ingest_flow import INDEX_POINTER
    from flows.tasks import _store, context_task, generate_task, precheck_task, request_task, retrieve_task, validate_task

    st = _store(store_root)
    cfg, policy, llm = RetrieveConfig(), GenerationPolicy(), {"backend": "extractive"}
    request = AnswerRequest(query=question, tenant_id=TENANT, project_id=PROJECT, top_k=cfg.top_k)
    request_ref = request_task.fn(store_root, request).output
    retrieval_ref = retrieve_task.fn(store_root, request_ref, st.get_pointer(INDEX_POINTER), cfg, "minilm").output
    pack_ref = context_task.fn(store_root, retrieval_ref, cfg, policy).output
    refusal = precheck_task.fn(store_root, pack_ref, policy, embedder_name="minilm").output
    if refusal is not None:
        return st.get(refusal, Answer)
    draft_ref = generate_task.fn(store_root, pack_ref, llm, policy).output
    return st.get(validate_task.fn(store_root, pack_ref, draft_ref, policy).output, Answer)


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.lower()).strip()


def has_gold(answer_text: str, gold: list[str]) -> bool:
    text = _norm(answer_text)
    return any(_norm(g) and _norm(g) in text for g in gold)


def outcome(row: dict, ans) -> str:  # noqa: ANN001
    if ans.status == "error":
        return "error"
    if ans.status != "success":
        return "refused"
    if row["impossible"]:
        return "answered"
    return "right" if has_gold(ans.answer, row["gold"]) else "no_gold"


def risk_coverage(results: list[tuple[dict, object, str]]) -> list[str]:
    lines = [f"{'threshold':>9}{'coverage':>10}{'risk':>8}{'answered':>10}{'wrong':>7}{'ans. right':>12}{'unans. refused':>16}"]
    n = len(results)
    n_ans = sum(1 for r, _, _ in results if not r["impossible"]) or 1
    n_unans = sum(1 for r, _, _ in results if r["impossible"]) or 1
    for t in THRESHOLDS:
        given = [(r, k) for r, a, k in results if a.status == "success" and (a.confidence or 0.0) >= t]
        wrong = sum(1 for _, k in given if k != "right")
        right = sum(1 for _, k in given if k == "right")
        refused_unans = n_unans - sum(1 for r, _ in given if r["impossible"])
        lines.append(f"{t:>9.2f}{len(given) / n:>10.1%}{(wrong / len(given) if given else 0.0):>8.1%}"
                     f"{len(given):>10}{wrong:>7}{right / n_ans:>12.1%}{refused_unans / n_unans:>16.1%}")
    return lines


def run(split: str, per_class: int, store_root: str, show: int) -> None:
    rows = questions(split, per_class)
    started = time.perf_counter()
    results = []
    for row in rows:
        ans = answer(store_root, row["question"])
        results.append((row, ans, outcome(row, ans)))
    seconds = time.perf_counter() - started
    unans = [(r, a, k) for r, a, k in results if r["impossible"]]
    ans_ = [(r, a, k) for r, a, k in results if not r["impossible"]]
    bins_u = collections.Counter(k for _, _, k in unans)
    bins_a = collections.Counter(k for _, _, k in ans_)
    reasons_u = collections.Counter(a.reason_code for _, a, k in unans if k == "refused")
    reasons_a = collections.Counter(a.reason_code for _, a, k in ans_ if k == "refused")
    print(f"\nSQuAD 2.0 {split} ({', '.join(split_titles(split))}): {len(ans_)} answerable + {len(unans)} "
          f"unanswerable questions in {seconds:.1f} s ({1000 * seconds / max(1, len(rows)):.0f} ms/question)")
    print(f"  unanswerable refused: {bins_u['refused']}/{len(unans)} = {bins_u['refused'] / max(1, len(unans)):.1%}"
          f"   (answered {bins_u['answered']}, error {bins_u['error']})")
    print(f"  answerable answered with gold in text: {bins_a['right']}/{len(ans_)} = "
          f"{bins_a['right'] / max(1, len(ans_)):.1%}   (answered without gold {bins_a['no_gold']}, refused "
          f"{bins_a['refused']}, error {bins_a['error']})")
    print("  refusal reasons, unanswerable: " + ", ".join(f"{c} {n}" for c, n in reasons_u.most_common()))
    print("  refusal reasons, answerable:   " + ", ".join(f"{c} {n}" for c, n in reasons_a.most_common()))
    print("  risk-coverage over the confidence threshold (both kinds together):")
    print("\n".join("    " + line for line in risk_coverage(results)))
    if show:
        for label, kinds in (("unanswerable answered", {"answered"}), ("answerable refused", {"refused"})):
            print(f"\n  {label} (first {show}):")
            for r, a, k in [x for x in results if x[2] in kinds][:show]:
                print(f"    {r['question']!r} -> {a.reason_code or ''} {a.refusal_reason or a.answer[:160]!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "held"), default="dev")
    parser.add_argument("--per-class", type=int, default=160, help="questions of each kind per split")
    parser.add_argument("--reingest", action="store_true", help="rebuild the cached store")
    parser.add_argument("--show", type=int, default=0, help="print this many failures of each kind")
    args = parser.parse_args()
    store_root = ingest(args.reingest)
    run(args.split, args.per_class, store_root, args.show)


if __name__ == "__main__":
    main()
