"""The ``reader-questions`` flow: statutes -> provisions -> questions a local instruct model writes for each.

1. **provisions**: each statute file is read and hash-recorded (the BNS PDF with its *Illustrations*, the Acts of
   the civictech JSON), and parsed by ``stages.training.provisions``.
2. **requests**: one per illustration (rewritten as a lay question) and one per provision without illustrations
   (``stages.training.question_writer``), in a fixed order: illustrations first, then the codes in the order
   given. ``limit`` bounds a run; a later run goes on where it stopped.
3. **generate**: each request goes through citebound's text port (``stages.ports.TextGenerator``) to the model
   on loopback. Its raw reply is stored as a ``QuestionBatch`` under a key of the model's sha256, the request
   and the text it was made from: a stopped run resumes without asking again, and the same model, prompt and
   text never cost a second generation.
4. **export**: every batch of the plan is re-read and re-parsed by today's rules (they may change without
   regenerating), and the kept questions are written as JSON lines with a ``QuestionSetCard`` (generator,
   prompts, seed, sources, counts, the file's sha256).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contracts._base import content_sha256, sha256_bytes
from contracts.questions import CompletionRequest, Provision, QuestionBatch, QuestionOrigin, QuestionSetCard
from contracts.store import ArtifactStore, atomic_write
from flows.lazy_prefect import flow
from stages.ports import TextGenerator
from stages.training.provisions import json_provisions, statute_provisions
from stages.training.question_writer import (
    SEED,
    TEMPERATURE,
    parse_questions,
    prompt_sha256,
    question_request,
    scenario_question,
)
from stages.text.units import split_sentences

__all__ = ["StatuteSource", "QuestionJob", "QuestionPlan", "reader_questions_flow", "read_provisions", "plan_jobs",
           "generate_questions", "export_questions"]

STAGE = "reader-questions"
STAGE_VERSION = "reader-questions.v1"
_DEFINING = re.compile(r"(?i)\b(definitions?|general explanations?|interpretation)\b")


@dataclass(frozen=True)
class StatuteSource:
    code: str
    path: Path
    """A PDF (parsed for sections and illustrations) or a civictech JSON file."""


@dataclass(frozen=True)
class QuestionJob:
    provision: Provision
    origin: QuestionOrigin
    seed_text: str

    def request(self) -> CompletionRequest:
        return question_request(self.provision, self.origin, self.seed_text)

    def key(self, model_sha256: str, request: CompletionRequest | None = None) -> str:
        request = request or self.request()
        return content_sha256({"stage": STAGE, "model": model_sha256, "request": request.model_dump(mode="json"),
                               "provision": self.provision.key, "seed_text": self.seed_text})


def _pdf_text(path: Path) -> str:
    import pymupdf

    with pymupdf.open(path) as doc:
        return "\n".join(page.get_text() for page in doc)


def read_provisions(sources: Sequence[StatuteSource]) -> tuple[tuple[Provision, ...], tuple[tuple[str, str], ...]]:
    """(every provision of every source, (file name, sha256) of each file read)."""
    provisions: list[Provision] = []
    hashes: list[tuple[str, str]] = []
    for source in sources:
        data = source.path.read_bytes()
        hashes.append((source.path.name, sha256_bytes(data)))
        if source.path.suffix.lower() == ".pdf":
            provisions.extend(statute_provisions(source.code, _pdf_text(source.path)))
        else:
            provisions.extend(json_provisions(source.code, json.loads(data)))
    return tuple(provisions), tuple(hashes)


def plan_jobs(provisions: Sequence[Provision]) -> list[QuestionJob]:
    """Every illustration first (the drafters' scenarios are the best seeds), then provisions without any."""
    # Illustrations of definitions ("a Municipal Commissioner is a public servant") make weak lay questions:
    # asked last, after every scenario of an offence or an exception.
    defining = [p for p in provisions if _DEFINING.search(p.title)]
    ordered = [p for p in provisions if not _DEFINING.search(p.title)] + defining
    illustrated = [QuestionJob(p, "illustration", item) for p in ordered for item in p.illustrations]
    plain = [QuestionJob(p, "provision", p.text) for p in provisions if not p.illustrations and len(p.text) > 60]
    return illustrated + plain


def _batch(store: ArtifactStore, key: str) -> QuestionBatch | None:
    ref = store.cached(key)
    return store.get(ref, QuestionBatch) if ref is not None else None


def generate_questions(store: ArtifactStore, jobs: Sequence[QuestionJob], generator: TextGenerator,
                       model_sha256: str, *, limit: int | None = None,
                       progress: Callable[[int, int, QuestionBatch], None] | None = None) -> tuple[int, int]:
    """Ask the generator for every job not yet stored (at most ``limit`` new ones): (asked now, already stored)."""
    asked = stored = 0
    for job in jobs:
        request = job.request()
        key = job.key(model_sha256, request)
        if store.cached(key) is not None:
            stored += 1
            continue
        if limit is not None and asked >= limit:
            break
        started = time.perf_counter()
        raw = generator.complete(request).text
        kept, dropped = parse_questions(raw, job.provision, job.origin, job.seed_text)
        batch = QuestionBatch(provision_key=job.provision.key, origin=job.origin, model_sha256=model_sha256,
                              request_sha256=content_sha256(request), raw=raw, questions=kept, dropped=dropped,
                              seconds=round(time.perf_counter() - started, 2))
        ref = store.put(batch, stage=STAGE, stage_version=STAGE_VERSION, config_sha256=content_sha256(request))
        store.remember(key, ref)
        asked += 1
        if progress is not None:
            progress(asked, len(jobs), batch)
    return asked, stored


def export_questions(store: ArtifactStore, jobs: Sequence[QuestionJob], model_sha256: str, generator_name: str,
                     sources: tuple[tuple[str, str], ...], out_file: Path, card_file: Path) -> QuestionSetCard:
    """The stored batches of ``jobs``, re-parsed by today's rules, as JSON lines and their card."""
    rows: list[dict] = []
    dropped: Counter[str] = Counter()
    by_origin: Counter[str] = Counter()
    seconds, requests = 0.0, 0
    seen: set[tuple[str, str]] = set()
    # Rule-made scenario questions first: one per illustration, no model involved.
    for job in jobs:
        if job.origin == "illustration":
            made = scenario_question(job.provision, job.seed_text, split_sentences)
            if made is None:
                dropped["scenario_without_facts"] += 1
            elif (made.question, made.section) not in seen:
                seen.add((made.question, made.section))
                by_origin[made.origin] += 1
                rows.append(made.model_dump(mode="json"))
    for job in jobs:
        batch = _batch(store, job.key(model_sha256))
        if batch is None:
            continue
        requests += 1
        seconds += batch.seconds
        kept, lost = parse_questions(batch.raw, job.provision, job.origin, job.seed_text)
        dropped.update(d.rule for d in lost)
        for question in kept:
            if (question.question, question.section) in seen:
                dropped["duplicate"] += 1
                continue
            seen.add((question.question, question.section))
            by_origin[question.origin] += 1
            rows.append(question.model_dump(mode="json"))
    data = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows).encode()
    atomic_write(out_file, data)
    card = QuestionSetCard(
        generator=generator_name, generator_sha256=model_sha256,
        prompt_sha256=(("illustration", prompt_sha256("illustration")), ("provision", prompt_sha256("provision"))),
        seed=SEED, temperature=TEMPERATURE, sources=sources,
        provisions=len({job.provision.key for job in jobs}), requests=requests, questions=len(rows),
        dropped_by_rule=tuple(sorted(dropped.items())), by_origin=tuple(sorted(by_origin.items())),
        file=out_file.name, file_sha256=sha256_bytes(data), generation_seconds=round(seconds, 1))
    atomic_write(card_file, (card.model_dump_json(indent=1) + "\n").encode())
    return card


