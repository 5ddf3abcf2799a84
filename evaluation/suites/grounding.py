"""Grounding: are the citations of every answer the other suites produced right, one citation at a time?

Over the ``success`` answers of the suites run before it (refusal, hallucination, injection, your questions):

* **citation precision** — of all (sentence, cited chunk) pairs, the share where the sentence, cited to that
  one chunk alone, passes the claim checks against it (the validator over a one-chunk pack): the cited span is
  verified in the cited chunk, not merely somewhere in the pack. A sentence citing two chunks where each
  carries half of it counts as two unverified pairs, so precision can fall below what the validator accepted.
* **citation recall** — the share of the answers' factual sentences (not exempt) with at least one verified
  citation.
* **answers citing outside the pack** — ``success`` answers with any citation whose id is not among the pack's
  citable sources (must be 0).
* **citations pointing elsewhere** — citations whose file, pages, section, chunk or document hash differ from
  the provenance of the chunk their id names in the pack: the link a reader clicks must land on the chunk that
  was checked (must be 0).
* **refusals carrying citations** — refused answers that still list citations (must be 0: no answer, no
  references).

The items resampled by the bootstrap are answers (a pooled ratio of pairs per answer), so an answer with many
citations does not count as many independent draws.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict

from contracts import Answer, Citation, ContextPack, GenerationPolicy
from contracts.evaluation import ReportTable, SuiteReport
from evaluation.metrics import MetricMaker
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput

__all__ = ["AnswerGrounding", "citation_verified", "ground_answer", "points_at_its_chunk", "run"]

_MARKER = re.compile(r"\s*\[[^\[\]]*\]")


class AnswerGrounding:
    """Per-answer counts: (sentence, citation) pairs, verified pairs, factual sentences, verified sentences."""

    __slots__ = ("citations", "misdirected", "outside", "pairs", "sentences", "verified_pairs", "verified_sentences")

    def __init__(self, pairs: int, verified_pairs: int, sentences: int, verified_sentences: int, outside: bool,
                 citations: int = 0, misdirected: int = 0):
        self.pairs, self.verified_pairs = pairs, verified_pairs
        self.sentences, self.verified_sentences = sentences, verified_sentences
        self.outside = outside
        self.citations, self.misdirected = citations, misdirected


def _one_chunk_pack(pack: ContextPack, source_id: str) -> ContextPack | None:
    chunk = next((c for c in pack.chunks if c.semantic_id == source_id), None)
    if chunk is None:
        return None
    return pack.model_copy(update={"sources": (source_id,), "chunks": (chunk,), "context_text": chunk.text,
                                   "quarantined": (), "side_by_side": ()})


def citation_verified(sentence: str, source_id: str, pack: ContextPack, policy: GenerationPolicy,
                      verifier=None) -> bool:  # noqa: ANN001
    """The sentence, stripped of its markers and cited to ``source_id`` alone, passes validation against that
    chunk alone. False when the id is not a citable source of the pack."""
    from stages.grounding.validate import validate_answer_text

    if source_id not in pack.sources:
        return False
    single = _one_chunk_pack(pack, source_id)
    if single is None:
        return False
    claim = _MARKER.sub("", sentence).strip().rstrip(".").strip()
    if not claim:
        return False
    return validate_answer_text(f"{claim} [{source_id}].", single, policy, verifier=verifier).status == "success"


def points_at_its_chunk(citation: Citation, pack: ContextPack) -> bool:
    """The citation's file, pages, section, chunk and document are those of the pack chunk its id names."""
    chunk = next((c for c in pack.chunks if c.semantic_id == citation.source_id), None)
    if chunk is None:
        return False
    prov = chunk.provenance
    return (citation.filename, citation.page, citation.page_end, citation.section_id, citation.chunk_id,
            citation.doc_hash) == (prov.filename, prov.page, prov.page_end, prov.section_id, chunk.chunk_id,
                                   prov.doc_hash)


