"""citebound's hand-off contracts and the artifact store that reads and writes them."""

from contracts._base import Contract, canonical_json, content_sha256, sha256_bytes, sha256_text
from contracts.answer import (
    DEFAULT_REFUSAL,
    Answer,
    AnswerStatus,
    CheckResult,
    Citation,
    DraftAnswer,
    GenerationPolicy,
    SentenceReport,
)
from contracts.catalog import AnswerRequest, Catalog, CatalogEntry, FileIngestReport, IngestReport
from contracts.config import (
    ChunkConfig,
    CleanConfig,
    EmbedConfig,
    ExtractConfig,
    IndexConfig,
    RetrieveConfig,
    config_sha256,
)
from contracts.errors import (
    ArtifactCorruptError,
    ArtifactNotFoundError,
    CiteboundError,
    ConfigError,
    ContractViolationError,
    IndexMismatchError,
    IngestError,
    LLMTransportError,
    StageInvariantError,
)
from contracts.index import EmbeddingSet, IndexManifest
from contracts.ingest import (
    Chunk,
    ChunkProvenance,
    ChunkSet,
    CleanedDocument,
    ExtractedDocument,
    PageSpan,
    PageText,
    Section,
    SourceDocument,
)
from contracts.retrieval import (
    ContextPack,
    QueryAnalysis,
    ResultMetadata,
    RetrievalResult,
    RetrievedItem,
    SectionRef,
)
from contracts.store import ArtifactHeader, ArtifactRef, ArtifactStore, RunRecord, RunStep, cache_key

__all__ = [name for name in dir() if not name.startswith("_")]
