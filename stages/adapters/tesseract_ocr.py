"""Tesseract OCR through pytesseract, page-parallel in worker processes (implements ``OcrEngine``).

Tesseract's own OpenMP threading is 7-9x slower on 2 cores than one thread per process (see STACK_NOTES), so
every page is read in a worker process whose environment has ``OMP_THREAD_LIMIT=1``, and pages run in
parallel, one worker per core. ``ocr_png`` goes through the same pool (the limit never leaks into the calling
process). One ``image_to_data`` run per page gives both the text (words re-joined by line and paragraph) and
the mean word confidence (0-100; ``None`` when no word was found).

The pool is created on first use and kept; ``close()`` (or ``with TesseractOcr() as ocr:``) ends it.
A missing ``tesseract`` binary or language pack raises ``OcrUnavailableError`` (a ``CiteboundError``).

>>> TesseractOcr(workers=1).workers
1
"""

from __future__ import annotations

import io
import multiprocessing
import os
import shutil
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from contracts.errors import CiteboundError

__all__ = ["TesseractOcr", "OcrUnavailableError", "OcrFailedError", "words_to_text"]


class OcrUnavailableError(CiteboundError):
    """Raised when the tesseract binary or the requested language data is not installed."""


class OcrFailedError(CiteboundError):
    """Raised when tesseract fails on a page image for another reason (its message is kept)."""


def _init_worker() -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"


def words_to_text(data: dict[str, list[Any]]) -> tuple[str, float | None]:
    """Text and mean confidence from pytesseract's ``image_to_data`` dict (words joined by line/paragraph).

    >>> d = {"text": ["Rule", "2.", "", "Definitions"], "conf": [90, 80, -1, 70],
    ...      "block_num": [1, 1, 1, 1], "par_num": [1, 1, 1, 2], "line_num": [1, 1, 1, 1]}
    >>> words_to_text(d)
    ('Rule 2.\\n\\nDefinitions', 80.0)
    """
    paragraphs: list[list[list[str]]] = []
    last_par: tuple[int, int] | None = None
    last_line: tuple[int, int, int] | None = None
    confidences: list[float] = []
    for i, word in enumerate(data["text"]):
        word = (word or "").strip()
        if not word:
            continue
        try:
            conf = float(data["conf"][i])
        except (TypeError, ValueError):
            conf = -1.0
        if conf >= 0:
            confidences.append(conf)
        par = (int(data["block_num"][i]), int(data["par_num"][i]))
        line = (*par, int(data["line_num"][i]))
        if par != last_par:
            paragraphs.append([[]])
            last_par, last_line = par, line
        elif line != last_line:
            paragraphs[-1].append([])
            last_line = line
        paragraphs[-1][-1].append(word)
    text = "\n\n".join("\n".join(" ".join(words) for words in par) for par in paragraphs)
    mean = round(sum(confidences) / len(confidences), 2) if confidences else None
    return text, mean


def _ocr_one(png: bytes, lang: str, tesseract_cmd: str, config: str) -> tuple[str, float | None]:
    import pytesseract
    from PIL import Image

    pytesseract.pytesseract.tesseract_cmd = tesseract_cmd
    try:
        with Image.open(io.BytesIO(png)) as image:
            data = pytesseract.image_to_data(image, lang=lang, config=config, output_type=pytesseract.Output.DICT)
    except pytesseract.TesseractNotFoundError as exc:
        raise OcrUnavailableError(f"tesseract not found at {tesseract_cmd!r}: install tesseract-ocr") from exc
    except pytesseract.TesseractError as exc:
        message = str(exc)
        if "Failed loading language" in message or "Error opening data file" in message:
            raise OcrUnavailableError(
                f"tesseract has no data for language {lang!r}: install tesseract-ocr-{lang}"
            ) from exc
        raise OcrFailedError(f"tesseract failed: {message}") from exc
    return words_to_text(data)


class TesseractOcr:
    """``OcrEngine`` over the tesseract CLI; ``ocr_many`` reads pages in parallel processes."""

    def __init__(self, *, workers: int | None = None, tesseract_cmd: str = "tesseract", config: str = "") -> None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.workers = max(1, workers if workers is not None else cores)
        self.tesseract_cmd = tesseract_cmd
        self.config = config
        self._pool: ProcessPoolExecutor | None = None

    def _check_binary(self) -> str:
        found = shutil.which(self.tesseract_cmd)
        if found is None:
            raise OcrUnavailableError(
                f"tesseract binary {self.tesseract_cmd!r} not found: install tesseract-ocr (Debian: apt-get install "
                "tesseract-ocr) or run with OCR off"
            )
        return found

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # fork where the OS has it: spawn/forkserver re-import __main__, which breaks callers run from
            # stdin, a notebook or a REPL. The workers only run pytesseract + PIL, nothing of the parent's threads.
            method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context(method), initializer=_init_worker
            )
        return self._pool

    def ocr_many(self, pngs: Sequence[bytes], *, lang: str = "eng") -> list[tuple[str, float | None]]:
        """Text and mean confidence of each page image, in input order, pages read in parallel."""
        if not pngs:
            return []
        cmd = self._check_binary()
        pool = self._executor()
        futures = [pool.submit(_ocr_one, png, lang, cmd, self.config) for png in pngs]
        return [f.result() for f in futures]

    def ocr_png(self, png: bytes, *, lang: str = "eng") -> tuple[str, float | None]:
        """Text and mean confidence (0-100) of one page image."""
        return self.ocr_many([png], lang=lang)[0]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> TesseractOcr:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_pool"] = None  # a pool cannot travel to another process; it is rebuilt there on first use
        return state
