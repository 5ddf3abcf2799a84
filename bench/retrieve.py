"""Query latency of ``stages.retrieval.retrieve.retrieve`` at scale, next to raw FAISS on the same index, same run.

For each size (default 10k and 100k chunks; add 1000000 with ``--sizes``; building a 1M HNSW takes minutes):
synthetic chunks with normalised 384-d vectors drawn around 2,000 cluster centres (real embeddings are
clustered; uniform random vectors would be the unrealistic worst case for HNSW) and texts of 30 words
sampled from the IPC vocabulary (so BM25 postings look like a statute corpus). Queries are the real IPC
questions, encoded by the real model inside ``retrieve``. Printed per size and index type:

* raw FAISS ``search`` (k=10) on the index's own FAISS object, and raw encode + FAISS search;
* ``retrieve`` end to end (analysis, encode, filtered dense + BM25 search, fusion, result models);
* ``retrieve`` with the query vector precomputed (the lean path's overhead without the encoder);
* HNSW recall@10 against exact search on held-out synthetic queries;
* memory per chunk: FAISS bytes, BM25 bytes and process RSS growth per chunk.

Usage: .venv/bin/python bench/retrieve.py [--sizes 10000 100000 1000000] [--types flat hnsw] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Read by libgomp when it loads: idle OpenMP threads sleep instead of spinning against torch's (see st_embedder).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import faiss  # noqa: E402

from contracts import Chunk, ChunkProvenance, IndexConfig, RetrieveConfig  # noqa: E402
from stages.index.faiss_backend import FaissBm25Index  # noqa: E402
from stages.index.search_index import SearchIndex  # noqa: E402
from stages.retrieval.retrieve import retrieve  # noqa: E402
from stages.text.normalise import search_terms  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
DIM = 384


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic_vectors(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    step = 100_000
    for start in range(0, n, step):
        m = min(step, n - start)
        picks = rng.integers(len(centres), size=m)
        block = centres[picks] + 0.6 * rng.standard_normal((m, DIM), dtype=np.float32) / np.sqrt(DIM)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + m] = block
    return out


def synthetic_chunks(n: int, rng: np.random.Generator, vocabulary: list[str]) -> list[Chunk]:
    words = np.asarray(vocabulary)
    # Zipf-like word frequencies, as in real text.
    weights = 1.0 / np.arange(1, len(words) + 1)
    weights /= weights.sum()
    drawn = rng.choice(len(words), size=(n, 30), p=weights)
    chunks = []
    for i in range(n):
        text = " ".join(words[drawn[i]])
        provenance = ChunkProvenance.model_construct(
            doc_hash="0" * 64, filename="synthetic.txt", doc_code="SYN", page=1 + i // 50, page_end=1 + i // 50,
            char_start=0, char_end=len(text), section_id=str(i), section_title=None, origin="text_file",
            ocr_confidence=None, tenant_id="t1", project_id="p1",
        )
        chunks.append(Chunk.model_construct(semantic_id=f"SYN_{i}_0", chunk_id=f"{i:064d}", content_sha256=f"{i:064x}",
                                            text=text, provenance=provenance, flags=()))
    return chunks


class PrecomputedEmbedder:
    """Returns vectors computed beforehand: measures retrieve's own overhead without the encoder."""

    def __init__(self, inner, memo: dict[str, np.ndarray]) -> None:  # noqa: ANN001
        self.inner, self.memo = inner, memo

    model_name = property(lambda self: self.inner.model_name)
    model_revision = property(lambda self: self.inner.model_revision)
    dim = property(lambda self: self.inner.dim)

    def embed(self, texts):  # noqa: ANN001, ANN201
        return np.vstack([self.memo[t] for t in texts])


