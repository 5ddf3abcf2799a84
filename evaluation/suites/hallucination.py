"""Hallucination suite: does citebound's validator refuse hallucinated answers and keep the right ones?

**HaluEval QA** (``halueval-qa/qa_one-turn_data.json``, 500 records, JSON Lines). Items 0-249 are the dev half,
250-499 the held-out half (reported, never used to choose anything). Each record becomes a one-chunk
ContextPack (``HQA_<n>_0`` holding its ``knowledge``; the pack's query is its ``question``) and both its right
and its hallucinated answer are validated against it with the default ``GenerationPolicy``, in two forms:

* **short**: the answer as HaluEval gives it, cited: ``"Delhi [HQA_1_0]."``;
* **sentence**: a full sentence made mechanically from question + answer: the question without its question
  mark, a colon, the answer (``"... has a head office in what city: Delhi [HQA_1_0]."``); a bare yes/no becomes
  ``"No — were A and B known for the same type of work [HQA_27_0]."``. The same rule for both answers.

Positive = hallucinated; a refusal of any kind is a "hallucinated" verdict. The **baseline** is the ten-line
rule (refuse an answer having a word found in neither the question nor the knowledge), scored on the same
items under its own dataset key (``halueval_<split>_baseline``) and beside citebound in a table: it is what a
validator has to beat to be worth its code, not a figure of citebound.

**RAGTruth sample** (``ragtruth-sample``, 6 responses by real LLMs, 3 hallucinated; packs and mechanical
citations from ``evaluation.ragtruth``): the same detection metrics (six items: the interval says how little
they show) and a per-item table.

The whole suite validates ~2,000 short texts in about a second, so the ci subset runs it whole.
"""

from __future__ import annotations

import collections
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contracts import Answer, ContextPack, GenerationPolicy
from contracts.errors import ConfigError
from contracts.evaluation import Metric, ReportTable, SuiteReport
from evaluation.metrics import MetricMaker, detection_counts
from evaluation.packs import make_chunk, make_pack
from evaluation.ragtruth import load_ragtruth
from evaluation.splits import HALUEVAL
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput
from stages.grounding.validate import validate_answer_text

__all__ = ["SPLITS", "HaluVerdict", "halueval_items", "run", "sentence_form", "short_form", "ten_line_rule"]

SUITE = "hallucination"
SPLITS = HALUEVAL  # evaluation.splits: 0-249 dev, 250-499 held
FORMS = ("short", "sentence")
_WORD = re.compile(r"[a-z0-9]+")


def halueval_items(data_root: Path, split: str) -> list[tuple[int, dict]]:
    """(record number, record) of one half of the HaluEval QA file."""
    path = data_root / "halueval-qa" / "qa_one-turn_data.json"
    if not path.is_file():
        raise ConfigError(f"HaluEval QA file missing: {path}")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(n, rows[n]) for n in SPLITS[split] if n < len(rows)]


def short_form(answer: str, source_id: str) -> str:
    return f"{answer.strip().rstrip('.')} [{source_id}]."


def sentence_form(question: str, answer: str, source_id: str) -> str:
    """The answer as a whole sentence built from the question, so the validator sees a claim, not a phrase."""
    asked = question.strip().rstrip("?").strip()
    reply = answer.strip().rstrip(".")
    if reply.lower() in ("yes", "no"):
        return f"{reply.capitalize()} — {asked[:1].lower()}{asked[1:]} [{source_id}]."
    return f"{asked}: {reply} [{source_id}]."


def ten_line_rule(question: str, knowledge: str, answer: str) -> bool:
    """The baseline. True = refuse: the answer has a word found in neither the question nor the knowledge."""
    known = set(_WORD.findall(question.lower())) | set(_WORD.findall(knowledge.lower()))
    return bool(set(_WORD.findall(answer.lower())) - known)


@dataclass(frozen=True)
class HaluVerdict:
    """One validated answer: which record, which form, whether it was the hallucinated one, what came back."""

    item: int
    form: str
    hallucinated: bool
    answer: Answer
    pack: ContextPack

    @property
    def flagged(self) -> bool:
        return self.answer.status != "success"


