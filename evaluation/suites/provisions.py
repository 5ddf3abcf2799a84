"""Provisions suite: does a statute question get the right provision, a wrong one, or an honest refusal?

Each question of ``bench/data/ipc_questions.jsonl`` (lay and statute-worded questions, each with the one IPC
section that answers it) goes through the answer stages in process (``evaluation.corpora.answer_with_pack``)
over the seven acts of ``indian-acts-json`` (1,931 sections, one chunk each), with the default policy and the
LLM the run names; so do the NCERT chapter's questions (over the real chapter PDF, ingested by citebound's own
stages) and off-topic SQuAD 2.0 questions over the acts (any answer to those is wrong). Each answer is:

* **right**: grounded, and a citation names the gold section (an answer that shows two close provisions, each
  with its condition, is right when one of them is the gold one: it says which fits when);
* **wrong provision**: grounded, but no citation names it: a real provision that does not answer the question,
  the outcome a reader cannot tell from a right one without reading the law;
* **refused**, or **error**.

By the questions suite's rule (``evaluation.suites.questions.outcome_of``, one implementation). Per set:
right, wrong provision and refused rates, and **answered precision** (right over right + wrong): the share of
answers a reader can trust. Splits as in the retrieval suite: the dev set (tuned on); the pool of sets written
later whose misses were studied (``heldout`` .. ``heldout6``, split all); the pool never used to choose a shipped
default (``heldout7`` .. ``heldout9``, the held split). A table gives every set on its own.

The ci slice answers the dev set over the IPC act alone (575 sections; fewer distractors) and 20 off-topic
questions.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from contracts import Answer, Chunk, GenerationPolicy, RetrieveConfig
from contracts.evaluation import Metric, ReportTable, SuiteReport
from evaluation.corpora import (
    ACTS,
    MemoEmbedder,
    act_chunks,
    answer_with_pack,
    build_index,
    ingested_chunks,
    ipc_queries,
    ncert_queries,
    squad_questions,
)
from evaluation.metrics import MetricMaker
from evaluation.splits import IPC_HELD, IPC_LATER
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput
from evaluation.suites.questions import UserQuestion, outcome_of

__all__ = ["OUTCOMES", "classify", "run", "set_metrics"]

SUITE = "provisions"
OUTCOMES = ("right", "wrong provision", "refused", "error")
CI_OFF_TOPIC = 20
FULL_OFF_TOPIC = 100


def classify(answer: Answer, gold: set[str]) -> str:
    """right / wrong provision / refused / error (an off-topic question, no gold, answered at all is wrong)."""
    doc_codes = {c.source_id: c.source_id.split("_")[0] for c in answer.citations}
    return outcome_of(UserQuestion(line=0, qid="", question=answer.query, expected=tuple(sorted(gold))), answer,
                      doc_codes).kind


def set_metrics(maker: MetricMaker, kinds: Sequence[str], *, off_topic: bool = False) -> list[Metric]:
    answered = [k for k in kinds if k in ("right", "wrong provision")]
    if off_topic:
        return [maker.rate("refused", [k == "refused" for k in kinds]),
                maker.rate("answered", [k in ("right", "wrong provision") for k in kinds], higher_is_better=False,
                           note="an off-topic question answered at all is answered wrongly")]
    return [
        maker.rate("right", [k == "right" for k in kinds]),
        maker.rate("wrong provision", [k == "wrong provision" for k in kinds], higher_is_better=False),
        maker.rate("refused", [k == "refused" for k in kinds], higher_is_better=False),
        maker.rate("answered precision", [k == "right" for k in answered],
                   note="right answers over all answers given (right + wrong provision)"),
    ]


def _row(name: str, pool: str, kinds: Sequence[str], several: int) -> tuple[str, ...]:
    counts = Counter(kinds)
    answered = counts["right"] + counts["wrong provision"]
    return (name, pool, str(len(kinds)), *(str(counts[k]) for k in OUTCOMES),
            f"{counts['right'] / answered:.3f}" if answered else "-", str(several))


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...] = ()) -> SuiteOutput:
    from flows.backends import get_embedder, get_llm, get_verifier

    started = time.perf_counter()
    ci = ctx.subset == "ci"
    acts = {"IPC": ACTS["IPC"]} if ci else ACTS
    ctx.progress.start("provisions: embedding the acts and the NCERT chapter", 1)
    inner = get_embedder("minilm")
    embedder = MemoEmbedder(inner)
    chunks: list[Chunk] = [c for c in act_chunks(ctx.data_root) if c.provenance.doc_code in acts]
    acts_index = build_index(chunks, inner, ctx.cache_dir)
    ncert_index = None if ci else build_index(
        ingested_chunks({ctx.data_root / "ncert-textbook-pdfs" / "jemh105.pdf": None}), inner, ctx.cache_dir)
    ctx.progress.advance()
    cfg, policy, llm = RetrieveConfig(), GenerationPolicy(verify=ctx.verify), get_llm(ctx.llm)
    verifier = get_verifier(ctx.verifier) if policy.verify else None
    corpus = (f"over the IPC act alone ({len(chunks)} sections; ci slice)" if ci
              else f"over the seven acts of indian-acts-json ({len(chunks)} sections)")

    dev = [(q, g) for qid, q, g in ipc_queries("dev") if not qid.startswith("ipc-r")]
    sets: dict[str, tuple[str, object, list[tuple[str, set[str]]]]] = {"dev": ("dev", acts_index, dev)}
    if not ci:
        sets |= {name: ("later", acts_index, [(q, g) for _, q, g in ipc_queries(name)]) for name in IPC_LATER}
        sets |= {name: ("held", acts_index, [(q, g) for _, q, g in ipc_queries(name)]) for name in IPC_HELD}
        sets["ncert"] = ("ncert", ncert_index, [(q, g) for _, q, g in ncert_queries()])
    n_off = CI_OFF_TOPIC if ci else FULL_OFF_TOPIC
    sets["off_topic"] = ("off_topic", acts_index, [(q, set()) for q in squad_questions(ctx.data_root, n_off)])

    kinds: dict[str, list[str]] = {}
    several: Counter[str] = Counter()
    items: list[AnsweredItem] = []
    for name, (pool, index, questions) in sets.items():
        ctx.progress.start(f"provisions: {name}", len(questions))
        kinds[name] = []
        for question, gold in questions:
            answer, pack = answer_with_pack(question, index, embedder, cfg, policy, llm, verifier=verifier)
            kind = classify(answer, gold)
            kinds[name].append(kind)
            if kind == "right" and len({c.section_id for c in answer.citations}) > 1:
                several[name] += 1
            items.append(AnsweredItem(suite=SUITE, dataset=name, answer=answer, pack=pack))
            ctx.progress.advance()

    pools = {"dev": ("dev", ["dev"], f"IPC questions, dev set (tuned on): {len(dev)} questions {corpus}"),
             "ipc_later": ("all", list(IPC_LATER), "IPC questions written after tuning whose misses were studied "
                           f"({', '.join(IPC_LATER)}) {corpus}"),
             "ipc_held": ("held", list(IPC_HELD), "IPC questions never used to choose a shipped default "
                          f"({', '.join(IPC_HELD)}) {corpus}"),
             "ncert": ("dev", ["ncert"], "NCERT Class 10 Maths ch. 5 questions over the chapter PDF (ingested)"),
             "off_topic": ("all", ["off_topic"], f"{n_off} SQuAD 2.0 questions about other subjects, {corpus}")}
    metrics: list[Metric] = []
    for key, (split, names, words) in pools.items():
        pooled = [k for name in names if name in kinds for k in kinds[name]]
        if not pooled:
            continue
        count = sum(len(kinds[n]) for n in names if n in kinds)
        maker = MetricMaker(SUITE, key, f"{words}: {count} questions", split, ctx.resamples)
        metrics += set_metrics(maker, pooled, off_topic=key == "off_topic")
    table = ReportTable(
        title="Every set on its own: right, wrong provision, refused",
        columns=("set", "pool", "n", *OUTCOMES, "answered precision", "right, several provisions"),
        rows=tuple(_row(name, pool, kinds[name], several[name]) for name, (pool, _, _) in sets.items()),
        note="'right, several provisions': right answers that show two or more provisions, each with its condition")
    notes = (f"RetrieveConfig() and GenerationPolicy() defaults (verifier {verifier.name if verifier else 'off'}); "
             f"LLM {ctx.llm.get('backend', 'extractive')}.",)
    report = SuiteReport(suite=SUITE, seconds=round(time.perf_counter() - started, 1), metrics=tuple(metrics),
                         tables=(table,), notes=notes)
    return SuiteOutput(report=report, answered=tuple(items))