@dataclass(frozen=True)
class QuestionPlan:
    """One generation run, resolved at the edge."""

    store_root: Path
    sources: tuple[StatuteSource, ...]
    model_cache: Path
    out_file: Path
    card_file: Path
    threads: int = 2
    limit: int | None = None


@flow(name="reader-questions", persist_result=False, log_prints=False)
def reader_questions_flow(plan: QuestionPlan, progress: Callable[[int, int, QuestionBatch], None] | None = None
                          ) -> QuestionSetCard:
    """Assemble the generator, serve it on loopback for the run, generate what is not stored, export the set."""
    from flows.question_model import GENERATOR, assemble_generator, llama_server
    from stages.adapters.openai_llm import OpenAILLM

    store = ArtifactStore(plan.store_root)
    provisions, hashes = read_provisions(plan.sources)
    jobs = plan_jobs(provisions)
    model_path = assemble_generator(plan.model_cache)
    pending = sum(1 for job in jobs if store.cached(job.key(GENERATOR.sha256)) is None)
    if pending and plan.limit != 0:
        with llama_server(model_path, GENERATOR.sha256, threads=plan.threads,
                          log_path=plan.store_root / "logs" / "llama_server.log") as server:
            generator = OpenAILLM("local", base_url=server.base_url, timeout=600.0)
            generate_questions(store, jobs, generator, GENERATOR.sha256, limit=plan.limit, progress=progress)
    return export_questions(store, jobs, GENERATOR.sha256, GENERATOR.name, hashes, plan.out_file, plan.card_file)
