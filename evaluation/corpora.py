"""The evaluation corpora and the answer chain, in process: the same stages ``ask`` runs, no Prefect.

Chunks come from the shared data (``indian-acts-json`` records, AILA statutes, files through citebound's own
ingestion stages); vectors are cached in ``cache_dir`` by content hash, model revision and embed config, so a
second run embeds nothing. ``answer_with_pack`` runs retrieve -> context -> precheck -> generate -> validate as
``flows.answer_flow`` chains them and returns the answer with the pack it was checked against.

``bench/`` and ``citebound eval`` both build their corpora here: one implementation.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from contracts import (
    Answer,
    Chunk,
    ChunkProvenance,
    ChunkSet,
    ContextPack,
    EmbedConfig,
    GenerationPolicy,
    IndexConfig,
    RetrieveConfig,
    SourceDocument,
    config_sha256,
)
from contracts._base import sha256_text
from contracts.store import atomic_write

__all__ = [
    "ACTS",
    "PROJECT",
    "QUESTION_SETS",
    "TENANT",
    "MemoEmbedder",
    "act_chunks",
    "aila_chunks",
    "aila_queries",
    "answer_with_pack",
    "build_index",
    "ingested_chunks",
    "ipc_queries",
    "make_record_chunk",
    "ncert_queries",
    "squad_questions",
]

TENANT, PROJECT = "eval", "eval"
ACTS = {"IPC": "ipc.json", "CrPC": "crpc.json", "IEA": "iea.json", "NIA": "nia.json", "CPC": "cpc.json",
        "IDA": "ida.json", "MVA": "MVA.json"}
# The question sets shipped with the repository (written for citebound; see bench/retrieval_eval.py for what
# each set was used for while tuning).
QUESTION_SETS = Path(__file__).resolve().parent.parent / "bench" / "data"
_SAFE = re.compile(r"[^A-Za-z0-9_.#-]+")


def make_record_chunk(
    doc_code: str, filename: str, section: str, title: str, body: str, doc_hash: str, *, heading: bool = True
) -> Chunk:
    """One chunk per statute record ("Section <n>. <title>\\n<text>"), id ``<doc_code>_<section>_0``."""
    text = f"Section {section}. {title}\n{body}".strip() if heading else f"{title}\n{body}".strip()
    provenance = ChunkProvenance(
        doc_hash=doc_hash, filename=filename, doc_code=doc_code, page=1, page_end=1, char_start=0,
        char_end=len(text), section_id=_SAFE.sub("_", section) or None, section_title=title or None,
        origin="json_record", tenant_id=TENANT, project_id=PROJECT,
    )
    semantic_id = f"{doc_code}_{_SAFE.sub('_', section)}_0"
    chunk_id = hashlib.sha256((text + provenance.model_dump_json()).encode()).hexdigest()
    return Chunk(semantic_id=semantic_id, chunk_id=chunk_id, content_sha256=sha256_text(text), text=text,
                 provenance=provenance)


def act_chunks(data_root: Path) -> list[Chunk]:
    """The seven acts of ``indian-acts-json`` (1,931 sections), one chunk per section."""
    chunks: list[Chunk] = []
    for code, name in ACTS.items():
        path = data_root / "indian-acts-json" / name
        data = path.read_bytes()
        doc_hash = hashlib.sha256(data).hexdigest()
        seen: set[str] = set()
        for record in json.loads(data):
            section = str(record.get("Section", record.get("section", ""))).strip()
            title = str(record.get("section_title", record.get("title", "")) or "").strip()
            body = str(record.get("section_desc", record.get("description", "")) or "").strip()
            if not (title or body) or not section or section in seen:
                continue
            seen.add(section)
            chunks.append(make_record_chunk(code, name, section, title, body, doc_hash))
    return chunks


def aila_chunks(data_root: Path) -> list[Chunk]:
    chunks = []
    for line in (data_root / "aila2019-statutes" / "beir" / "corpus.jsonl").read_text().splitlines():
        record = json.loads(line)
        text = f"{record['title']}\n{record['text']}"
        chunks.append(make_record_chunk("AILA", "corpus.jsonl", record["_id"], record["title"], record["text"],
                                        sha256_text(text), heading=False))
    return chunks


def aila_queries(data_root: Path) -> list[tuple[str, str, set[str]]]:
    """(query id, fact pattern, relevant ``AILA_<statute>`` ids) for the 50 AILA 2019 queries."""
    base = data_root / "aila2019-statutes" / "beir"
    queries = {json.loads(l)["_id"]: json.loads(l)["text"] for l in (base / "queries.jsonl").read_text().splitlines()}
    relevant: dict[str, set[str]] = {}
    for split in ("train.tsv", "test.tsv"):
        for line in (base / "qrels" / split).read_text().splitlines()[1:]:
            qid, doc, score = line.split("\t")
            if int(score) > 0:
                relevant.setdefault(qid, set()).add(doc)
    return [(qid, queries[qid], {f"AILA_{d}" for d in relevant[qid]})
            for qid in sorted(queries, key=lambda q: int(q.split("Q")[-1]))]


def ipc_queries(split: str = "dev") -> list[tuple[str, str, set[str]]]:
    """(id, question, {``IPC_<section>``}) of one split of ``bench/data/ipc_questions.jsonl``."""
    rows = [json.loads(l) for l in (QUESTION_SETS / "ipc_questions.jsonl").read_text().splitlines() if l]
    return [(r["id"], r["question"], {f"IPC_{r['section']}"}) for r in rows if r.get("split", "dev") == split]


def ncert_queries() -> list[tuple[str, str, set[str]]]:
    """Short textbook questions over NCERT Class 10 Maths ch. 5 (``jemh105.pdf``), each with its section."""
    rows = [json.loads(l) for l in (QUESTION_SETS / "ncert_questions.jsonl").read_text().splitlines() if l]
    return [(r["id"], r["question"], {f"jemh105_{r['section']}"}) for r in rows]


def squad_questions(data_root: Path, n: int) -> list[str]:
    """``n`` SQuAD 2.0 questions spread evenly over the file: off-topic for a statute corpus."""
    data = json.loads((data_root / "squad2-dev-subset" / "dev-v2.0.json").read_text())
    questions = [qa["question"] for article in data["data"] for para in article["paragraphs"] for qa in para["qas"]]
    return questions[:: max(1, len(questions) // n)][:n]


def ingested_chunks(files: dict[Path, str | None], *, tenant: str = TENANT, project: str = PROJECT) -> list[Chunk]:
    """Chunks of real files through citebound's own ingestion stages (extract, clean, structure, chunk,
    injection scan), each under the doc code given (None: derived from the file name)."""
    from contracts import ChunkConfig, CleanConfig, ExtractConfig
    from stages.ingest.chunk import chunk_document
    from stages.ingest.clean import clean_document
    from stages.ingest.extract import extract_document, make_source_document
    from stages.ingest.injection import flag_injections

    chunks: list[Chunk] = []
    for path, code in files.items():
        data = path.read_bytes()
        source = make_source_document(str(path), data, doc_code=code, tenant_id=tenant, project_id=project)
        cleaned = clean_document(extract_document(source, data, ExtractConfig(), None), CleanConfig())
        chunks.extend(flag_injections(chunk_document(cleaned, ChunkConfig())).chunks)
    return chunks


class MemoEmbedder:
    """Wraps an embedder and remembers query vectors, so a question asked twice is encoded once."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.memo: dict[str, np.ndarray] = {}

    model_name = property(lambda self: self.inner.model_name)
    model_revision = property(lambda self: self.inner.model_revision)
    dim = property(lambda self: self.inner.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing), strict=True):
                self.memo[t] = v
        return np.vstack([self.memo[t] for t in texts])


