"""all-MiniLM-L6-v2 on ONNX Runtime: the same vectors as the torch encoder on the eval corpora, the same identity,
a graph exported once from the package's weights and checked by its hash, and no torch anywhere on its path."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from stages.adapters import onnx_embedder, onnx_runtime
from stages.adapters.onnx_embedder import OnnxMiniLMEmbedder, ensure_exported
from stages.ports import Embedder

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def _eval_texts(shared: Path) -> list[str]:
    """Texts of the eval corpora: IPC sections (many past the 256-token cut), SQuAD 2.0 paragraphs and questions,
    AILA statutes, the IPC and NCERT question sets, the demo's textbook chapter, and edge cases."""
    ipc = json.loads((shared / "indian-acts-json" / "ipc.json").read_text(encoding="utf-8"))
    texts = [str(s.get("section_desc", "")) for s in ipc[::4]]
    squad = json.loads((shared / "squad2-dev-subset" / "dev-v2.0.json").read_text(encoding="utf-8"))["data"]
    for article in squad[:8]:
        for paragraph in article["paragraphs"][:4]:
            texts.append(paragraph["context"])
            texts.extend(q["question"] for q in paragraph["qas"][:3])
    texts += [p.read_text(encoding="utf-8", errors="replace")[:3000]
              for p in sorted((shared / "aila2019-statutes" / "Object_statutes").glob("S*.txt"))[:20]]
    for name in ("ipc_questions.jsonl", "ncert_questions.jsonl"):
        texts += [json.loads(line)["question"] for line in (ROOT / "bench" / "data" / name).read_text().splitlines()]
    texts += [p for p in (ROOT / "samples" / "corpus" / "ncert_chapter.md").read_text().split("\n\n") if p.strip()]
    texts += ["", "   ", "x", "ﬁnal ﬂow — “quoted” text", "धारा 302 हत्या के लिए दंड", "word " * 700,
              "\tWhoever cheats\n\nshall be punished.  "]
    return texts


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("model-cache")


@pytest.mark.slow
def test_vectors_match_the_torch_encoder_on_the_eval_corpora(real_embedder, torch_embedder, shared_data):
    texts = _eval_texts(shared_data)
    assert len(texts) > 400
    ours, reference = real_embedder.embed(texts), torch_embedder.embed(texts)
    assert ours.shape == reference.shape == (len(texts), 384) and ours.dtype == np.float32
    cosine = np.sum(ours * reference, axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(reference, axis=1))
    assert float(np.max(1.0 - cosine)) < 1e-4  # the bound; measured: ~2e-7 (float32 rounding)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_identity_is_the_torch_encoders(real_embedder, cache_dir):
    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    torch_side = SentenceTransformersEmbedder()
    assert isinstance(real_embedder, OnnxMiniLMEmbedder) and isinstance(real_embedder, Embedder)
    for embedder in (real_embedder, OnnxMiniLMEmbedder(cache_dir)):
        assert (embedder.model_name, embedder.model_revision, embedder.dim) == (
            torch_side.model_name, torch_side.model_revision, torch_side.dim)


def test_batching_and_order_do_not_change_a_vector(real_embedder):
    texts = ["Whoever commits theft shall be punished.", "x", "The common difference of an AP. " * 20, ""]
    together = real_embedder.embed(texts)
    alone = np.vstack([real_embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(real_embedder.embed(texts[::-1]), together[::-1], atol=1e-5)
    assert real_embedder.embed([]).shape == (0, 384)


def test_the_graph_is_exported_once_and_its_record_vouches_for_it(cache_dir):
    path, sha = ensure_exported(cache_dir)
    record = json.loads((path.parent / "model.json").read_text())
    assert record["sha256"] == sha == onnx_runtime.sha256_file(path)
    assert record["model_revision"] == OnnxMiniLMEmbedder(cache_dir).model_revision
    mtime = path.stat().st_mtime_ns
    assert ensure_exported(cache_dir) == (path, sha) and path.stat().st_mtime_ns == mtime, "not written again"
    assert onnx_embedder.export_minilm() == path.read_bytes(), "the export is deterministic"


def test_a_damaged_cached_graph_is_refused_then_written_again(tmp_path):
    cache = tmp_path / "cache"
    path, sha = ensure_exported(cache)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte inside the weights
    path.write_bytes(bytes(data))
    with pytest.raises(onnx_runtime.OnnxModelError, match=re.escape(str(path.resolve()))):
        onnx_runtime.load_session(path, sha)
    embedder = OnnxMiniLMEmbedder(cache, threads=1)
    vector = embedder.embed(["punishment for theft"])
    assert onnx_runtime.sha256_file(path) == sha, "rewritten from the package's weights"
    assert vector.shape == (1, 384) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_construction_loads_nothing_and_concurrent_calls_agree(cache_dir, monkeypatch):
    embedder = OnnxMiniLMEmbedder(cache_dir, threads=1)
    assert embedder._session is None
    texts = [f"question number {i} about wrongful gain" for i in range(6)]
    expected = embedder.embed(texts)
    results: list[np.ndarray] = []

    def worker() -> None:
        results.append(embedder.embed(texts))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.allclose(r, expected, atol=1e-6) for r in results)


def test_encoding_imports_no_torch(cache_dir):
    code = ("import sys; from stages.adapters.onnx_embedder import OnnxMiniLMEmbedder; "
            f"v = OnnxMiniLMEmbedder({str(cache_dir)!r}).embed(['theft']); "
            "print(v.shape, sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "(1, 384) []"
