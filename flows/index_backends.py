"""Which index backend a store's index lives on, and opening it: FAISS + BM25 in the store, or Milvus by URI.

One setting selects it, resolved at the edge and passed to the flows as ``index_uri``:

- unset, empty or ``faiss``: FAISS + BM25 blobs in the store (the default; no server, one writer);
- ``http://host:port`` / ``https://...``: a Milvus server (Standalone, Distributed, Zilliz, or ``milvus-lite
  server``), with ``CITEBOUND_INDEX_TOKEN`` as its token;
- a path ending in ``.db``: milvus-lite embedded in this process (one process at a time holds the file).

The token is a secret: never a flow parameter or part of a manifest or run record; the process that opens the
connection reads it from its own settings (as the OpenAI key is). A manifest records where its index is
(``backend``, ``location`` without token, ``collection``); readers open that, whatever their own setting says.
A loaded index is cached per process by manifest (FAISS manifests are immutable; a Milvus manifest names a
live collection whose rows the ingest flow keeps equal to the manifest's chunk sets).
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from contracts import ArtifactRef, ArtifactStore, ChunkSet, IndexConfig, IndexManifest
from contracts.errors import ConfigError
from flows.backends import get_embedder
from flows.store_layout import INDEX_POINTER

__all__ = [
    "IndexTarget",
    "index_target",
    "manifest_target",
    "collection_name",
    "index_fingerprint",
    "milvus_client",
    "open_milvus",
    "load_index",
    "load_search_index",
    "index_stats",
    "clear_index_caches",
    "IndexIdentity",
    "index_identity",
]

_lock = threading.Lock()


@dataclass(frozen=True)
class IndexTarget:
    """Where an index is written: ``faiss`` (the store) or ``milvus`` at ``location`` (a URL or a .db path)."""

    backend: Literal["faiss", "milvus"]
    location: str | None = None

    @property
    def is_server(self) -> bool:
        """A Milvus server: writers in several processes may write at once (a .db file allows one process)."""
        return self.backend == "milvus" and bool(self.location) and self.location.startswith(("http://", "https://"))

    def describe(self) -> str:
        return "FAISS + BM25 in the store" if self.backend == "faiss" else f"Milvus at {self.location}"


def index_target(uri: str | None) -> IndexTarget:
    """Parse ``CITEBOUND_INDEX_URI`` / ``--to``: see the module docstring.

    >>> index_target(None), index_target("http://127.0.0.1:19530").is_server
    (IndexTarget(backend='faiss', location=None), True)
    """
    text = (uri or "").strip()
    if text in ("", "faiss"):
        return IndexTarget("faiss")
    if text.startswith(("http://", "https://")):
        return IndexTarget("milvus", text.rstrip("/"))
    if text.endswith(".db"):
        return IndexTarget("milvus", str(Path(text).expanduser().resolve()))
    raise ConfigError(f"index URI {uri!r}: expected unset or 'faiss' (FAISS in the store), http://host:port "
                      "(a Milvus server) or a path ending in .db (milvus-lite embedded)")


def manifest_target(manifest: IndexManifest | None) -> IndexTarget:
    """Where a manifest's index lives (FAISS for no manifest)."""
    if manifest is None or manifest.backend == "faiss":
        return IndexTarget("faiss")
    return IndexTarget("milvus", manifest.location)


def collection_name(store_root: str | Path) -> str:
    """The Milvus collection of a store: one per store (several stores may share a server).

    >>> collection_name("/srv/store").startswith("citebound_") and collection_name("/srv/store").endswith("_s1")
    True
    """
    from contracts import sha256_text
    from stages.adapters.milvus_index import SCHEMA_VERSION

    return f"citebound_{sha256_text(str(Path(store_root).resolve()))[:16]}_s{SCHEMA_VERSION}"


