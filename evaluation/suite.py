"""What a suite is given and what it gives back.

The CLI resolves everything once (data root, cache, LLM, subset) into an ``EvalContext`` and hands it to each
suite; a suite reads nothing from the environment. A suite returns a ``SuiteReport`` and, for every answer it
produced, an ``AnsweredItem`` (the answer with the pack it was validated against), which the grounding suite
scores across suites.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from contracts import Answer, ContextPack
from contracts.evaluation import SuiteReport

__all__ = ["AnsweredItem", "EvalContext", "Progress", "SuiteFunc", "SuiteOutput"]

Subset = Literal["full", "ci"]


class Progress(Protocol):
    """A suite's progress: ``start(label, total)`` once per phase, then ``advance()`` per item."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, n: int = 1) -> None: ...


class _SilentProgress:
    def start(self, label: str, total: int) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None


@dataclass(frozen=True)
class EvalContext:
    data_root: Path  # ../shared/data or $CITEBOUND_SHARED_DATA
    cache_dir: Path  # embeddings and built corpora, kept between runs (content-addressed)
    subset: Subset = "full"
    # The answering LLM as ``flows.backends`` specs it ({"backend": "extractive"} or openai + base_url, model);
    # suites build it with ``flows.backends.get_llm``.
    llm: dict[str, str] = field(default_factory=lambda: {"backend": "extractive"})
    resamples: int = 1000
    store_root: Path | None = None  # the user's store, for --questions
    tenant: str = "default"
    project: str = "default"
    questions_file: Path | None = None
    # A flows.backends.get_verifier name (``citebound``: the shipped model, or a model folder) turns the verifier
    # on (policy ``verify``); None, the default as in the product, runs the word checks alone.
    verifier: str | None = None
    progress: Progress = field(default_factory=_SilentProgress)
    # Where the suites build their corpora's indexes (``flows.index_backends.index_target``): None = FAISS in
    # memory, http://host:port = a Milvus server (a collection per corpus), a .db path = milvus-lite embedded.
    index_uri: str | None = None

    @property
    def verify(self) -> bool:
        return self.verifier is not None


@dataclass(frozen=True)
class AnsweredItem:
    """One answer a suite produced, with the pack it was validated against (for the grounding suite)."""

    suite: str
    dataset: str
    answer: Answer
    pack: ContextPack


@dataclass(frozen=True)
class SuiteOutput:
    report: SuiteReport
    answered: tuple[AnsweredItem, ...] = ()


# A suite: ``run(ctx, answered_so_far) -> SuiteOutput``; only grounding reads ``answered_so_far``.
SuiteFunc = Callable[[EvalContext, tuple[AnsweredItem, ...]], SuiteOutput]
