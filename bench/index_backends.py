"""The index backends side by side, in one run: FAISS + BM25 in process and Milvus on a ``milvus-lite server``.

For each size (default 10k and 100k chunks) and backend, on the same data: synthetic chunks as ``bench/retrieve.py``
makes them (normalised 384-d vectors around 2,000 cluster centres, 30-word texts from the IPC vocabulary), split
between two tenants (queries search one: half the index), HNSW (M 32, efConstruction 80, ef 64) on both:

* build: the index from records and vectors (FAISS + BM25 in memory; Milvus: a fresh collection, upserts in
  batches of 500, loaded and searched once), and the records themselves (BM25 terms, provision kinds: shared);
* memory: this process's RSS growth (FAISS), the server process's RSS (Milvus, plus the client's growth);
* queries (the real IPC questions, vectors encoded once beforehand): the port's dense, lexical and hybrid
  search (k=50, one tenant's scope), ``retrieve`` end to end without the encoder (top_k 5, candidate_k 50), and
  the raw library call beside them (FAISS ``search`` k=50 with the tenant's selector; ``MilvusClient.search``
  k=50 with the tenant filter and no output fields): p50/p95 in ms;
* dense recall@10 against exact search on 200 held-out probes.

Then ingestion into the server: the same documents (``--docs`` documents of n/docs chunks) written by one writer
(this process, one document after another) and by 2 Dask worker processes writing their own documents at once,
each making its documents' records and upserting them (``MilvusIndex.upsert``, what ingest workers call).

milvus-lite is a pure-Python reimplementation of the Milvus protocol: its figures are milvus-lite's, not Milvus
Standalone's. The machine is shared (load average printed at start and end).

Usage: .venv/bin/python bench/index_backends.py [--sizes 10000 100000] [--queries 100] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# bench.retrieve sets the environment (offline, passive OpenMP threads) before anything heavy is imported.
from bench.retrieve import (  # noqa: E402
    DIM,
    ROOT,
    SHARED,
    PrecomputedEmbedder,
    rss_mb,
    synthetic_chunks,
    synthetic_vectors,
    timed,
)
from contracts import IndexConfig, IndexScope, RetrieveConfig  # noqa: E402
from stages.retrieval.retrieve import retrieve  # noqa: E402
from stages.text.normalise import search_terms as tokenize  # noqa: E402

CFG = IndexConfig(index_type="hnsw")
SCOPE = IndexScope(tenant_id="t1", project_id="p1")
K = 50


def two_tenants(chunks):  # noqa: ANN001, ANN201
    """Every other chunk to tenant t2 (queries search t1: half the index)."""
    out = []
    for i, chunk in enumerate(chunks):
        if i % 2:
            chunk = chunk.model_copy(update={"provenance": chunk.provenance.model_copy(update={"tenant_id": "t2"}),
                                             "chunk_id": f"t2{chunk.chunk_id[2:]}"})
        out.append(chunk)
    return out


def server_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: np.ndarray) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 3), "p95": round(float(np.percentile(values, 95)), 3)}


def measure(backend, name: str, questions, memo, embedder, probes, exact, raw_ms) -> dict:  # noqa: ANN001
    """Query latencies and recall of one built backend."""
    from stages.retrieval.query_analysis import analyze_query

    terms = {q: list(dict.fromkeys(tokenize(" ".join(analyze_query(q).keywords)) or tokenize(q))) for q in memo}
    fast = PrecomputedEmbedder(embedder, memo)
    cfg = RetrieveConfig(top_k=5)
    retrieve(questions[0], backend, fast, cfg, tenant_id="t1", project_id="p1")  # warm caches and filters
    row = {
        "dense": pct(timed(lambda q: backend.dense_search(memo[q], K, scope=SCOPE), questions)),
        "lexical": pct(timed(lambda q: backend.lexical_search(terms[q], K, scope=SCOPE), questions)),
        "hybrid": pct(timed(lambda q: backend.hybrid_search(memo[q], terms[q], K, scope=SCOPE), questions)),
        "retrieve": pct(timed(lambda q: retrieve(q, backend, fast, cfg, tenant_id="t1", project_id="p1"), questions)),
        "raw": pct(raw_ms),
    }
    found = [[e.chunk.chunk_id for e in backend.dense_search(p, 10, scope=SCOPE).entries] for p in probes]
    row["recall_at_10"] = round(float(np.mean([len(set(f) & set(x)) / 10 for f, x in zip(found, exact, strict=True)])), 3)
    row["backend"] = name
    return row


def write_docs(uri: str, collection: str, docs: list[int], n_per_doc: int, seed: int) -> int:
    """One writer's share: make each document's chunks, records and vectors, and upsert them (a worker's job)."""
    from flows.index_backends import open_milvus
    from stages.index.records import index_records

    index = open_milvus(uri, collection, CFG, embedding_model="bench", model_revision="1", dim=DIM, create=False)
    vocabulary, centres = _material(seed)
    written = 0
    for doc in docs:
        rng = np.random.default_rng(seed + 1000 + doc)
        chunks = [c.model_copy(update={"chunk_id": f"d{doc:05d}{c.chunk_id[6:]}", "semantic_id": f"D{doc}_{i}_0"})
                  for i, c in enumerate(synthetic_chunks(n_per_doc, rng, vocabulary))]
        written += index.upsert(index_records(chunks, CFG), synthetic_vectors(n_per_doc, rng, centres), scope=SCOPE)
    return written


def _material(seed: int) -> tuple[list[str], np.ndarray]:
    records = json.loads((SHARED / "indian-acts-json" / "ipc.json").read_text())
    vocabulary = list(dict.fromkeys(w for r in records for w in tokenize(f"{r['section_title']} {r['section_desc']}")))
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((2_000, DIM), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return vocabulary, centres


def ingest_rows(uri: str, n: int, n_docs: int, workers: int) -> list[dict]:
    """One writer vs ``workers`` Dask worker processes writing the same documents to the server."""
    from distributed import Client, LocalCluster

    from flows.index_backends import IndexTarget, milvus_client
    from flows.index_writes import fresh_collection
    from flows.runners import local_dask_cluster_kwargs

    identity = type("Identity", (), {"model_name": "bench", "model_revision": "1", "dim": DIM})()
    per_doc = n // n_docs
    rows = []
    name = f"bench_ingest_one_{n}"
    fresh_collection(IndexTarget("milvus", uri), name, CFG, identity)
    started = time.perf_counter()
    written = write_docs(uri, name, list(range(n_docs)), per_doc, seed=7)
    rows.append({"writers": "1 (this process)", "chunks": written, "seconds": round(time.perf_counter() - started, 2)})
    milvus_client(uri).drop_collection(name)

    name = f"bench_ingest_dask_{n}"
    fresh_collection(IndexTarget("milvus", uri), name, CFG, identity)
    cluster = LocalCluster(**local_dask_cluster_kwargs(workers, processes=True))
    client = Client(cluster)
    try:
        # Warm the workers (imports, a client each) before the clock starts: an ingest worker is long-lived.
        client.run(lambda: sys.path.insert(0, str(ROOT)))
        client.run(lambda: __import__("bench.index_backends").index_backends.write_docs(uri, name, [], per_doc, 7))
        shares = [list(range(w, n_docs, workers)) for w in range(workers)]
        started = time.perf_counter()
        futures = [client.submit(write_docs, uri, name, share, per_doc, 7, pure=False) for share in shares]
        written = sum(client.gather(futures))
        rows.append({"writers": f"{workers} Dask worker processes", "chunks": written,
                     "seconds": round(time.perf_counter() - started, 2)})
    finally:
        client.close()
        cluster.close()
    milvus_client(uri).drop_collection(name)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--docs", type=int, default=20, help="documents the ingestion rows split each size into")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", help="also write the figures as JSON here")
    args = parser.parse_args()

    import faiss

    from flows.index_backends import clear_index_caches, index_target, milvus_client
    from flows.index_server import milvus_lite_server
    from flows.index_writes import build_backend
    from stages.adapters.st_embedder import SentenceTransformersEmbedder
    from stages.index.faiss_backend import FaissBm25Index
    from stages.index.records import index_records
    from stages.index.search_index import SearchFilter

    faiss.omp_set_num_threads(1)
    embedder = SentenceTransformersEmbedder(num_threads=1)
    embedder.warm_up()
    questions = [json.loads(line)["question"] for line in (ROOT / "bench" / "data" / "ipc_questions.jsonl").read_text().splitlines()]
    questions = (questions * (args.queries // len(questions) + 1))[: args.queries]
    memo = dict(zip(dict.fromkeys(questions), embedder.embed(list(dict.fromkeys(questions))), strict=True))
    vocabulary, centres = _material(0)
    report: dict = {"load_start": os.getloadavg(), "cpus": os.cpu_count(), "queries": len(questions), "sizes": []}
    print(f"load avg {report['load_start'][0]:.1f} on {os.cpu_count()} cores; {len(questions)} queries per cell; "
          f"HNSW M {CFG.hnsw_m} efC {CFG.hnsw_ef_construction} ef {CFG.hnsw_ef_search}; k={K}; one tenant of two")
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp, milvus_lite_server(Path(tmp) / "db") as server:
        uri = server.uri
        for n in args.sizes:
            rng = np.random.default_rng(n)
            chunks = two_tenants(synthetic_chunks(n, rng, vocabulary))
            vectors = synthetic_vectors(n, rng, centres)
            probes = synthetic_vectors(200, np.random.default_rng(1), centres)
            in_scope = np.asarray([c.provenance.tenant_id == "t1" for c in chunks])
            flat = faiss.IndexFlatIP(DIM)
            flat.add(vectors[in_scope])
            scoped_ids = [chunks[i].chunk_id for i in np.flatnonzero(in_scope)]
            exact = [[scoped_ids[j] for j in row] for row in flat.search(probes, 10)[1]]
            del flat
            started = time.perf_counter()
            records = index_records(chunks, CFG)
            records_s = time.perf_counter() - started
            size: dict = {"chunks": n, "records_s": round(records_s, 2), "backends": []}

            before = rss_mb()
            faiss.omp_set_num_threads(os.cpu_count() or 1)
            started = time.perf_counter()
            backend = FaissBm25Index.build(chunks, vectors, embedding_model=embedder.model_name,
                                           model_revision=embedder.model_revision, cfg=CFG)
            _ = backend.search_index.lexical
            build_s = time.perf_counter() - started
            faiss.omp_set_num_threads(1)
            grown = rss_mb() - before
            engine = backend.search_index
            allowed = engine.compile_filter(SearchFilter("t1", "p1"))
            params = faiss.SearchParametersHNSW(sel=allowed.selector, efSearch=CFG.hnsw_ef_search)
            raw_ms = timed(lambda q: engine._faiss.search(memo[q].reshape(1, DIM), K, params=params), questions)
            row = measure(backend, "faiss", questions, memo, embedder, probes, exact, raw_ms)
            row.update(build_s=round(build_s, 2), rss_mb=round(grown, 1))
            size["backends"].append(row)
            del backend, engine, allowed, params
            print(json.dumps({"chunks": n, **row}), flush=True)

            server_before = server_rss_mb(server.pid)
            before = rss_mb()
            started = time.perf_counter()
            backend = build_backend(chunks, vectors, target=index_target(uri), collection=f"bench_{n}", cfg=CFG,
                                    embedding_model=embedder.model_name, model_revision=embedder.model_revision)
            backend.dense_search(memo[questions[0]], K, scope=SCOPE)  # the first search loads the segments' indexes
            build_s = time.perf_counter() - started
            client = milvus_client(uri)
            expr = 'scope_key == "[\\"t1\\",\\"p1\\"]" and tenant_id == "t1" and project_id == "p1"'
            raw_ms = timed(lambda q: client.search(f"bench_{n}", data=[memo[q].tolist()], anns_field="dense", limit=K,
                                                   filter=expr, search_params={"metric_type": "IP",
                                                                               "params": {"ef": CFG.hnsw_ef_search}}),
                           questions)
            row = measure(backend, "milvus-lite server", questions, memo, embedder, probes, exact, raw_ms)
            row.update(build_s=round(build_s, 2), rss_mb=round(server_rss_mb(server.pid) - server_before, 1),
                       client_rss_mb=round(rss_mb() - before, 1), server_rss_total_mb=round(server_rss_mb(server.pid), 1))
            size["backends"].append(row)
            print(json.dumps({"chunks": n, **row}), flush=True)
            backend.drop()
            del backend, records, chunks, vectors
            clear_index_caches()

            size["ingest"] = ingest_rows(uri, n, args.docs, args.workers)
            for r in size["ingest"]:
                print(json.dumps({"chunks": n, "ingest": r}), flush=True)
            report["sizes"].append(size)
    report["load_end"] = os.getloadavg()
    print(f"load avg at the end {report['load_end'][0]:.1f}")
    _table(report)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))


def _table(report: dict) -> None:
    print(f"\n{'chunks':>7} {'backend':<18} {'build s':>8} {'RSS MB':>7} | {'dense p50/p95':>15} {'lexical':>15} "
          f"{'hybrid':>15} {'retrieve':>15} | {'raw p50':>8} {'ratio':>6} | {'R@10':>5}")
    for size in report["sizes"]:
        for r in size["backends"]:
            cell = lambda m: f"{r[m]['p50']:.2f}/{r[m]['p95']:.2f}"  # noqa: E731
            print(f"{size['chunks']:>7} {r['backend']:<18} {r['build_s']:8.1f} {r['rss_mb']:7.0f} | {cell('dense'):>15} "
                  f"{cell('lexical'):>15} {cell('hybrid'):>15} {cell('retrieve'):>15} | {r['raw']['p50']:8.2f} "
                  f"{r['dense']['p50'] / max(r['raw']['p50'], 1e-9):5.1f}x | {r['recall_at_10']:5.2f}")
        for r in size["ingest"]:
            print(f"{size['chunks']:>7} ingest into the server, {r['writers']}: {r['chunks']} chunks in {r['seconds']} s "
                  f"({r['chunks'] / r['seconds']:.0f} chunks/s)")
    print("records (BM25 terms, kinds) per size: " + ", ".join(f"{s['chunks']}: {s['records_s']} s" for s in report["sizes"]))
    print("ratio = the port's dense search / the raw library's search, same k, same tenant filter")


if __name__ == "__main__":
    main()
