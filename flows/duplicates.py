"""Documents whose text is already in the store: ingestion reports them as duplicates instead of adding a twin.

Two files hold the same text when the words of their cleaned text are the same, in the same order
(``stages.text.normalise.words``: folded, every run of letters and digits): line breaks, page layout,
punctuation and quote marks do not count. A PDF and the plain text it was typeset from are one document; an
OCR'd scan whose recognised text differs by a word is not. Only documents of the same tenant and project are
compared (another tenant's holdings are never revealed).

The fingerprint of a catalogued document is read from its lineage (the chunk set's inputs lead to its cleaned
document), once per cleaned document per process: content-addressed, it never changes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from contracts import ArtifactStore, CatalogEntry, CleanedDocument, sha256_text
from contracts.errors import CiteboundError
from stages.text.normalise import words

__all__ = ["text_fingerprint", "TextFingerprints"]

# Any version of the cleaned document: its text is what a fingerprint reads (v1 stores are still read).
_CLEANED_KINDS = ("cleaned_document.v1", "cleaned_document.v2")
_MAX_DEPTH = 8
_cache: dict[str, str] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 50_000


def text_fingerprint(text: str) -> str:
    """sha256 of the text's words, space-joined: equal for texts that differ only in layout and punctuation.

    >>> text_fingerprint("Whoever  cheats,\\nshall be “punished”.") == text_fingerprint('whoever cheats shall be "punished"')
    True
    """
    return sha256_text(" ".join(words(text)))


class TextFingerprints:
    """Fingerprints of chunk sets' documents in one store (see the module docstring)."""

    def __init__(self, store: ArtifactStore) -> None:
        self.store = store
        self._by_set: dict[str, str | None] = {}

    def of_chunk_set(self, chunk_set_sha: str) -> str | None:
        """The fingerprint of the document a chunk set was cut from; None when its lineage cannot be read."""
        if chunk_set_sha not in self._by_set:
            self._by_set[chunk_set_sha] = self._read(f"chunk_set.v1:{chunk_set_sha}")
        return self._by_set[chunk_set_sha]

    def _read(self, ref: str) -> str | None:
        try:
            for _ in range(_MAX_DEPTH):
                header = self.store.header(ref)
                cleaned = [r for r in header.input_refs if r.kind in _CLEANED_KINDS]
                if cleaned:
                    sha = cleaned[0].sha256
                    with _cache_lock:
                        found = _cache.get(sha)
                    if found is None:
                        found = text_fingerprint(self.store.get(cleaned[0], CleanedDocument).text)
                        with _cache_lock:
                            if len(_cache) >= _CACHE_SIZE:
                                _cache.clear()
                            _cache[sha] = found
                    return found
                if not header.input_refs:
                    return None
                ref = header.input_refs[0]
        except CiteboundError:
            return None
        return None

    def duplicate_of(self, chunk_set_sha: str, doc_key: str, entries: Iterable[CatalogEntry], tenant_id: str,
                     project_id: str) -> CatalogEntry | None:
        """The catalogued document of the same tenant and project (another than ``doc_key``) with the same text."""
        mine = self.of_chunk_set(chunk_set_sha)
        if mine is None:
            return None
        for entry in entries:
            if (entry.doc_key != doc_key and entry.tenant_id == tenant_id and entry.project_id == project_id
                    and self.of_chunk_set(entry.chunk_set_sha256) == mine):
                return entry
        return None