def validate_halueval(items: Sequence[tuple[int, dict]], policy: GenerationPolicy, progress=None, verifier=None) \
        -> tuple[list[HaluVerdict], list[tuple[bool, bool]]]:  # noqa: ANN001
    """Every record's two answers in both forms through the validator, and the baseline's (truth, flagged)."""
    verdicts: list[HaluVerdict] = []
    baseline: list[tuple[bool, bool]] = []
    for n, row in items:
        source_id = f"HQA_{n}_0"
        pack = make_pack(row["question"], [make_chunk(source_id, row["knowledge"])])
        for hallucinated, text in ((False, row["right_answer"]), (True, row["hallucinated_answer"])):
            for form, cited in (("short", short_form(text, source_id)),
                                ("sentence", sentence_form(row["question"], text, source_id))):
                verdicts.append(HaluVerdict(n, form, hallucinated,
                                            validate_answer_text(cited, pack, policy, verifier=verifier), pack))
            baseline.append((hallucinated, ten_line_rule(row["question"], row["knowledge"], text)))
        if progress is not None:
            progress.advance()
    return verdicts, baseline


def halueval_metrics(maker: MetricMaker, truth: Sequence[bool], flagged: Sequence[bool], note: str | None = None) \
        -> list[Metric]:
    """Detection (positive = hallucinated) and the share of right answers kept (not refused)."""
    kept = [not f for t, f in zip(truth, flagged, strict=True) if not t]
    return [*maker.detection(truth, flagged, note=note), maker.rate("right answers kept", kept, note=note)]


def reason_table(split: str, verdicts: Sequence[HaluVerdict]) -> ReportTable:
    """Per reason code and form: hallucinated answers it caught, right answers it refused."""
    counts: dict[tuple[str, str, bool], int] = collections.Counter(
        (v.answer.reason_code or "accepted", v.form, v.hallucinated) for v in verdicts)
    codes = sorted({code for code, _, _ in counts}, key=lambda c: (c == "accepted", c))
    rows = tuple((code, *(str(counts.get((code, form, h), 0)) for form in FORMS for h in (True, False)))
                 for code in codes)
    return ReportTable(
        title=f"HaluEval QA {split} half: outcome per failing check (the first failing check's reason code)",
        columns=("reason code", "short: hallucinated caught", "short: right refused",
                 "sentence: hallucinated caught", "sentence: right refused"),
        rows=rows, note="'accepted' = not refused: hallucinated answers missed, right answers kept.")


def comparison_table(split: str, rows_in: dict[str, list[tuple[bool, bool]]]) -> ReportTable:
    rows = []
    for label, pairs in rows_in.items():
        c = detection_counts([t for t, _ in pairs], [f for _, f in pairs])
        right = c.tn + c.fp
        rows.append((label, f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}", f"{c.balanced_accuracy:.3f}",
                     f"{c.tn / right:.1%}" if right else "-", str(c.tp), str(c.fp), str(c.fn)))
    return ReportTable(
        title=f"HaluEval QA {split} half: citebound's validator vs the ten-line rule (baseline)",
        columns=("method", "precision", "recall", "F1", "balanced acc.", "right kept", "TP", "FP", "FN"),
        rows=tuple(rows),
        note="Positive = hallucinated. The ten-line rule is the baseline, not citebound: it refuses an answer "
             "having any word found in neither the question nor the knowledge (scored on the bare answer).")


