"""The hallucination suite: detection metrics on a hand-made verdict list (exact values and the seeded
interval), the dev/held split rule, the two answer forms and the baseline rule, and a run on the real data."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from contracts import GenerationPolicy
from contracts.errors import ConfigError
from evaluation.metrics import MetricMaker, bootstrap_interval, detection_counts
from evaluation.suite import EvalContext
from evaluation.suites import hallucination as suite

pytestmark = pytest.mark.unit

# Hand-made verdicts: truth = hallucinated, flagged = refused. TP 3, FN 1, FP 1, TN 3.
TRUTH = [True, True, True, True, False, False, False, False]
FLAGGED = [True, True, True, False, True, False, False, False]


def test_detection_metrics_on_known_verdicts_are_exact() -> None:
    maker = MetricMaker("hallucination", "halueval_dev_short", "hand-made", "dev", resamples=200)
    metrics = {m.name: m for m in suite.halueval_metrics(maker, TRUTH, FLAGGED)}
    assert metrics["precision"].value == pytest.approx(3 / 4)
    assert metrics["recall"].value == pytest.approx(3 / 4)
    assert metrics["F1"].value == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    assert metrics["balanced accuracy"].value == pytest.approx((3 / 4 + 3 / 4) / 2)
    kept = metrics["right answers kept"]
    assert (kept.value, kept.count, kept.n) == (pytest.approx(3 / 4), 3, 4)
    assert metrics["F1"].id == "hallucination.halueval_dev_short.F1" and metrics["F1"].split == "dev"
    assert metrics["right answers kept"].id == "hallucination.halueval_dev_short.right_answers_kept"
    # The interval is the seeded bootstrap over the (truth, flagged) pairs, recomputed here.
    rows = np.column_stack([TRUTH, FLAGGED])
    expected = bootstrap_interval(rows, lambda r: detection_counts(r[:, 0], r[:, 1]).f1, resamples=200,
                                  seed=zlib.crc32(b"hallucination.halueval_dev_short.F1"))
    assert metrics["F1"].ci == expected
    assert expected.low <= metrics["F1"].value <= expected.high


def test_a_detector_that_is_always_right_has_a_point_interval() -> None:
    maker = MetricMaker("hallucination", "x", "hand-made", resamples=100)
    for metric in suite.halueval_metrics(maker, TRUTH, TRUTH):
        assert metric.value == 1.0 and (metric.ci.low, metric.ci.high) == (1.0, 1.0), metric.name


def test_split_rule_and_missing_file(tmp_path: Path) -> None:
    assert suite.SPLITS["dev"] == range(0, 250) and suite.SPLITS["held"] == range(250, 500)
    folder = tmp_path / "halueval-qa"
    folder.mkdir()
    rows = [{"knowledge": f"k{n}", "question": f"q{n}", "right_answer": "a", "hallucinated_answer": "b"}
            for n in range(260)]
    (folder / "qa_one-turn_data.json").write_text("\n".join(map(json.dumps, rows)) + "\n")
    dev, held = suite.halueval_items(tmp_path, "dev"), suite.halueval_items(tmp_path, "held")
    assert [n for n, _ in dev] == list(range(250)) and [n for n, _ in held] == list(range(250, 260))
    assert held[0][1]["question"] == "q250"
    with pytest.raises(ConfigError, match="qa_one-turn_data.json"):
        suite.halueval_items(tmp_path / "nowhere", "dev")


def test_answer_forms_and_the_baseline_rule() -> None:
    assert suite.short_form("Delhi.", "HQA_1_0") == "Delhi [HQA_1_0]."
    assert suite.sentence_form("Where is it?", "Delhi", "S_0") == "Where is it: Delhi [S_0]."
    assert suite.sentence_form("Were A and B alike?", "no", "S_0") == "No — were A and B alike [S_0]."
    assert suite.ten_line_rule("Where is the office?", "The office is in Delhi.", "Delhi") is False
    assert suite.ten_line_rule("Where is the office?", "The office is in Delhi.", "Mumbai") is True


def test_reason_table_counts_per_code() -> None:
    verdicts, _ = suite.validate_halueval(
        [(0, {"knowledge": "The head office of Acme is in Delhi.", "question": "Where is Acme's head office?",
              "right_answer": "Delhi", "hallucinated_answer": "Mumbai"})], GenerationPolicy())
    table = suite.reason_table("dev", verdicts)
    cells = {row[0]: tuple(map(int, row[1:])) for row in table.rows}
    # Each column sums to one answer: one hallucinated and one right answer per form.
    assert [sum(col) for col in zip(*cells.values(), strict=True)] == [1, 1, 1, 1]
    assert cells["accepted"][1] == 1  # the right short answer is kept


def test_the_suite_on_the_real_data(shared_data: Path) -> None:
    output = suite.run(EvalContext(data_root=shared_data, cache_dir=Path("/nonexistent"), resamples=50), ())
    metrics = {m.id: m for m in output.report.metrics}
    for split in ("dev", "held"):
        for key in (f"halueval_{split}_short", f"halueval_{split}_sentence", f"halueval_{split}_baseline"):
            f1 = metrics[f"hallucination.{key}.F1"]
            assert f1.split == split and f1.n == 500, key
            assert metrics[f"hallucination.{key}.right_answers_kept"].n == 250
        assert "BASELINE" in metrics[f"hallucination.halueval_{split}_baseline.F1"].dataset
    # The baseline's figure is the ten-line rule recomputed on the dev half.
    pairs = [(h, suite.ten_line_rule(r["question"], r["knowledge"], r[a]))
             for _, r in suite.halueval_items(shared_data, "dev")
             for h, a in ((False, "right_answer"), (True, "hallucinated_answer"))]
    assert metrics["hallucination.halueval_dev_baseline.F1"].value == pytest.approx(
        detection_counts([t for t, _ in pairs], [f for _, f in pairs]).f1)
    rag = metrics["hallucination.ragtruth.recall"]
    assert rag.n == 6 and rag.split == "all"
    # An AnsweredItem for every validated answer: 2 splits x 250 records x 2 answers x 2 forms + 6 RAGTruth.
    assert len(output.answered) == 2006
    assert {t.title.split(":")[0] for t in output.report.tables} >= {"HaluEval QA dev half", "RAGTruth sample"}
