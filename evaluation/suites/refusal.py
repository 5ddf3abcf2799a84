"""Refusal on SQuAD 2.0: is an unanswerable question refused, is an answerable one answered with its gold answer?

``squad2-dev-subset/dev-v2.0.json`` holds 16 Wikipedia articles with crowd-written questions, about half of them
unanswerable from the article (written to look answerable: a detail of the paragraph changed). Each article
becomes one ``.txt`` file (its paragraphs separated by blank lines) that goes through citebound's own ingestion
stages; every question goes through the answer stages in process (``evaluation.corpora.answer_with_pack``) with
the default ``RetrieveConfig`` and ``GenerationPolicy`` and the LLM the run names.

Split (``evaluation.splits``): the **held** half is the articles recorded in
``evaluation/data/squad_held_split.json`` before any run scored them (each checked against the sha256 of its
questions; reported, never used to choose anything); every other article is **dev**. Questions the manifest
excludes (asked before as off-topic statute questions) are never picked. Per split, ``per_class`` answerable and
``per_class`` unanswerable questions, taken evenly over the split's questions in file order. The full run indexes
all 16 articles and asks 160 of each kind per split; the ci slice indexes only the two shortest articles of each
split (by text length: fewest chunks to embed on a fresh clone, where embedding is most of the cost) and asks 50
of each kind per split.

A right answer is an answerable question answered with a gold answer string inside the answer text (case and
spacing ignored); every other answer is wrong. The answer's score is the verifier's answerability (its P(the best
passage answers), on refusals too), or the retrieval confidence when the verifier is off. Its ROC AUC says how
well it separates answerable from unanswerable questions; the risk-coverage curve raises a threshold on it: an
answer counts as given at threshold t when it succeeded with a score >= t (raising ``min_answerability``, or
``min_confidence`` without the verifier, to t refuses exactly the others).
"""

from __future__ import annotations

import collections
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contracts import Answer
from contracts.errors import ConfigError
from contracts.evaluation import Metric, ReportPlot, ReportTable, SuiteReport
from contracts.store import atomic_write
from evaluation.metrics import MetricMaker, contains_phrase, risk_coverage
from evaluation.splits import squad_split
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput

__all__ = [
    "CI_PER_CLASS",
    "CI_TITLES",
    "FULL_PER_CLASS",
    "SPLITS",
    "THRESHOLDS",
    "Outcome",
    "SquadQuestion",
    "ci_titles",
    "curve_rows",
    "has_gold",
    "load_articles",
    "outcome_of",
    "pick_questions",
    "reasons_table",
    "run",
    "split_metrics",
    "write_articles",
]

SUITE = "refusal"
SPLITS = ("dev", "held")
DATA_FILE = Path("squad2-dev-subset") / "dev-v2.0.json"
THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
FULL_PER_CLASS = 160
# The ci slice: the two shortest articles of each split, 50 questions of each kind per split. Answering costs
# ~50 ms a question with the extractive LLM; embedding the articles (~10 chunks/s on 2 cores) and loading the
# model are most of a cold run, so the slice is cut by articles, not questions.
CI_TITLES = 2
CI_PER_CLASS = 50


@dataclass(frozen=True)
class SquadQuestion:
    qid: str
    title: str
    question: str
    impossible: bool
    gold: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """What happened to one question: answered (success), refused (with its reason code) or error."""

    question: SquadQuestion
    status: str  # "answered" | "refused" | "error"
    reason: str | None
    confidence: float | None
    gold_in_answer: bool
    answerability: float | None = None

    @property
    def score(self) -> float | None:
        """What the curve thresholds: the verifier's answerability, else the retrieval confidence."""
        return self.answerability if self.answerability is not None else self.confidence

    @property
    def right(self) -> bool:
        """Answered, answerable, and the answer holds a gold answer."""
        return self.status == "answered" and not self.question.impossible and self.gold_in_answer


# ------------------------------------------------------------------------------------------ data


def load_articles(data_root: Path) -> list[dict]:
    path = data_root / DATA_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))["data"]
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"cannot read the SQuAD 2.0 subset at {path}: {exc}") from exc


def ci_titles(articles: list[dict], titles: Sequence[str]) -> list[str]:
    """The ``CI_TITLES`` shortest of ``titles`` (total paragraph length; ties by title), in sorted order."""
    size = {a["title"]: sum(len(p["context"]) for p in a["paragraphs"]) for a in articles}
    return sorted(sorted(titles, key=lambda t: (size[t], t))[:CI_TITLES])