def ground_answer(answer: Answer, pack: ContextPack, policy: GenerationPolicy, verifier=None) -> AnswerGrounding:  # noqa: ANN001
    cited = {c.source_id for c in answer.citations} | {i for s in answer.sentences for i in s.cited_ids}
    outside = bool(cited - set(pack.sources))
    misdirected = sum(not points_at_its_chunk(c, pack) for c in answer.citations)
    pairs = verified_pairs = sentences = verified_sentences = 0
    for report in answer.sentences:
        if report.exempt:
            continue
        sentences += 1
        ok = [citation_verified(report.sentence, sid, pack, policy, verifier) for sid in report.cited_ids]
        pairs += len(ok)
        verified_pairs += sum(ok)
        verified_sentences += any(ok)
    return AnswerGrounding(pairs, verified_pairs, sentences, verified_sentences, outside,
                           len(answer.citations), misdirected)


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...]) -> SuiteOutput:
    started = time.perf_counter()
    from flows.backends import get_verifier

    policy = GenerationPolicy(verify=ctx.verify)
    verifier = get_verifier(ctx.verifier) if policy.verify else None
    success = [item for item in answered if item.answer.status == "success"]
    refused = [item for item in answered if item.answer.status not in ("success", "error")]
    ctx.progress.start("grounding: citations, one by one", len(success))
    rows: list[tuple[AnsweredItem, AnswerGrounding]] = []
    for item in success:
        rows.append((item, ground_answer(item.answer, item.pack, policy, verifier)))
        ctx.progress.advance()
    suites = sorted({item.suite for item in answered})
    make = MetricMaker("grounding", "all", f"the success answers of {', '.join(suites) or 'no suite'} "
                       f"({len(success)} of {len(answered)} answers)", resamples=ctx.resamples)
    metrics = [
        make.ratio("citation precision", [g.verified_pairs for _, g in rows], [g.pairs for _, g in rows]),
        make.ratio("citation recall", [g.verified_sentences for _, g in rows], [g.sentences for _, g in rows]),
        make.rate("answers citing outside the pack", [g.outside for _, g in rows], higher_is_better=False),
        make.ratio("citations pointing elsewhere", [g.misdirected for _, g in rows], [g.citations for _, g in rows],
                   higher_is_better=False),
        MetricMaker("grounding", "refusals", f"the refusals of {', '.join(suites) or 'no suite'} ({len(refused)})",
                    resamples=ctx.resamples).rate("refusals carrying citations",
                                                  [bool(i.answer.citations) for i in refused], higher_is_better=False),
    ]
    per_suite: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
    for item in answered:
        per_suite[item.suite][0] += 1
    for item, g in rows:
        acc = per_suite[item.suite]
        acc[1] += 1
        acc[2] += g.pairs
        acc[3] += g.verified_pairs
        acc[4] += g.sentences
        acc[5] += g.verified_sentences
        acc[6] += g.outside
    table = ReportTable(
        title="Per suite",
        columns=("suite", "answers", "success", "citations", "verified", "precision", "sentences", "recall",
                 "outside the pack"),
        rows=tuple((name, str(a[0]), str(a[1]), str(a[2]), str(a[3]), f"{a[3] / a[2]:.1%}" if a[2] else "–",
                    str(a[4]), f"{a[5] / a[4]:.1%}" if a[4] else "–", str(a[6]))
                   for name, a in sorted(per_suite.items())),
    )
    unverified = [(item, g) for item, g in rows if g.verified_pairs < g.pairs][:8]
    examples = ReportTable(
        title="Unverified citations (first 8 answers)",
        columns=("suite", "question", "answer"),
        rows=tuple((item.suite, item.answer.query[:100], item.answer.answer[:220]) for item, _ in unverified),
    ) if unverified else None
    report = SuiteReport(suite="grounding", seconds=round(time.perf_counter() - started, 1), metrics=tuple(metrics),
                         tables=(table,) + ((examples,) if examples else ()),
                         notes=("A citation is verified when its sentence, cited to that chunk alone, passes the "
                                "claim checks against that chunk alone. The extractive backend quotes one chunk per "
                                "sentence, so its answers verify by construction; the figure tells most for answers "
                                "an LLM wrote (--llm openai).",))
    return SuiteOutput(report=report)
