"""Tesseract OCR, pages read in parallel by ``tesseract`` processes that die with their caller (``OcrEngine``).

Tesseract's own OpenMP threading is 7-9x slower on 2 cores than one thread per process (see STACK_NOTES), so
every page is read by its own ``tesseract`` run with ``OMP_THREAD_LIMIT=1`` (set for that run only), one run
per core at a time. One run per page gives both the text (words re-joined by line and paragraph) and the mean
word confidence (0-100; ``None`` when no word was found); pytesseract parses its TSV.

No process of ours outlives or holds anything of the process that asks (``citebound api`` reads uploads with
it: a ``fork`` pool of Python workers, as this module once had, copied uvicorn's listening socket into every
worker and kept the port after the API died):

- there are no worker processes to fork: threads of the caller wait on ``tesseract`` runs, each started by
  ``exec`` with ``close_fds``, so a run holds no socket or file of the caller (and a fork-free start works
  from a script, stdin or a notebook, where ``spawn``/``forkserver`` workers would re-import ``__main__``);
- each run asks the kernel for SIGKILL when the process that started it dies (``PR_SET_PDEATHSIG``, set by a
  two-line ``exec`` wrapper (``stages.adapters.child_process``), which also checks that the caller is still there),
  so a SIGKILL of the API or of ``citebound ingest`` ends every OCR run with it.

``close()`` (or ``with TesseractOcr() as ocr:``) ends the threads. A missing ``tesseract`` binary or language
pack raises ``OcrUnavailableError`` (a ``CiteboundError``).

>>> TesseractOcr(workers=1).workers
1
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from contracts.errors import CiteboundError, OcrUnavailableError
from stages.adapters.child_process import dying_with_parent

__all__ = ["TesseractOcr", "OcrUnavailableError", "OcrFailedError", "words_to_text"]



class OcrFailedError(CiteboundError):
    """Raised when tesseract fails on a page image for another reason (its message is kept)."""


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


def _tesseract_args(tesseract_cmd: str, lang: str, config: str) -> list[str]:
    """The arguments pytesseract's ``image_to_data`` gives tesseract, with the image on stdin and the TSV on stdout,
    behind the wrapper that ties the run's life to this process."""
    return dying_with_parent([tesseract_cmd, "stdin", "stdout", "-l", lang, "-c", "tessedit_create_tsv=1",
                              *shlex.split(config)])


def _ocr_one(png: bytes, lang: str, tesseract_cmd: str, config: str) -> tuple[str, float | None]:
    from pytesseract import pytesseract as tess

    proc = subprocess.run(_tesseract_args(tesseract_cmd, lang, config), input=png, capture_output=True, check=False,
                          env={**os.environ, "OMP_THREAD_LIMIT": "1"})
    if proc.returncode:
        message = " ".join(tess.get_errors(proc.stderr).split())
        if "Failed loading language" in message or "Error opening data file" in message:
            raise OcrUnavailableError(f"tesseract has no data for language {lang!r}: install tesseract-ocr-{lang}")
        if proc.returncode < 0 or not message:
            raise OcrFailedError(f"tesseract ended with exit status {proc.returncode} and no message")
        raise OcrFailedError(f"tesseract failed: {message[:300]}")
    return words_to_text(tess.file_to_dict(proc.stdout.decode("utf-8", errors="replace"), "\t", -1))


class TesseractOcr:
    """``OcrEngine`` over the tesseract CLI; ``ocr_many`` reads pages in parallel ``tesseract`` runs."""

    def __init__(self, *, workers: int | None = None, tesseract_cmd: str = "tesseract", config: str = "") -> None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.workers = max(1, workers if workers is not None else cores)
        self.tesseract_cmd = tesseract_cmd
        self.config = config
        self._pool: ThreadPoolExecutor | None = None

    def _check_binary(self) -> str:
        found = shutil.which(self.tesseract_cmd)
        if found is None:
            raise OcrUnavailableError(
                f"tesseract binary {self.tesseract_cmd!r} not found: install tesseract-ocr (Debian: apt-get install "
                "tesseract-ocr) or run with OCR off"
            )
        return found

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="tesseract")
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
        state["_pool"] = None  # threads cannot travel to another process; they are started there on first use
        return state
