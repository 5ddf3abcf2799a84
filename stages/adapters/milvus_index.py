"""``MilvusIndex``: the ``IndexBackend`` port on a Milvus collection, through ``pymilvus.MilvusClient``.

The same code reaches Milvus Standalone or Distributed (``http://host:port`` and a token), a ``milvus-lite
server`` on loopback, or a milvus-lite ``.db`` file embedded in the process: the caller builds the client
(``flows.index_backends``); this adapter only speaks the Milvus protocol. milvus-lite 3.x is a pure-Python
reimplementation of that protocol, not Milvus: where the two differ it is said below.

The collection. One row per chunk: ``key`` (INT64 primary key, the first 63 bits of sha256(chunk_id)),
``chunk_id``, the scope (``scope_key`` = the JSON of [tenant, project], the partition key, and ``tenant_id`` /
``project_id`` beside it), what filters narrow on (``doc_hash``, ``doc_code`` and its lower case, ``page`` /
``page_end``), what retrieval reads of a candidate (``kinds``, ``qualifier``, the section key, the chunk itself
as JSON), ``terms`` (the record's BM25 terms joined by spaces: the analyser splits on them and changes nothing,
so the words stay ``stages.text``'s) feeding a BM25 ``Function`` into ``sparse``, and ``dense`` (FLOAT_VECTOR,
inner product; HNSW with ``IndexConfig``'s M and efConstruction, or FLAT for ``index_type="flat"``).

Versioned and checked. The collection's properties carry ``citebound.schema`` (``SCHEMA_VERSION``) and
``citebound.fingerprint`` (what the caller says the rows were made under: the normaliser, the BM25 and index
settings, the embedding model). Opening a collection compares fields, properties and the index parameters
*read back from the engine* with what this code would create, and raises ``IndexMismatchError`` naming each
difference: pymilvus 3 sends index parameters flattened, which milvus-lite 3.2 dropped silently (an HNSW
built with its defaults, BM25 with k1 1.5); they are sent nested under ``params``, which both Milvus and
milvus-lite read, and then verified.

Tenants. Every read and write names an ``IndexScope``; its filter expression goes into the search itself
(``filter=`` of ``search``/``query``/``delete``, and ``expr=`` of *each* ``AnnSearchRequest`` of a hybrid search:
milvus-lite ignores a ``filter=`` given to ``hybrid_search`` itself). String literals are escaped, so a tenant
id cannot close its quote. Every hit is checked against the scope once more before it is returned; a hit
outside it is a ``StageInvariantError``, never a result.

Why long: one adapter over one collection: the schema, the check that reads it back, and the port's ten methods
with the filter expression they share; split, the check would live apart from the schema it checks.

Scores. Dense: inner product. Lexical: BM25 with k1 1.2, b 0.75 (as ``stages.index.bm25``); milvus-lite
returns it negated, Milvus positive: the absolute value is taken, divided by (k1 + 1) as Lucene's formula (and
bm25s's) omits that constant factor. Equal scores come out in chunk id order, as on FAISS (``IndexHits.best``,
over ``TIE_MARGIN`` more hits than asked). Document frequencies: milvus-lite counts them per
segment (and partitions by the scope key), bm25s over the whole index, so BM25 over several tenants scores
differently on the two (the ranking inside one tenant's project of one segment is the same); Milvus itself keeps
collection-wide statistics.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from contracts.config import IndexConfig
from contracts.errors import ContractViolationError, IndexMismatchError, StageInvariantError
from contracts.index import IndexRecord, IndexScope, IndexStats
from contracts.ingest import Chunk
from stages.ports import TIE_MARGIN, IndexedChunk, IndexHits

__all__ = ["MilvusIndex", "SCHEMA_VERSION", "chunk_key", "scope_filter"]

SCHEMA_VERSION = "1"
_BM25 = {"bm25_k1": 1.2, "bm25_b": 0.75}
_NUM_PARTITIONS = 16
_MAX_VARCHAR = 65535
_BATCH = 500
_CACHE_SIZE = 20_000
_OUTPUT = ["key", "chunk_json", "kinds", "qualifier", "tenant_id", "project_id", "doc_code", "page", "page_end"]
# (name, DataType name, extra field params) of every field but the vectors; checked on open.
_SCALARS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("key", "INT64", {"is_primary": True}),
    ("chunk_id", "VARCHAR", {"max_length": 128}),
    ("scope_key", "VARCHAR", {"max_length": 600, "is_partition_key": True}),
    ("tenant_id", "VARCHAR", {"max_length": 256}),
    ("project_id", "VARCHAR", {"max_length": 256}),
    ("doc_hash", "VARCHAR", {"max_length": 128}),
    ("doc_code", "VARCHAR", {"max_length": 256}),
    ("doc_code_lc", "VARCHAR", {"max_length": 256}),
    ("page", "INT64", {}),
    ("page_end", "INT64", {}),
    ("section_level", "VARCHAR", {"max_length": 16}),
    ("section_number", "VARCHAR", {"max_length": 256}),
    ("kinds", "VARCHAR", {"max_length": 512}),
    ("qualifier", "VARCHAR", {"max_length": 128}),
    ("chunk_json", "VARCHAR", {"max_length": _MAX_VARCHAR}),
)


def chunk_key(chunk_id: str) -> int:
    """The INT64 primary key of a chunk: the first 63 bits of sha256(chunk_id).

    >>> chunk_key("abc") == chunk_key("abc") and 0 <= chunk_key("abc") < 2**63
    True
    """
    return int.from_bytes(hashlib.sha256(chunk_id.encode("utf-8")).digest()[:8], "big") & (2**63 - 1)


def _literal(value: str) -> str:
    """A Milvus expression string literal for ``value`` (backslash and double quote escaped)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scope_key(tenant_id: str, project_id: str) -> str:
    return json.dumps([tenant_id, project_id], ensure_ascii=False, separators=(",", ":"))