def timed(fn, items) -> np.ndarray:  # noqa: ANN001
    out = []
    for item in items:
        started = time.perf_counter()
        fn(item)
        out.append((time.perf_counter() - started) * 1000)
    return np.asarray(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--types", nargs="+", default=["flat", "hnsw"], choices=["flat", "hnsw"])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="torch and FAISS threads (serving setting: 1)")
    args = parser.parse_args()

    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    faiss.omp_set_num_threads(args.threads)
    embedder = SentenceTransformersEmbedder(num_threads=args.threads)
    embedder.warm_up()
    questions = [json.loads(line)["question"] for line in (ROOT / "bench" / "data" / "ipc_questions.jsonl").read_text().splitlines()]
    questions = (questions * (args.queries // len(questions) + 1))[: args.queries]
    memo = {q: v for q, v in zip(dict.fromkeys(questions), embedder.embed(list(dict.fromkeys(questions))), strict=True)}
    records = json.loads((SHARED / "indian-acts-json" / "ipc.json").read_text())
    vocabulary = list(dict.fromkeys(w for r in records for w in search_terms(f"{r['section_title']} {r['section_desc']}")))
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((2_000, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    cfg = RetrieveConfig(top_k=5)
    print(f"faiss {faiss.__version__}, threads {faiss.omp_get_max_threads()} (OMP_WAIT_POLICY="
          f"{os.environ.get('OMP_WAIT_POLICY')}), load avg {os.getloadavg()[0]:.1f}, {len(questions)} queries per row, "
          f"k=10 raw / top_k={cfg.top_k} retrieve (candidate_k={cfg.candidate_k})")
    header = (f"{'chunks':>9} {'index':>5} {'build s':>8} | {'raw faiss p50/p95':>18} | {'encode+faiss':>14} | "
              f"{'retrieve p50/p95':>17} | {'ratio p50':>9} | {'no-encode p50/p95':>17} {'ratio':>6} | "
              f"{'recall@10':>9} | {'B/chunk faiss/bm25/rss':>24}")
    print(header)
    for n in args.sizes:
        base_rss = rss_mb()
        vectors = synthetic_vectors(n, rng, centres)
        chunks = synthetic_chunks(n, rng, vocabulary)
        probe = synthetic_vectors(200, np.random.default_rng(1), centres)
        exact_ids = None
        for index_type in args.types:
            before = rss_mb()
            faiss.omp_set_num_threads(os.cpu_count() or 1)  # build with every core, query with --threads
            started = time.perf_counter()
            index = SearchIndex.build(chunks, vectors, embedding_model=embedder.model_name,
                                      model_revision=embedder.model_revision, cfg=IndexConfig(index_type=index_type))
            _ = index.lexical  # BM25 is built lazily: count it in the build
            build_s = time.perf_counter() - started
            faiss.omp_set_num_threads(args.threads)
            grown_mb = rss_mb() - before
            raw = index._faiss
            params = faiss.SearchParametersHNSW(efSearch=index.cfg.hnsw_ef_search) if index_type == "hnsw" else None
            qv = {q: memo[q].reshape(1, DIM) for q in memo}
            raw_ms = timed(lambda q: raw.search(qv[q], 10, params=params), questions)
            enc_ms = timed(lambda q: raw.search(embedder.embed([q]), 10, params=params), questions)
            backend = FaissBm25Index(index)  # retrieve reads the index through the port
            retrieve(questions[0], backend, embedder, cfg, tenant_id="t1", project_id="p1")  # compile the filter once
            ret_ms = timed(lambda q: retrieve(q, backend, embedder, cfg, tenant_id="t1", project_id="p1"), questions)
            fast = PrecomputedEmbedder(embedder, memo)
            lean_ms = timed(lambda q: retrieve(q, backend, fast, cfg, tenant_id="t1", project_id="p1"), questions)
            if index_type == "flat":
                exact_ids = raw.search(probe, 10)[1]
                recall = 1.0
            else:
                if exact_ids is None:
                    flat = faiss.IndexFlatIP(DIM)
                    flat.add(vectors)
                    exact_ids = flat.search(probe, 10)[1]
                    del flat
                found = raw.search(probe, 10, params=params)[1]
                recall = float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found, exact_ids, strict=True)]))
            blobs = index.to_blobs()
            p = lambda a: f"{np.percentile(a, 50):7.2f}/{np.percentile(a, 95):<7.2f}"  # noqa: E731
            print(f"{n:>9} {index_type:>5} {build_s:8.1f} | {p(raw_ms):>18} | {np.percentile(enc_ms, 50):14.2f} | "
                  f"{p(ret_ms):>17} | {np.percentile(ret_ms, 50) / np.percentile(enc_ms, 50):8.2f}x | "
                  f"{p(lean_ms):>17} {np.percentile(lean_ms, 50) / np.percentile(raw_ms, 50):5.1f}x | {recall:9.3f} | "
                  f"{len(blobs['faiss']) / n:7.0f}/{len(blobs['bm25']) / n:5.0f}/{grown_mb * 2**20 / n:7.0f}",
                  flush=True)
            del index, backend, blobs, raw
        del vectors, chunks
        print(f"  (RSS {rss_mb():.0f} MB, started size at {base_rss:.0f} MB)", flush=True)
    print("ratio p50 = retrieve / (encode + raw FAISS); no-encode ratio = retrieve with a precomputed query vector / raw FAISS")


if __name__ == "__main__":
    main()
