"""RAGTruth sample (6 responses, 3 hallucinated) through citebound's validator, sentence by sentence.

    .venv/bin/python bench/ragtruth_eval.py

Packs and mechanical citations as in ``tests/ragtruth_packs.py``. For each response: the verdict, and for each
sentence the checks it failed, with the RAGTruth-labelled hallucinated spans marked, so one can see whether a
refusal lands on the labelled sentence or elsewhere. Six items yield no rates; this is a fixture, not a benchmark.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contracts.answer import GenerationPolicy  # noqa: E402
from stages.validate import validate_answer_text  # noqa: E402
from tests.ragtruth_packs import load_ragtruth  # noqa: E402

DATA = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data"))


def main() -> None:
    for item in load_ragtruth(DATA / "ragtruth-sample"):
        answer = validate_answer_text(item.answer, item.pack, GenerationPolicy())
        label = "hallucinated" if item.hallucinated else "clean"
        print(f"\n{item.response_id} {item.task_type:7} {label:12} -> {answer.status} ({answer.reason_code or 'accepted'})")
        for report in answer.sentences:
            failed = [c.reason_code for c in report.checks if not c.passed]
            marked = any(span[:40] in report.sentence or report.sentence[:40] in span for span in item.labels)
            if failed or marked:
                print(f"   {'LABELLED ' if marked else ''}{','.join(failed) or 'passed'}: {report.sentence[:110]!r}")


if __name__ == "__main__":
    main()