def scope_filter(scope: IndexScope) -> str:
    r"""The filter expression of a scope: tenant and project always, doc codes and pages when given.

    >>> print(scope_filter(IndexScope(tenant_id="t1", project_id="p1", page_max=3)))
    scope_key == "[\"t1\",\"p1\"]" and tenant_id == "t1" and project_id == "p1" and page <= 3
    """
    parts = [f"scope_key == {_literal(_scope_key(scope.tenant_id, scope.project_id))}",
             f"tenant_id == {_literal(scope.tenant_id)}", f"project_id == {_literal(scope.project_id)}"]
    if scope.doc_codes:
        codes = ", ".join(_literal(d.lower()) for d in sorted(set(scope.doc_codes)))
        parts.append(f"doc_code_lc in [{codes}]")
    if scope.page_min is not None:
        parts.append(f"page_end >= {int(scope.page_min)}")
    if scope.page_max is not None:
        parts.append(f"page <= {int(scope.page_max)}")
    return " and ".join(parts)


class MilvusIndex:
    """``IndexBackend`` on one Milvus collection (see the module docstring). Build it with ``open``."""

    name = "milvus"

    def __init__(self, client: Any, collection: str, *, embedding_model: str, model_revision: str, dim: int,
                 cfg: IndexConfig, fingerprint: str, location: str | None = None,
                 doc_codes: Mapping[tuple[str, str], frozenset[str]] | None = None) -> None:
        self._client = client
        self.collection = collection
        self._embedding_model = embedding_model
        self._model_revision = model_revision
        self._dim = dim
        self.cfg = cfg
        self.fingerprint = fingerprint
        self.location = location
        self._known_codes = dict(doc_codes or {})
        self._codes: dict[tuple[str, str], frozenset[str]] = {}
        self._entries: OrderedDict[tuple[int, str], IndexedChunk] = OrderedDict()
        # key -> (vector, (tenant, project, doc code, page, page end)): served only inside a scope that admits it.
        self._vectors: OrderedDict[int, tuple[np.ndarray, tuple[str, str, str, int, int]]] = OrderedDict()
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- the collection
    @classmethod
    def open(cls, client: Any, collection: str, *, embedding_model: str, model_revision: str, dim: int,
             cfg: IndexConfig, fingerprint: str, location: str | None = None, create: bool = True,
             doc_codes: Mapping[tuple[str, str], frozenset[str]] | None = None) -> MilvusIndex:
        """The index on ``collection``: created when absent (and ``create``), checked when present (schema,
        properties, index parameters read back); ``IndexMismatchError`` names every difference."""
        index = cls(client, collection, embedding_model=embedding_model, model_revision=model_revision, dim=dim,
                    cfg=cfg, fingerprint=fingerprint, location=location, doc_codes=doc_codes)
        if not client.has_collection(collection):
            if not create:
                raise IndexMismatchError(f"Milvus collection {collection!r} does not exist at {location or 'the server'}"
                                         ": rebuild the index (citebound reindex)")
            index._create()
        index.check()
        client.load_collection(collection)
        return index

    def _create(self) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        for name, dtype, params in _SCALARS:
            schema.add_field(name, getattr(DataType, dtype), **params)
        schema.add_field("terms", DataType.VARCHAR, max_length=_MAX_VARCHAR, enable_analyzer=True,
                         analyzer_params={"tokenizer": "standard"})
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=self._dim)
        schema.add_function(Function(name="terms_bm25", function_type=FunctionType.BM25,
                                     input_field_names=["terms"], output_field_names=["sparse"]))
        index_params = self._client.prepare_index_params()
        dense_type, dense_params = self._dense_index()
        # Nested under "params": pymilvus 3 flattens a plain dict, which milvus-lite 3.2 drops (see above).
        index_params.add_index(field_name="dense", index_type=dense_type, metric_type="IP",
                               params={"params": dense_params} if dense_params else {})
        index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                               params={"params": dict(_BM25)})
        self._client.create_collection(
            self.collection, schema=schema, index_params=index_params, num_partitions=_NUM_PARTITIONS,
            consistency_level="Strong", properties=self._properties())

    def _dense_index(self) -> tuple[str, dict[str, int]]:
        if self.cfg.index_type == "hnsw":
            return "HNSW", {"M": self.cfg.hnsw_m, "efConstruction": self.cfg.hnsw_ef_construction}
        return "FLAT", {}

    def _properties(self) -> dict[str, str]:
        return {"citebound.schema": SCHEMA_VERSION, "citebound.fingerprint": self.fingerprint}

    def check(self) -> None:
        """Raise IndexMismatchError unless the collection is what ``_create`` makes, read back from the engine."""
        problems = self.mismatches()
        if problems:
            raise IndexMismatchError(
                f"Milvus collection {self.collection!r} does not match this code and config: " + "; ".join(problems)
                + ". Rebuild it (citebound reindex --to URI)")

    def mismatches(self) -> list[str]:
        """Every difference between the collection and what this code would create (empty: it fits)."""
        desc = self._client.describe_collection(self.collection)
        problems: list[str] = []
        props = {str(k): str(v) for k, v in (desc.get("properties") or {}).items()}
        for key, want in self._properties().items():
            have = props.get(key, "<absent>")
            if have != want:
                problems.append(f"property {key}: saved {_short(have)}, now {_short(want)}")
        fields = {f["name"]: f for f in desc.get("fields", [])}
        from pymilvus import DataType

        wanted = [(n, d, p) for n, d, p in _SCALARS] + [
            ("terms", "VARCHAR", {}), ("sparse", "SPARSE_FLOAT_VECTOR", {}),
            ("dense", "FLOAT_VECTOR", {"dim": self._dim})]
        for name, dtype, params in wanted:
            field = fields.get(name)
            if field is None:
                problems.append(f"field {name}: absent")
                continue
            if int(field.get("type")) != int(getattr(DataType, dtype)):
                problems.append(f"field {name}: type {field.get('type')}, now {dtype}")
            if "dim" in params and int((field.get("params") or {}).get("dim", -1)) != params["dim"]:
                problems.append(f"field {name}: dim {(field.get('params') or {}).get('dim')}, now {params['dim']}")
            if params.get("is_partition_key") and not field.get("is_partition_key"):
                problems.append(f"field {name}: not the partition key")
            if params.get("is_primary") and not field.get("is_primary"):
                problems.append(f"field {name}: not the primary key")
        extra = sorted(set(fields) - {w[0] for w in wanted})
        if extra:
            problems.append(f"fields {extra}: not in schema {SCHEMA_VERSION}")
        dense_type, dense_params = self._dense_index()
        for field, (itype, metric, params) in {
            "dense": (dense_type, "IP", dense_params),
            "sparse": ("SPARSE_INVERTED_INDEX", "BM25", dict(_BM25)),
        }.items():
            have = self.index_description(field)
            if have is None:
                problems.append(f"index on {field}: absent")
                continue
            if str(have.get("index_type", "")).upper() != itype:
                problems.append(f"index on {field}: type {have.get('index_type')}, now {itype}")
            if str(have.get("metric_type", "")).upper() != metric:
                problems.append(f"index on {field}: metric {have.get('metric_type')}, now {metric}")
            for key, value in params.items():
                got = have.get("params", {}).get(key, "<absent>")
                if str(got) != str(value) and not _same_number(got, value):
                    problems.append(f"index on {field}: {key} {got}, now {value} (the engine dropped or changed it)")
        return problems

    def index_description(self, field: str) -> dict[str, Any] | None:
        """The index on ``field`` as the engine reports it, its parameters flattened into ``params``."""
        try:
            raw = self._client.describe_index(self.collection, index_name=field)
        except Exception:  # noqa: BLE001 - pymilvus raises a bare MilvusException for "no index"
            return None
        if not raw:
            return None
        params: dict[str, Any] = {}
        nested = raw.get("params")
        if isinstance(nested, str):
            try:
                nested = json.loads(nested)
            except ValueError:
                nested = {}
        if isinstance(nested, dict):
            params.update(nested)
        skip = {"index_type", "metric_type", "params", "field_name", "index_name", "total_rows", "indexed_rows",
                "pending_index_rows", "state"}
        params.update({k: v for k, v in raw.items() if k not in skip})
        return {"index_type": raw.get("index_type"), "metric_type": raw.get("metric_type"), "params": params}

    def flush(self) -> None:
        """Seal what was written into segments the engine indexes once (milvus-lite rebuilds the index of its
        in-memory table at every search: 0.4 s per query over 2,000 unflushed rows here). Once per write phase:
        Milvus seals by itself and rate-limits explicit flushes."""
        self._client.flush(self.collection)

    def drop(self) -> None:
        """Drop the collection (a rebuild starts from nothing)."""
        if self._client.has_collection(self.collection):
            self._client.drop_collection(self.collection)

    # ----------------------------------------------------------------- identity
    @property
    def embedding_model(self) -> str:
        return self._embedding_model

    @property
    def model_revision(self) -> str:
        return self._model_revision

    @property
    def dim(self) -> int:
        return self._dim

    # ----------------------------------------------------------------- writes
    def upsert(self, records: Sequence[IndexRecord], vectors: np.ndarray, *, scope: IndexScope) -> int:
        """Write the records (a chunk id already there is replaced), in batches; returns how many were written."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(records) or (len(records) and vectors.shape[1] != self._dim):
            raise ContractViolationError(f"expected ({len(records)}, {self._dim}) vectors, got shape {vectors.shape}")
        rows = [self._row(record, vector, scope) for record, vector in zip(records, vectors, strict=True)]
        for start in range(0, len(rows), _BATCH):
            self._client.upsert(self.collection, rows[start:start + _BATCH])
        pair = (scope.tenant_id, scope.project_id)
        added = frozenset(r.chunk.provenance.doc_code for r in records)
        with self._lock:
            self._entries.clear()
            self._vectors.clear()
            for known in (self._codes, self._known_codes):
                if pair in known:
                    known[pair] = known[pair] | added
        return len(rows)

    def _row(self, record: IndexRecord, vector: np.ndarray, scope: IndexScope) -> dict[str, Any]:
        chunk = record.chunk
        p = chunk.provenance
        if not scope.admits_location(p.tenant_id, p.project_id, p.doc_code, p.page, p.page_end):
            raise ContractViolationError(
                f"record {chunk.chunk_id[:12]} of {p.tenant_id}/{p.project_id} lies outside the scope "
                f"{scope.tenant_id}/{scope.project_id}")
        terms = [t for t in record.terms if t]
        if any(not t.replace("_", "").isalnum() or " " in t for t in terms):
            raise ContractViolationError("BM25 terms must be single words (the analyser splits on non-word characters)")
        chunk_json = chunk.model_dump_json()
        if len(chunk_json.encode("utf-8")) > _MAX_VARCHAR:
            raise ContractViolationError(f"chunk {chunk.chunk_id[:12]} is over {_MAX_VARCHAR} bytes as JSON")
        joined = " ".join(terms)[:_MAX_VARCHAR]
        return {
            "key": chunk_key(chunk.chunk_id), "chunk_id": chunk.chunk_id,
            "scope_key": _scope_key(p.tenant_id, p.project_id), "tenant_id": p.tenant_id, "project_id": p.project_id,
            "doc_hash": p.doc_hash, "doc_code": p.doc_code, "doc_code_lc": p.doc_code.lower(),
            "page": p.page, "page_end": p.page_end,
            "section_level": record.section_level or "", "section_number": record.section_number or "",
            "kinds": ",".join(record.kinds), "qualifier": record.qualifier or "", "chunk_json": chunk_json,
            # A chunk with no BM25 term at all still needs a document (engines refuse an empty one).
            "terms": joined or "cbemptydocument",
            "dense": vector.tolist(),
        }

    def delete(self, chunk_ids: Sequence[str], *, scope: IndexScope) -> int:
        """Delete these chunks where they lie inside ``scope``; returns how many ids were asked for."""
        keys = sorted({chunk_key(c) for c in chunk_ids})
        for start in range(0, len(keys), _BATCH):
            part = ", ".join(str(k) for k in keys[start:start + _BATCH])
            self._client.delete(self.collection, filter=f"key in [{part}] and {scope_filter(scope)}")
        self._forget(scope)
        return len(keys)

    def delete_document(self, doc_hash: str, *, scope: IndexScope) -> int:
        """Delete every chunk of the document version ``doc_hash`` inside ``scope``; returns how many there were."""
        expr = f"doc_hash == {_literal(doc_hash)} and {scope_filter(scope)}"
        n = self._count(expr)
        self._client.delete(self.collection, filter=expr)
        self._forget(scope)
        return n

    def _forget(self, scope: IndexScope) -> None:
        with self._lock:
            self._entries.clear()
            self._vectors.clear()
            self._codes.pop((scope.tenant_id, scope.project_id), None)
            self._known_codes.pop((scope.tenant_id, scope.project_id), None)

    # ----------------------------------------------------------------- reads
    def dense_search(self, vector: np.ndarray, k: int, *, scope: IndexScope) -> IndexHits:
        params: dict[str, Any] = {"metric_type": "IP"}
        if self.cfg.index_type == "hnsw":
            params["params"] = {"ef": max(self.cfg.hnsw_ef_search, k + TIE_MARGIN)}
        result = self._client.search(
            self.collection, data=[np.asarray(vector, dtype=np.float32).tolist()], anns_field="dense",
            limit=k + TIE_MARGIN, filter=scope_filter(scope), output_fields=[*_OUTPUT, "dense"], search_params=params)
        return self._hits(result[0], scope, lexical=False).best(k)

    def lexical_search(self, terms: Sequence[str], k: int, *, scope: IndexScope) -> IndexHits:
        # Each term once, as bm25s scores a query (the analyser would weigh a repeated query term by its count).
        words = list(dict.fromkeys(t for t in terms if t))
        if not words:
            return IndexHits.empty()
        result = self._client.search(
            self.collection, data=[" ".join(words)], anns_field="sparse", limit=k + TIE_MARGIN,
            filter=scope_filter(scope), output_fields=[*_OUTPUT, "dense"], search_params={"metric_type": "BM25"})
        return self._hits(result[0], scope, lexical=True).best(k)

    def hybrid_search(self, vector: np.ndarray, terms: Sequence[str], k: int, *, scope: IndexScope,
                      rrf_k: int = 60) -> IndexHits:
        """The engine's own RRF over a dense and a BM25 request, the scope's filter inside *each* request."""
        from pymilvus import AnnSearchRequest, RRFRanker

        expr = scope_filter(scope)
        dense_params: dict[str, Any] = {"metric_type": "IP"}
        if self.cfg.index_type == "hnsw":
            dense_params["params"] = {"ef": max(self.cfg.hnsw_ef_search, k)}
        requests = [AnnSearchRequest(data=[np.asarray(vector, dtype=np.float32).tolist()], anns_field="dense",
                                     param=dense_params, limit=k, expr=expr)]
        words = list(dict.fromkeys(t for t in terms if t))
        if words:
            requests.append(AnnSearchRequest(data=[" ".join(words)], anns_field="sparse",
                                             param={"metric_type": "BM25"}, limit=k, expr=expr))
        result = self._client.hybrid_search(self.collection, requests, ranker=RRFRanker(rrf_k), limit=k,
                                            output_fields=_OUTPUT)
        return self._hits(result[0], scope, lexical=False).best(k)

    def section_search(self, level: str, number: str, doc_codes: frozenset[str] | None, *,
                       scope: IndexScope) -> IndexHits:
        if doc_codes is not None and not doc_codes:
            return IndexHits.empty()
        expr = f"section_level == {_literal(level)} and section_number == {_literal(number.lower())}"
        if doc_codes is not None:
            expr += f" and doc_code in [{', '.join(_literal(c) for c in sorted(doc_codes))}]"
        rows = self._client.query(self.collection, filter=f"{expr} and {scope_filter(scope)}", output_fields=_OUTPUT)
        rows = sorted(rows, key=lambda r: int(r["key"]))
        return self._hits([{"key": r["key"], "distance": 0.0, "entity": r} for r in rows], scope, lexical=False)

    def vectors(self, keys: Sequence[int], *, scope: IndexScope) -> np.ndarray:
        wanted = [int(k) for k in keys]
        if not wanted:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            found = {k: self._vectors[k][0] for k in wanted
                     if k in self._vectors and scope.admits_location(*self._vectors[k][1])}
        missing = sorted(set(wanted) - set(found))
        if missing:
            rows = self._client.query(
                self.collection, filter=f"key in [{', '.join(map(str, missing))}] and {scope_filter(scope)}",
                output_fields=["key", "dense"])
            for row in rows:
                found[int(row["key"])] = np.asarray(row["dense"], dtype=np.float32)
        absent = [k for k in wanted if k not in found]
        if absent:
            raise StageInvariantError(f"vectors asked for keys outside the scope or the index: {absent[:5]}")
        return np.vstack([found[k] for k in wanted]).astype(np.float32, copy=False)

    def doc_codes(self, *, scope: IndexScope) -> frozenset[str]:
        """The doc codes in the scope's tenant and project (narrowed by the scope's own doc codes)."""
        pair = (scope.tenant_id, scope.project_id)
        codes = self._known_codes.get(pair)
        if codes is None:
            codes = self._codes.get(pair)
        if codes is None:
            codes = frozenset(row["doc_code"] for row in self._iterate(scope_filter(scope.unnarrowed()), ["doc_code"]))
            with self._lock:
                self._codes[pair] = codes
        if scope.doc_codes:
            wanted = {d.lower() for d in scope.doc_codes}
            codes = frozenset(c for c in codes if c.lower() in wanted)
        return codes

    def stats(self, *, scope: IndexScope) -> IndexStats:
        params: dict[str, str] = {}
        for field in ("dense", "sparse"):
            desc = self.index_description(field) or {}
            params[f"{field}.index_type"] = str(desc.get("index_type"))
            params[f"{field}.metric_type"] = str(desc.get("metric_type"))
            params.update({f"{field}.{k}": str(v) for k, v in (desc.get("params") or {}).items()})
        return IndexStats(
            backend="milvus", location=self.location, collection=self.collection,
            embedding_model=self._embedding_model, model_revision=self._model_revision, dim=self._dim,
            index_type=self.cfg.index_type, n_chunks=self._count(""), n_in_scope=self._count(scope_filter(scope)),
            params=tuple(sorted(params.items())),
        )

    def all_chunk_ids(self, *, scope: IndexScope) -> set[str]:
        """Every chunk id inside ``scope`` (a scan: for checks and repairs, not for queries)."""
        return {row["chunk_id"] for row in self._iterate(scope_filter(scope), ["chunk_id"])}

    # ----------------------------------------------------------------- internals
    def _count(self, expr: str) -> int:
        rows = self._client.query(self.collection, filter=expr, output_fields=["count(*)"])
        return int(rows[0]["count(*)"]) if rows else 0

    def _iterate(self, expr: str, fields: list[str]):  # noqa: ANN202 - rows
        iterator = self._client.query_iterator(self.collection, batch_size=1000, filter=expr, output_fields=fields)
        try:
            while True:
                batch = iterator.next()
                if not batch:
                    return
                yield from batch
        finally:
            iterator.close()

    def _hits(self, hits: Sequence[Mapping[str, Any]], scope: IndexScope, *, lexical: bool) -> IndexHits:
        rows = []
        for hit in hits:
            entity = hit.get("entity") or {}
            key = int(hit.get("key", entity.get("key")))
            # milvus-lite returns BM25 negated (its internal distance), Milvus positive: both are |score|; divided by
            # (k1 + 1), the factor Lucene's BM25 (and bm25s's "lucene" method) leaves out, so both backends agree.
            score = abs(float(hit["distance"])) / (1.0 + _BM25["bm25_k1"]) if lexical else float(hit["distance"])
            if (entity.get("tenant_id") != scope.tenant_id or entity.get("project_id") != scope.project_id
                    or not scope.admits_location(entity["tenant_id"], entity["project_id"], entity["doc_code"],
                                                 int(entity["page"]), int(entity["page_end"]))):
                raise StageInvariantError(
                    f"filter leak: Milvus returned key {key} of {entity.get('tenant_id')!r}/"
                    f"{entity.get('project_id')!r} for a search in {scope.tenant_id!r}/{scope.project_id!r}")
            rows.append((key, score, entity))
        # Best first; equal scores by key (the engines order ties differently).
        rows.sort(key=lambda r: (-r[1], r[0]))
        entries = []
        with self._lock:
            for key, _, entity in rows:
                entries.append(self._entry(key, entity))
                if "dense" in entity and entity["dense"] is not None:
                    where = (entity["tenant_id"], entity["project_id"], entity["doc_code"], int(entity["page"]),
                             int(entity["page_end"]))
                    self._vectors[key] = (np.asarray(entity["dense"], dtype=np.float32), where)
                    if len(self._vectors) > _CACHE_SIZE:
                        self._vectors.popitem(last=False)
        return IndexHits(np.asarray([r[0] for r in rows], dtype=np.int64),
                         np.asarray([r[1] for r in rows], dtype=np.float32), tuple(entries))

    def _entry(self, key: int, entity: Mapping[str, Any]) -> IndexedChunk:
        text = entity["chunk_json"]
        cached = self._entries.get((key, text))
        if cached is not None:
            self._entries.move_to_end((key, text))
            return cached
        entry = IndexedChunk(key=key, chunk=Chunk.model_validate_json(text),
                             kinds=frozenset(k for k in entity.get("kinds", "").split(",") if k),
                             qualifier=entity.get("qualifier") or None)
        self._entries[(key, text)] = entry
        if len(self._entries) > _CACHE_SIZE:
            self._entries.popitem(last=False)
        return entry


def _same_number(a: object, b: object) -> bool:
    try:
        return float(a) == float(b)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _short(text: str) -> str:
    return text if len(text) <= 80 else f"{text[:40]}…(sha {hashlib.sha256(text.encode()).hexdigest()[:12]})"