def index_fingerprint(cfg: IndexConfig, embedding_model: str, model_revision: str, dim: int) -> str:
    """What a Milvus collection's rows were made under (saved in its properties and compared on open): the
    normaliser and index settings (``stages.index.saved_params``, as a FAISS index saves them, with Milvus's
    BM25 parameters) and the embedding model."""
    from stages.index.saved_params import index_params

    params = index_params(cfg, {"engine": "milvus", "k1": 1.2, "b": 0.75})
    params["embedding"] = {"model": embedding_model, "revision": model_revision, "dim": dim}
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def milvus_client(location: str):  # noqa: ANN201 - a MilvusClient stand-in
    """One client per location per process (thread-safe); the token from ``CITEBOUND_INDEX_TOKEN``. It is a
    ``MilvusCalls`` over a dedicated ``MilvusClient``: keepalive a server on gRPC's defaults accepts, and bounded
    reconnects that re-send only reads and idempotent writes (``stages.adapters.milvus_calls``)."""
    with _lock:
        return _milvus_client(location)


@lru_cache(maxsize=8)
def _milvus_client(location: str):  # noqa: ANN202
    try:
        from pymilvus import MilvusClient
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise ConfigError("the index is on Milvus but pymilvus is not installed: pip install 'citebound[milvus]'"
                          ) from exc
    from flows.settings import Settings
    from stages.adapters.milvus_calls import GRPC_OPTIONS, MilvusCalls

    token = Settings().index_token
    secret = token.get_secret_value() if token else ""
    return MilvusCalls(lambda: MilvusClient(uri=location, token=secret, grpc_options=dict(GRPC_OPTIONS),
                                            dedicated=True), location=location)


def open_milvus(location: str, collection: str, cfg: IndexConfig, *, embedding_model: str, model_revision: str,
                dim: int, create: bool, doc_codes: dict[tuple[str, str], frozenset[str]] | None = None):  # noqa: ANN201
    """A ``MilvusIndex`` on ``collection`` at ``location`` (created when absent and ``create``; always checked)."""
    from stages.adapters.milvus_index import MilvusIndex

    return MilvusIndex.open(
        milvus_client(location), collection, embedding_model=embedding_model, model_revision=model_revision,
        dim=dim, cfg=cfg, fingerprint=index_fingerprint(cfg, embedding_model, model_revision, dim),
        location=location, create=create, doc_codes=doc_codes)


_ADAPTERS = {"faiss": ("stages.index.faiss_backend", "FaissBm25Index"),
             "milvus": ("stages.adapters.milvus_index", "MilvusIndex")}


@dataclass(frozen=True)
class IndexIdentity:
    """What of an index backend decides the retrieve stage's version (``flows.stage_versions``: its adapter's
    class and code, its name and model revision), read from a manifest or view without loading the index."""

    adapter_class: tuple[str, str]
    name: str
    model_revision: str


def index_identity(store: ArtifactStore, ref: ArtifactRef) -> IndexIdentity:
    """The identity of the backend ``ref`` (an index manifest, or a (tenant, project) view) is searched on. A view
    is searched on the store's Milvus collection when the current index is on Milvus, else on FAISS
    (``flows.index_views``)."""
    from contracts.errors import ArtifactCorruptError, ArtifactNotFoundError
    from contracts.index import IndexView

    if ref.kind == "index_view.v1":
        backend = "faiss"
        try:
            current = store.get_pointer(INDEX_POINTER)
            if current is not None and store.get(current, IndexManifest).backend == "milvus":
                backend = "milvus"
        except (ArtifactCorruptError, ArtifactNotFoundError):
            pass  # a damaged manifest: the view is built from its documents, in memory (FAISS)
        return IndexIdentity(_ADAPTERS[backend], backend, store.get(ref, IndexView).model_revision)
    manifest = store.get(ref, IndexManifest)
    return IndexIdentity(_ADAPTERS[manifest.backend], manifest.backend, manifest.model_revision)