def ragtruth_part(ctx: EvalContext, policy: GenerationPolicy, verifier=None) \
        -> tuple[list[Metric], ReportTable, list[AnsweredItem]]:  # noqa: ANN001
    items = load_ragtruth(ctx.data_root / "ragtruth-sample")
    ctx.progress.start("hallucination: RAGTruth sample", len(items))
    rows, truth, flagged, answered = [], [], [], []
    for item in items:
        answer = validate_answer_text(item.answer, item.pack, policy, verifier=verifier)
        failing = [report for report in answer.sentences if any(not c.passed for c in report.checks)]
        labelled = [r for r in answer.sentences
                    if any(span[:40] in r.sentence or r.sentence[:40] in span for span in item.labels)]
        labelled_failing = sum(1 for r in labelled if r in failing)
        truth.append(item.hallucinated)
        flagged.append(answer.status != "success")
        answered.append(AnsweredItem(SUITE, "ragtruth", answer, item.pack))
        rows.append((item.response_id, item.task_type, "hallucinated" if item.hallucinated else "clean",
                     answer.status, answer.reason_code or "accepted", f"{len(failing)} of {len(answer.sentences)}",
                     f"{labelled_failing} of {len(labelled)}" if item.labels else "-"))
        ctx.progress.advance()
    n_bad = sum(truth)
    maker = MetricMaker(SUITE, "ragtruth", f"RAGTruth sample: {len(items)} LLM responses ({n_bad} hallucinated), "
                        "cited mechanically to their source passages", "all", ctx.resamples)
    metrics = halueval_metrics(maker, truth, flagged, note="six items: a fixture more than a benchmark")
    table = ReportTable(
        title="RAGTruth sample: verdict per response",
        columns=("response", "task", "label", "status", "reason code", "sentences failing a check",
                 "labelled sentences failing a check"),
        rows=tuple(rows),
        note="A labelled sentence is one overlapping a RAGTruth hallucination span; the verdict is the whole "
             "answer's (any failing sentence refuses it).")
    return metrics, table, answered


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...] = ()) -> SuiteOutput:
    """HaluEval QA dev and held halves (both forms, and the baseline) and the RAGTruth sample."""
    started = time.perf_counter()
    from flows.backends import get_verifier

    policy = GenerationPolicy(verify=ctx.verify)
    verifier = get_verifier(ctx.verifier) if policy.verify else None
    metrics: list[Metric] = []
    tables: list[ReportTable] = []
    produced: list[AnsweredItem] = []
    timings = []
    ci = " (ci slice: the whole set, it takes about a second)" if ctx.subset == "ci" else ""
    for split, span in SPLITS.items():
        items = halueval_items(ctx.data_root, split)
        ctx.progress.start(f"hallucination: HaluEval {split}", len(items))
        t0 = time.perf_counter()
        verdicts, baseline = validate_halueval(items, policy, ctx.progress, verifier)
        timings.append(f"HaluEval {split}: {len(verdicts)} validations in {time.perf_counter() - t0:.1f} s")
        words = f"HaluEval QA, {split} half (records {span.start}-{span.stop - 1}): {len(items)} right + " \
                f"{len(items)} hallucinated answers"
        compared: dict[str, list[tuple[bool, bool]]] = {}
        for form in FORMS:
            mine = [v for v in verdicts if v.form == form]
            maker = MetricMaker(SUITE, f"halueval_{split}_{form}", f"{words}, {form} form, cited to the knowledge "
                                f"chunk{ci}", split, ctx.resamples)
            metrics += halueval_metrics(maker, [v.hallucinated for v in mine], [v.flagged for v in mine])
            compared[f"citebound validate ({form})"] = [(v.hallucinated, v.flagged) for v in mine]
            produced += [AnsweredItem(SUITE, f"halueval_{split}_{form}", v.answer, v.pack) for v in mine]
        base = MetricMaker(SUITE, f"halueval_{split}_baseline", f"BASELINE, not citebound: the ten-line rule on "
                           f"{words}{ci}", split, ctx.resamples)
        metrics += halueval_metrics(base, [t for t, _ in baseline], [f for _, f in baseline],
                                    note="baseline (ten-line word rule), not citebound")
        compared["ten-line rule (baseline)"] = baseline
        tables += [comparison_table(split, compared), reason_table(split, verdicts)]
    rt_metrics, rt_table, rt_answered = ragtruth_part(ctx, policy, verifier)
    metrics += rt_metrics
    tables.append(rt_table)
    produced += rt_answered
    report = SuiteReport(suite=SUITE, seconds=time.perf_counter() - started, metrics=tuple(metrics),
                         tables=tuple(tables), notes=("Positive = hallucinated; any refusal counts as flagged. "
                                                      "Default GenerationPolicy, no LLM: the answers are given.",
                                                      *timings))
    return SuiteOutput(report=report, answered=tuple(produced))