def build_index(
    chunks: list[Chunk],
    embedder,  # noqa: ANN001
    cache_dir: Path,
    embed_cfg: EmbedConfig | None = None,
    index_cfg: IndexConfig | None = None,
    *,
    tenant: str = TENANT,
    project: str = PROJECT,
    index_uri: str | None = None,
):  # noqa: ANN201
    """An index (``IndexBackend``) over ``chunks``; vectors come from ``cache_dir`` when their text was embedded
    before. ``index_uri`` (``flows.index_backends.index_target``): FAISS in memory by default, or a fresh Milvus
    collection named after the corpus."""
    from flows.index_backends import index_target
    from flows.index_writes import build_backend
    from stages.ingest.embed import embed_chunks

    embed_cfg = embed_cfg or EmbedConfig()
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Cached vectors depend on the model and on EmbedConfig (title mixing): both go into the file name.
    key = f"{embedder.model_revision}|{config_sha256(embed_cfg)}"
    cache_file = cache_dir / f"vectors-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"
    cache: dict[str, np.ndarray] = {}
    if cache_file.exists():
        with np.load(cache_file) as npz:
            cache = {k: npz[k] for k in npz.files}
    source = SourceDocument(path="eval", filename="eval", sha256="0" * 64, size_bytes=0,
                            media_type="application/json", doc_code="EVAL", tenant_id=tenant, project_id=project)
    started = time.perf_counter()
    vectors = embed_chunks(ChunkSet(source=source, chunks=tuple(chunks)), embedder, embed_cfg, cache=cache)
    new = {c.content_sha256: v for c, v in zip(chunks, vectors, strict=True) if c.content_sha256 not in cache}
    if new:
        print(f"  embedded {len(new)} chunks in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        buf = io.BytesIO()
        np.savez(buf, **{**cache, **new})
        # Atomic, through a unique temp file: a killed run, or a second eval sharing the cache, leaves a whole file.
        atomic_write(cache_file, buf.getvalue())
    cfg = index_cfg or IndexConfig()
    corpus = hashlib.sha256("\n".join(c.chunk_id for c in chunks).encode() + config_sha256(cfg).encode()).hexdigest()
    return build_backend(chunks, vectors, target=index_target(index_uri), collection=f"citebound_eval_{corpus[:16]}",
                         cfg=cfg, embedding_model=embedder.model_name, model_revision=embedder.model_revision)


def answer_with_pack(
    question: str,
    index,  # noqa: ANN001
    embedder,  # noqa: ANN001
    cfg: RetrieveConfig,
    policy: GenerationPolicy,
    llm,  # noqa: ANN001
    *,
    verifier=None,  # noqa: ANN001
    tenant: str = TENANT,
    project: str = PROJECT,
    reranker=None,  # noqa: ANN001
) -> tuple[Answer, ContextPack]:
    """One question through the answer stages in ``flows.answer_flow``'s order; the answer and its pack.
    ``verifier`` reads the evidence when ``policy.verify`` (the answer chain always passes one then)."""
    from stages.generation.generate import generate_draft
    from stages.grounding.answerability import score_answerability
    from stages.grounding.precheck import precheck_pack
    from stages.grounding.validate import validate_draft
    from stages.retrieval.context import build_context_pack
    from stages.retrieval.retrieve import retrieve

    result = retrieve(question, index, embedder, cfg, tenant_id=tenant, project_id=project, reranker=reranker)
    pack = build_context_pack(result, cfg, policy)
    report = score_answerability(pack, policy, verifier)
    refusal = precheck_pack(pack, policy, embedder, report)
    if refusal is not None:
        return refusal, pack
    draft = generate_draft(pack, llm, policy, report)
    return validate_draft(draft, pack, policy, verifier=verifier, answerability=report), pack
