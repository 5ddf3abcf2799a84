"""``citebound reindex --to URI``: rebuild the store's index on another backend (or the same one) from the stored
chunk sets and vectors, without embedding anything; then the index the store answers from is that one."""

from __future__ import annotations

import argparse
import json
import time

from cli.common import add_common, prepare

__all__ = ["add_parsers", "cmd_reindex"]


def cmd_reindex(args: argparse.Namespace) -> int:
    root = prepare(args, prefect=False)
    from contracts import ArtifactStore, IndexManifest, IndexScope
    from flows.index_backends import index_stats, index_target, manifest_target
    from flows.ingest_flow import INDEX_POINTER, reindex

    target = index_target(args.to)  # a bad URI is a one-line ConfigError before any work
    store = ArtifactStore(root)
    before = store.get_pointer(INDEX_POINTER)
    source = manifest_target(store.get(before, IndexManifest)) if before else None
    started = time.perf_counter()
    ref, manifest = reindex(str(root), args.to, index_type=args.index_type)
    seconds = time.perf_counter() - started
    if manifest is None:
        print("citebound: the store has no documents to index", flush=True)
        return 1
    stats = index_stats(str(root), ref, IndexScope(tenant_id=args.tenant, project_id=args.project))
    if args.json:
        print(json.dumps({"from": source.describe() if source else None, "to": target.describe(),
                          "index_sha256": ref.sha256, "n_vectors": manifest.n_vectors, "seconds": round(seconds, 3),
                          "stats": stats.model_dump(mode="json")}))
    else:
        print(f"reindexed {manifest.n_vectors} chunks from {source.describe() if source else 'nothing'} to "
              f"{target.describe()} in {seconds:.1f} s (nothing re-embedded); index {ref}")
        print(f"  {stats.backend} {stats.index_type}: {stats.n_chunks} chunks"
              + (f" in collection {stats.collection}" if stats.collection else "")
              + "; " + ", ".join(f"{k}={v}" for k, v in stats.params))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The reindex command."""
    sp = sub.add_parser("reindex", help="rebuild the index on a backend from stored vectors (--to faiss | "
                                        "http://host:port | PATH.db)")
    sp.add_argument("--to", required=True, help="faiss (FAISS + BM25 in the store), http://host:port (a Milvus "
                                                "server; token from CITEBOUND_INDEX_TOKEN) or a milvus-lite .db path")
    sp.add_argument("--index-type", choices=["flat", "hnsw"], help="default: the current index's")
    add_common(sp)
    sp.set_defaults(func=cmd_reindex)