def pick_questions(articles: list[dict], titles: Sequence[str], per_class: int,
                   exclude: frozenset[str] = frozenset()) -> list[SquadQuestion]:
    """``per_class`` answerable then ``per_class`` unanswerable questions of ``titles`` (ids in ``exclude``
    left out), evenly spaced in file order (the step is the number of questions of that kind over
    ``per_class``, at least 1)."""
    wanted = set(titles)
    rows = [SquadQuestion(qid=qa["id"], title=a["title"], question=qa["question"], impossible=bool(qa["is_impossible"]),
                          gold=tuple(ans["text"] for ans in qa["answers"]))
            for a in articles if a["title"] in wanted for p in a["paragraphs"] for qa in p["qas"]
            if qa["id"] not in exclude]
    out: list[SquadQuestion] = []
    for impossible in (False, True):
        kind = [r for r in rows if r.impossible is impossible]
        step = max(1, len(kind) // per_class) if per_class else 1
        out.extend(kind[::step][:per_class])
    return out


def write_articles(articles: list[dict], titles: Sequence[str], folder: Path) -> dict[Path, str]:
    """One ``<title>.txt`` per article (title line, then its paragraphs); written once, atomically, so a
    killed run never leaves half a file to ingest. Returns {path: doc code}."""
    folder.mkdir(parents=True, exist_ok=True)
    by_title = {a["title"]: a for a in articles}
    files: dict[Path, str] = {}
    for title in titles:
        article = by_title[title]
        text = "\n\n".join(p["context"].strip() for p in article["paragraphs"])
        data = f"{title.replace('_', ' ')}\n\n{text}\n".encode()
        path = folder / f"{title}.txt"
        if not path.is_file() or path.read_bytes() != data:
            atomic_write(path, data)
        files[path] = re.sub(r"[^A-Za-z0-9_.#-]+", "_", title)
    return files


# ------------------------------------------------------------------------------------------ scoring


def has_gold(answer_text: str, gold: Sequence[str]) -> bool:
    """A gold answer string inside the answer text, case and spacing ignored."""
    return any(contains_phrase(answer_text, g) for g in gold)


def outcome_of(question: SquadQuestion, answer: Answer) -> Outcome:
    status = "answered" if answer.status == "success" else "error" if answer.status == "error" else "refused"
    return Outcome(question=question, status=status,
                   reason=None if status == "answered" else (answer.reason_code or answer.status),
                   confidence=answer.confidence,
                   gold_in_answer=status == "answered" and has_gold(answer.answer, question.gold),
                   answerability=answer.answerability)


def split_metrics(maker: MetricMaker, outcomes: Sequence[Outcome]) -> list[Metric]:
    """The four rates of one split and the ROC AUC of its scores. Errors count as neither refused nor answered."""
    unans = [o for o in outcomes if o.question.impossible]
    ans = [o for o in outcomes if not o.question.impossible]
    given = [o for o in outcomes if o.status == "answered"]
    return [
        maker.rate("unanswerable refused", [o.status == "refused" for o in unans]),
        maker.rate("answerable answered", [o.status == "answered" for o in ans]),
        maker.rate("answerable gold in answer", [o.right for o in ans],
                   note="answered with a gold answer string in the answer text (case and spacing ignored)"),
        maker.rate("answered precision", [o.right for o in given],
                   note="answers given that are right (answerable, gold in answer) over all answers given"),
        maker.auc("answerability ROC AUC", [not o.question.impossible for o in outcomes],
                  [o.score if o.score is not None else 0.0 for o in outcomes],
                  note="how well the answer's score (the verifier's answerability; retrieval confidence without "
                       "it) separates answerable from unanswerable questions: 0.5 is chance"),
    ]


def reasons_table(split: str, outcomes: Sequence[Outcome]) -> ReportTable:
    """Reason code -> how many unanswerable / answerable questions were refused (or failed) with it."""
    unans = collections.Counter(o.reason for o in outcomes if o.status != "answered" and o.question.impossible)
    ans = collections.Counter(o.reason for o in outcomes if o.status != "answered" and not o.question.impossible)
    codes = sorted(set(unans) | set(ans), key=lambda c: (-(unans[c] + ans[c]), str(c)))
    rows = tuple((str(c), str(unans[c]), str(ans[c])) for c in codes)
    return ReportTable(title=f"Refusal reasons, {split} half", columns=("reason code", "unanswerable", "answerable"),
                       rows=rows, note="errors are listed under their reason code too" if any(
                           o.status == "error" for o in outcomes) else None)


def curve_rows(outcomes: Sequence[Outcome]) -> list[tuple[float, float, float, int, int]]:
    """(threshold, coverage, risk, given, wrong) over ``THRESHOLDS``; right = answerable with gold."""
    return risk_coverage([o.score for o in outcomes], [o.status == "answered" for o in outcomes],
                         [o.right for o in outcomes], THRESHOLDS)


# ------------------------------------------------------------------------------------------ the suite


def _dataset_text(split: str, titles: Sequence[str], questions: Sequence[SquadQuestion], ci: bool) -> str:
    n_ans = sum(not q.impossible for q in questions)
    slice_ = "ci slice of the " if ci else ""
    articles = f"{len(titles)} article{'s' if len(titles) != 1 else ''}"
    return (f"SQuAD 2.0 dev subset, {slice_}{split} half: {articles} ({', '.join(titles)}), "
            f"{n_ans} answerable + {len(questions) - n_ans} unanswerable")


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...] = ()) -> SuiteOutput:
    """Index the articles, ask each split's questions, score them."""
    from contracts import GenerationPolicy, RetrieveConfig
    from evaluation.corpora import MemoEmbedder, answer_with_pack, build_index, ingested_chunks
    from flows.backends import get_embedder, get_llm, get_verifier

    started = time.perf_counter()
    ci = ctx.subset == "ci"
    articles = load_articles(ctx.data_root)
    split_of = squad_split(articles)
    per_class = CI_PER_CLASS if ci else FULL_PER_CLASS
    titles = {s: ci_titles(articles, split_of.titles(s)) if ci else split_of.titles(s) for s in SPLITS}
    indexed = sorted(t for s in SPLITS for t in titles[s])

    ctx.progress.start("refusal: ingest and embed articles", 1)
    files = write_articles(articles, indexed, ctx.cache_dir / "squad-articles")
    chunks = ingested_chunks(files)
    embedder = MemoEmbedder(get_embedder("minilm"))
    index = build_index(chunks, embedder, ctx.cache_dir, index_uri=ctx.index_uri)
    ctx.progress.advance()
    cfg, policy, llm = RetrieveConfig(), GenerationPolicy(verify=ctx.verify), get_llm(ctx.llm)
    verifier = get_verifier(ctx.verifier) if policy.verify else None

    metrics: list[Metric] = []
    tables: list[ReportTable] = []
    curves: dict[str, list[tuple[float, float, float, int, int]]] = {}
    items: list[AnsweredItem] = []
    for split in SPLITS:
        questions = pick_questions(articles, titles[split], per_class, split_of.excluded_ids)
        key = f"squad_{split}"
        ctx.progress.start(f"refusal: {split} questions", len(questions))
        outcomes = []
        for q in questions:
            answer, pack = answer_with_pack(q.question, index, embedder, cfg, policy, llm, verifier=verifier)
            outcomes.append(outcome_of(q, answer))
            items.append(AnsweredItem(suite=SUITE, dataset=key, answer=answer, pack=pack))
            ctx.progress.advance()
        maker = MetricMaker(SUITE, key, _dataset_text(split, titles[split], questions, ci), split=split,
                            resamples=ctx.resamples)
        metrics.extend(split_metrics(maker, outcomes))
        tables.append(reasons_table(split, outcomes))
        curves[split] = curve_rows(outcomes)

    from evaluation.plots import line_plot_svg

    # The score an answer is ranked by: the verifier's answerability when it read, else retrieval confidence.
    score_name = "answerability" if verifier is not None else "confidence"
    svg = line_plot_svg(f"Risk–coverage as the {score_name} threshold rises (SQuAD 2.0)",
                        [(s, [r[1] for r in curves[s]], [r[2] for r in curves[s]]) for s in SPLITS],
                        xlabel="coverage (answers given / questions)", ylabel="risk (wrong / given)")
    tables.append(ReportTable(
        title=f"Risk–coverage over the {score_name} threshold",
        columns=("half", "threshold", "coverage", "risk", "given", "wrong"),
        rows=tuple((s, f"{t:.2f}", f"{c:.3f}", f"{r:.3f}", str(g), str(w))
                   for s in SPLITS for t, c, r, g, w in curves[s]),
        note=f"an answer is given at threshold t when it succeeded with a score ({score_name}) >= t; wrong = unanswerable "
             "answered, or answerable answered without a gold answer"))
    notes = (f"{len(chunks)} chunks from {len(indexed)} articles; questions of both halves are asked over all of "
             f"them; default retrieval and policy; LLM {ctx.llm.get('backend', 'extractive')}.",)
    report = SuiteReport(suite=SUITE, seconds=round(time.perf_counter() - started, 1), metrics=tuple(metrics),
                         tables=tuple(tables), plots=(ReportPlot(title="Risk–coverage (SQuAD 2.0)", svg=svg),),
                         notes=notes)
    return SuiteOutput(report=report, answered=tuple(items))
