"""Deterministic, discriminating test doubles: HashEmbedder, ScriptedLLM, FakeOcr, WordOverlapVerifier."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

import numpy as np

from contracts.generation import Generation, GenerationRequest
from contracts.verifier import VerifierPair
from stages.generation.prompt import render_prompt

__all__ = ["HashEmbedder", "ScriptedLLM", "FakeOcr", "WordOverlapVerifier"]

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Bag-of-words embedder seeded by sha256 of each word, L2-normalised.

    Texts sharing words get similar vectors (so retrieval tests can tell texts apart and rank them);
    identical texts get identical vectors; no model is loaded.
    """

    def __init__(self, dim: int = 64, model_name: str = "hash-embedder", model_revision: str = "1") -> None:
        self._dim = dim
        self._name = model_name
        self._rev = model_revision
        self.calls = 0
        self.texts_embedded = 0

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def model_revision(self) -> str:
        return self._rev

    @property
    def dim(self) -> int:
        return self._dim

    def _word_vector(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self._dim).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = _WORD.findall(text.lower()) or ["<empty>"]
            for w in words:
                out[i] += self._word_vector(w)
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-12)
        return out


class ScriptedLLM:
    """Returns scripted outputs in order (or from a function of the prompt it renders, as a language-model
    backend would send it); records every prompt and request."""

    def __init__(self, responses: Sequence[str] | Callable[[str], str], name: str = "scripted") -> None:
        self._responses = responses
        self._name = name
        self.prompts: list[str] = []
        self.requests: list[GenerationRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def generate(self, request: GenerationRequest) -> Generation:
        prompt = render_prompt(request)
        self.prompts.append(prompt)
        self.requests.append(request)
        if callable(self._responses):
            return Generation(text=self._responses(prompt), prompt=prompt)
        return Generation(text=self._responses[min(len(self.prompts) - 1, len(self._responses) - 1)], prompt=prompt)


class FakeOcr:
    """OCR engine returning fixed text per call order, with a fixed confidence."""

    def __init__(self, texts: Sequence[str], confidence: float = 91.0) -> None:
        self._texts = list(texts)
        self.confidence = confidence
        self.calls = 0

    def ocr_png(self, png: bytes, *, lang: str = "eng") -> tuple[str, float | None]:
        assert png[:8] == b"\x89PNG\r\n\x1a\n", "OCR engines receive PNG bytes"
        text = self._texts[min(self.calls, len(self._texts) - 1)]
        self.calls += 1
        return text, self.confidence


class LanguageOcr:
    """OCR engine answering by language: ``readings`` maps a Tesseract language to (text, confidence); a language
    it lacks raises ``OcrUnavailableError`` as Tesseract without that language's data does. Records each
    (lang, page count) call."""

    def __init__(self, readings: dict[str, tuple[str, float | None]]) -> None:
        self.readings = dict(readings)
        self.calls: list[tuple[str, int]] = []

    def ocr_many(self, pngs: Sequence[bytes], *, lang: str = "eng") -> list[tuple[str, float | None]]:
        from contracts.errors import OcrUnavailableError

        assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs), "OCR engines receive PNG bytes"
        self.calls.append((lang, len(pngs)))
        if lang not in self.readings:
            raise OcrUnavailableError(f"tesseract has no data for language {lang!r}: install tesseract-ocr-{lang}")
        return [self.readings[lang]] * len(pngs)

    def ocr_png(self, png: bytes, *, lang: str = "eng") -> tuple[str, float | None]:
        return self.ocr_many([png], lang=lang)[0]


class WordOverlapVerifier:
    """A verifier double: P = the share of the text's words (and its question's, for a claim) found in the
    passage, so pairs are told apart the way a test can predict; ``scripted`` maps a substring to a fixed score,
    looked for in the pair's text first, then in its passage (first match wins). Records every pair it scored."""

    def __init__(self, scripted: dict[str, float] | None = None, name: str = "word-overlap-verifier") -> None:
        self._scripted = scripted or {}
        self._name = name
        self.pairs: list[VerifierPair] = []
        self.calls = 0

    @property
    def name(self) -> str:
        return self._name

    def score(self, pairs: Sequence[VerifierPair]) -> tuple[float, ...]:
        self.calls += 1
        self.pairs.extend(pairs)
        return tuple(self._one(p) for p in pairs)

    def _one(self, pair: VerifierPair) -> float:
        for field in (pair.text, pair.passage):
            for needle, value in self._scripted.items():
                if needle in field:
                    return value
        asked = set(_WORD.findall(f"{pair.question} {pair.text}".lower()))
        found = set(_WORD.findall(pair.passage.lower()))
        return len(asked & found) / len(asked) if asked else 0.0
