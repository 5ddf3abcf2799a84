"""The user's own questions over the user's own store: does each get the provision it should?

``--questions FILE`` is JSONL, one object per line::

    {"id": "q1", "question": "What is the punishment for theft?", "expected": ["IPC_379"], "facts": ["three years"]}

``question`` is required; ``expected`` (required) lists what a right answer may cite: a source id
(``IPC_379_0``), a section (``IPC_379``, ``IPC 379`` or ``379``), a doc code (``IPC``) or a file name
(``model_penal_code.pdf``); an empty list means the question should be **refused** (nothing in the store answers
it). ``facts`` (optional) are strings a right answer's text must contain; ``id`` (optional) names the question in
the table (default: its line number). Blank lines are skipped.

Each question is answered exactly as ``citebound api`` answers it: ``flows.answer_flow.answer_question`` (the
answer flow's body without a Prefect flow run) over the store's current index, with the tenant's and project's
standing settings, writing its run record into the store like any other answer. Outcomes: ``right`` (success and a
citation matches an expected entry), ``wrong provision`` (success, no citation matches), ``refused`` (with its
reason code), ``error``. An expected entry matches a citation when, normalised (case ignored, spaces, underscores
and dots dropped), it equals the citation's source id, ``<doc_code>_<section_id>``, the section id alone, the doc
code or the file name.

Metrics: ``right``, ``wrong provision`` and ``refused`` over the questions that expect sources; ``answered
precision`` (right over all answers given, an answer to a should-be-refused question counting as wrong);
``expected refusals refused`` over the should-be-refused questions and ``facts present`` (the right answers, among
those with facts, whose text holds every fact, case and spacing ignored), each only when there are such questions.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contracts import Answer, ArtifactStore, Citation, ContextPack
from contracts.errors import ConfigError
from contracts.evaluation import Metric, ReportTable, SuiteReport
from evaluation.metrics import MetricMaker, contains_phrase
from evaluation.suite import AnsweredItem, EvalContext, SuiteOutput

__all__ = [
    "Outcome",
    "UserQuestion",
    "citation_keys",
    "contains_facts",
    "load_questions",
    "matches",
    "norm_key",
    "outcome_of",
    "question_metrics",
    "questions_table",
    "run",
]

SUITE = "questions"
DATASET_KEY = "own"
_KEY_DROP = re.compile(r"[\s_.]+")


@dataclass(frozen=True)
class UserQuestion:
    line: int
    qid: str
    question: str
    expected: tuple[str, ...]  # empty: the question should be refused
    facts: tuple[str, ...] = ()

    @property
    def expects_refusal(self) -> bool:
        return not self.expected


@dataclass(frozen=True)
class Outcome:
    question: UserQuestion
    kind: str  # "right" | "wrong provision" | "refused" | "error"
    cited: tuple[str, ...]
    reason: str | None
    facts_present: bool | None  # None: not a right answer, or no facts given


# ------------------------------------------------------------------------------------------ input


def _strings(value: object, field: str, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{field}' must be a list of strings")
    return tuple(v.strip() for v in value if v.strip())


def load_questions(path: Path) -> list[UserQuestion]:
    """The questions of a JSONL file; any bad line raises ``ConfigError`` naming the file and the line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read questions file {path}: {exc}") from exc
    out: list[UserQuestion] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{where}: not valid JSON ({exc})") from exc
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: expected a JSON object with 'question' and 'expected'")
        question = row.get("question")
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"{where}: missing 'question' (a non-empty string)")
        if "expected" not in row:
            raise ConfigError(f"{where}: missing 'expected' (a list of sources; [] if the question should be refused)")
        qid = row.get("id", f"line {number}")
        out.append(UserQuestion(line=number, qid=str(qid), question=question.strip(),
                                expected=_strings(row["expected"], "expected", where),
                                facts=_strings(row.get("facts", []), "facts", where)))
    if not out:
        raise ConfigError(f"{path}: no questions (one JSON object per line)")
    return out


# ------------------------------------------------------------------------------------------ scoring


def norm_key(text: str) -> str:
    """Case ignored; spaces, underscores and dots dropped: "IPC 379" == "ipc_379" == "IPC.379"."""
    return _KEY_DROP.sub("", text.lower())


def citation_keys(citation: Citation, doc_code: str | None) -> set[str]:
    """Every normalised name an expected entry may give this citation by."""
    names = [citation.source_id, citation.filename]
    if citation.section_id:
        names.append(citation.section_id)
        if doc_code:
            names.append(f"{doc_code}_{citation.section_id}")
    if doc_code:
        names.append(doc_code)
    return {norm_key(n) for n in names if n}


def matches(expected: Iterable[str], citations: Sequence[Citation], doc_codes: dict[str, str]) -> bool:
    wanted = {norm_key(e) for e in expected}
    return any(wanted & citation_keys(c, doc_codes.get(c.source_id)) for c in citations)


def contains_facts(answer_text: str, facts: Sequence[str]) -> bool:
    """Every fact inside the answer text, case and spacing ignored."""
    return all(contains_phrase(answer_text, f) for f in facts)


def outcome_of(question: UserQuestion, answer: Answer, doc_codes: dict[str, str]) -> Outcome:
    """``doc_codes``: source id -> doc code, from the pack the answer was validated against."""
    cited = tuple(c.source_id for c in answer.citations)
    if answer.status == "error":
        return Outcome(question, "error", cited, answer.reason_code or "error", None)
    if answer.status != "success":
        return Outcome(question, "refused", cited, answer.reason_code or answer.status, None)
    if not matches(question.expected, answer.citations, doc_codes):
        return Outcome(question, "wrong provision", cited, None, None)
    facts = contains_facts(answer.answer, question.facts) if question.facts else None
    return Outcome(question, "right", cited, None, facts)