def load_index(store_root: str, manifest_ref: ArtifactRef, embedder_name: str = "minilm"):  # noqa: ANN201
    """The ``IndexBackend`` a manifest describes, opened once per process (see the module docstring)."""
    return _cached_index(str(store_root), manifest_ref.kind, manifest_ref.sha256, embedder_name)


def load_search_index(store_root: str, manifest_ref: ArtifactRef, embedder_name: str = "minilm"):  # noqa: ANN201
    """``load_index`` for a process that searches: with ``CITEBOUND_QUERY_THREADS`` set (a query-serving process),
    FAISS first gets that many threads, so it does not spin against torch on 2 cores."""
    if os.environ.get("CITEBOUND_QUERY_THREADS"):
        import faiss

        faiss.omp_set_num_threads(int(os.environ["CITEBOUND_QUERY_THREADS"]))
    return load_index(str(store_root), manifest_ref, embedder_name)


def index_stats(store_root: str, manifest_ref: ArtifactRef, scope):  # noqa: ANN001, ANN201 - IndexStats
    """What the index a manifest describes holds, as its backend reports it (no embedder is loaded)."""
    return _open_manifest(ArtifactStore(store_root), manifest_ref.kind, manifest_ref.sha256, None).stats(scope=scope)


@lru_cache(maxsize=4)
def _cached_index(store_root: str, kind: str, manifest_sha: str, embedder_name: str):  # noqa: ANN202
    return _open_manifest(ArtifactStore(store_root), kind, manifest_sha, get_embedder(embedder_name))


def _open_manifest(store: ArtifactStore, kind: str, manifest_sha: str, embedder):  # noqa: ANN001, ANN202
    """Open a manifest's index; ``embedder`` (the query embedder) must be the model that made it, None: trusted."""
    from types import SimpleNamespace

    from contracts.errors import IndexMismatchError
    from stages.index.faiss_backend import FaissBm25Index

    manifest = store.get(f"{kind}:{manifest_sha}", IndexManifest)
    if embedder is None:
        embedder = SimpleNamespace(model_name=manifest.embedding_model, model_revision=manifest.model_revision,
                                   dim=manifest.dim)
    cfg = IndexConfig(index_type=manifest.index_type)
    if manifest.backend == "milvus":
        if (embedder.model_name, embedder.model_revision, embedder.dim) != (
                manifest.embedding_model, manifest.model_revision, manifest.dim):
            raise IndexMismatchError(
                f"the index was built with {manifest.embedding_model} (revision {manifest.model_revision}, dim "
                f"{manifest.dim}) but the loaded embedder is {embedder.model_name}: rebuild the index")
        return open_milvus(manifest.location or "", manifest.collection or "", cfg,
                           embedding_model=manifest.embedding_model, model_revision=manifest.model_revision,
                           dim=manifest.dim, create=False, doc_codes=manifest_doc_codes(manifest))
    chunks = []
    for cs_sha in manifest.chunk_set_sha256s:
        chunks.extend(store.get(f"chunk_set.v1:{cs_sha}", ChunkSet).chunks)
    blobs = {role: store.get_blob(sha) for role, sha in manifest.blobs}
    return FaissBm25Index.from_blobs(
        blobs, chunks, embedding_model=manifest.embedding_model, model_revision=manifest.model_revision,
        dim=manifest.dim, cfg=cfg, embedder=embedder)


def manifest_doc_codes(manifest: IndexManifest) -> dict[tuple[str, str], frozenset[str]]:
    """(tenant, project) -> the doc codes the manifest's index holds there."""
    out: dict[tuple[str, str], set[str]] = {}
    for tenant, project, code in manifest.doc_codes:
        out.setdefault((tenant, project), set()).add(code)
    return {pair: frozenset(codes) for pair, codes in out.items()}


def clear_index_caches() -> None:
    """Forget loaded indexes and clients (tests that stop a server; a process that switches stores)."""
    _cached_index.cache_clear()
    with _lock:
        _milvus_client.cache_clear()