def question_metrics(maker: MetricMaker, outcomes: Sequence[Outcome]) -> list[Metric]:
    answerable = [o for o in outcomes if not o.question.expects_refusal]
    should_refuse = [o for o in outcomes if o.question.expects_refusal]
    given = [o for o in outcomes if o.kind in ("right", "wrong provision")]
    metrics: list[Metric] = []
    if answerable:
        metrics += [
            maker.rate("right", [o.kind == "right" for o in answerable],
                       note="answered, citing an expected source"),
            maker.rate("wrong provision", [o.kind == "wrong provision" for o in answerable], higher_is_better=False,
                       note="answered, citing none of the expected sources"),
            maker.rate("refused", [o.kind == "refused" for o in answerable], higher_is_better=False,
                       note="questions that expect sources, refused"),
        ]
    if given:
        metrics.append(maker.rate("answered precision", [o.kind == "right" for o in given],
                                  note="right answers over all answers given"))
    if should_refuse:
        metrics.append(maker.rate("expected refusals refused", [o.kind == "refused" for o in should_refuse],
                                  note="questions marked with \"expected\": [] that were refused"))
    with_facts = [o.facts_present for o in outcomes if o.facts_present is not None]
    if with_facts:
        metrics.append(maker.rate("facts present", with_facts,
                                  note="right answers, among those with facts, whose text holds every fact"))
    return metrics


def questions_table(outcomes: Sequence[Outcome]) -> ReportTable:
    rows = tuple((o.question.qid, o.question.question,
                  ", ".join(o.question.expected) or "(refusal)", o.kind, ", ".join(o.cited) or "-",
                  o.reason or ("facts missing" if o.facts_present is False else "")) for o in outcomes)
    return ReportTable(title="Your questions", columns=("id", "question", "expected", "outcome", "cited", "reason"),
                       rows=rows)


# ------------------------------------------------------------------------------------------ the store


def _checked_store(ctx: EvalContext) -> ArtifactStore:
    """The user's store, with a current index holding documents of ``ctx.tenant``/``ctx.project``."""
    from contracts import Catalog
    from flows.ingest_flow import CATALOG_POINTER, INDEX_POINTER

    root = ctx.store_root
    if root is None or not Path(root).is_dir():
        raise ConfigError(f"the questions suite needs a store: {root} is not a folder (--store DIR)")
    store = ArtifactStore(root)
    if store.get_pointer(INDEX_POINTER) is None:
        raise ConfigError(f"store {store.root} has no index yet: ingest documents first (citebound ingest)")
    catalog_ref = store.get_pointer(CATALOG_POINTER)
    entries = store.get(catalog_ref, Catalog).entries if catalog_ref else ()
    if not any(e.tenant_id == ctx.tenant and e.project_id == ctx.project for e in entries):
        raise ConfigError(f"store {store.root} has no documents of tenant {ctx.tenant!r}, project {ctx.project!r}")
    return store


def _pack_of(store: ArtifactStore, answer: Answer) -> ContextPack | None:
    """The pack the answer was validated against, from its run record (None when the run never built one)."""
    if not answer.run_id:
        return None
    try:
        run = store.get_run(answer.run_id)
        ref = next((s.output for s in run.steps if s.stage == "context" and s.output is not None), None)
        return store.get(ref, ContextPack) if ref is not None else None
    except Exception:  # noqa: BLE001 - a missing pack only drops this answer from the grounding suite
        return None


def run(ctx: EvalContext, answered: tuple[AnsweredItem, ...] = ()) -> SuiteOutput:
    """Ask each question of ``ctx.questions_file`` over ``ctx.store_root`` as the API would, and score it."""
    from flows.answer_flow import answer_question

    started = time.perf_counter()
    if ctx.questions_file is None:
        raise ConfigError("the questions suite needs --questions FILE (JSONL: question, expected sources)")
    questions = load_questions(Path(ctx.questions_file))
    store = _checked_store(ctx)
    ctx.progress.start("questions: your questions", len(questions))
    outcomes: list[Outcome] = []
    items: list[AnsweredItem] = []
    for q in questions:
        answer = answer_question(q.question, tenant=ctx.tenant, project=ctx.project, llm=ctx.llm.get("backend"),
                                 llm_model=ctx.llm.get("model"), llm_base_url=ctx.llm.get("base_url") or None,
                                 store=str(store.root), verifier=ctx.verifier)
        pack = _pack_of(store, answer)
        doc_codes = {c.semantic_id: c.provenance.doc_code for c in pack.chunks} if pack else {}
        outcomes.append(outcome_of(q, answer, doc_codes))
        if pack is not None:
            items.append(AnsweredItem(suite=SUITE, dataset=DATASET_KEY, answer=answer, pack=pack))
        ctx.progress.advance()
    n_refuse = sum(q.expects_refusal for q in questions)
    dataset = (f"your questions ({Path(ctx.questions_file).name}: {len(questions)}, {n_refuse} expecting a refusal) "
               f"over store {store.root}, tenant {ctx.tenant}, project {ctx.project}")
    maker = MetricMaker(SUITE, DATASET_KEY, dataset, resamples=ctx.resamples)
    report = SuiteReport(suite=SUITE, seconds=round(time.perf_counter() - started, 1),
                         metrics=tuple(question_metrics(maker, outcomes)), tables=(questions_table(outcomes),),
                         notes=("answered as the API answers (flows.answer_flow.answer_question): the store's "
                                "current index, the project's standing settings; each answer's run record is "
                                "written into the store",))
    return SuiteOutput(report=report, answered=tuple(items))
