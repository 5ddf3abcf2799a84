"""The refusal suite (SQuAD 2.0): the fixed split, question picking, gold matching, the metrics on known outcomes
(exact counts, rates and the seeded bootstrap), the reasons table, the risk-coverage points, and one run of the
whole suite on a tiny hand-written SQuAD file."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from contracts import Answer
from contracts.errors import ConfigError
from evaluation import splits
from evaluation.metrics import MetricMaker, bootstrap_interval
from evaluation.suite import EvalContext
from evaluation.suites import refusal
from evaluation.suites.refusal import (
    Outcome,
    SquadQuestion,
    ci_titles,
    curve_rows,
    has_gold,
    load_articles,
    outcome_of,
    pick_questions,
    reasons_table,
    split_metrics,
    write_articles,
)


def _q(i: int, impossible: bool, gold: tuple[str, ...] = ("x",)) -> SquadQuestion:
    return SquadQuestion(qid=f"q{i}", title="T", question=f"question {i}?", impossible=impossible,
                         gold=() if impossible else gold)


def _o(impossible: bool, status: str, *, right: bool = False, reason: str | None = None,
       confidence: float | None = None) -> Outcome:
    return Outcome(question=_q(0, impossible), status=status, reason=reason, confidence=confidence,
                   gold_in_answer=right)


# ------------------------------------------------------------------------------------------ split and data


def _manifest(tmp_path, articles: list[dict], held: list[str], excluded: tuple[str, ...] = ()):  # noqa: ANN001, ANN202
    path = tmp_path / "split.json"
    path.write_text(json.dumps({"held": [{"title": a["title"], "sha256": splits.question_digest(a)}
                                         for a in articles if a["title"] in held],
                                "excluded_ids": list(excluded), "retired_held": []}))
    return path


def test_held_is_what_the_manifest_records_and_every_other_article_is_dev(tmp_path):
    articles = _articles()
    split = splits.squad_split(articles, _manifest(tmp_path, articles, ["Zed"], excluded=("id4",)))
    assert (split.titles("dev"), split.titles("held"), split.excluded_ids) == (["Alpha"], ["Zed"], {"id4"})


def test_a_held_article_whose_questions_changed_or_vanished_stops_the_run(tmp_path):
    articles = _articles()
    manifest = _manifest(tmp_path, articles, ["Zed"])
    changed = json.loads(json.dumps(articles))
    changed[0]["paragraphs"][0]["qas"][0]["question"] = "a reworded question"
    with pytest.raises(ConfigError, match="Zed: its questions differ"):
        splits.squad_split(changed, manifest)
    with pytest.raises(ConfigError, match="Zed: not in the data"):
        splits.squad_split(articles[1:], manifest)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ConfigError, match="cannot read the SQuAD held split"):
        splits.squad_split(articles, tmp_path / "broken.json")


def test_split_of_the_real_file_is_the_recorded_one(shared_data):
    articles = load_articles(shared_data)
    split = splits.squad_split(articles)
    assert split.titles("held") == ["French_and_Indian_War", "Imperialism"]
    assert len(split.titles("dev")) == 14 and not set(split.dev) & set(split.held)
    # The old held half (odd positions of the sorted titles) is retired to dev: its figures were reported.
    assert set(split.retired_held) == set(sorted(a["title"] for a in articles)[1::2]) <= set(split.dev)
    assert len(split.excluded_ids) == 28
    assert ci_titles(articles, split.titles("dev")) == ["1973_oil_crisis", "Packet_switching"]
    held_ids = {qa["id"] for a in articles if a["title"] in split.held for p in a["paragraphs"] for qa in p["qas"]}
    assert split.excluded_ids <= held_ids
    picked = pick_questions(articles, split.titles("held"), 400, split.excluded_ids)
    assert len(picked) == 766 - 28 and not {q.qid for q in picked} & split.excluded_ids


def _articles() -> list[dict]:
    def qa(i: int, impossible: bool) -> dict:
        return {"id": f"id{i}", "question": f"q{i}", "is_impossible": impossible,
                "answers": [] if impossible else [{"text": f"gold{i}", "answer_start": 0}]}

    return [
        {"title": "Zed", "paragraphs": [{"context": "z " * 50, "qas": [qa(100, False)]}]},
        {"title": "Alpha", "paragraphs": [{"context": "short text", "qas": [qa(i, i % 2 == 1) for i in range(10)]},
                                          {"context": "more", "qas": [qa(i, i % 2 == 1) for i in range(10, 14)]}]},
    ]


def test_questions_are_taken_evenly_per_class_in_file_order():
    picked = pick_questions(_articles(), ["Alpha"], per_class=3)
    # 7 answerable (0, 2, ..., 12): step 7 // 3 = 2 -> 0, 4, 8; 7 unanswerable (1, ..., 13): 1, 5, 9.
    assert [q.qid for q in picked] == ["id0", "id4", "id8", "id1", "id5", "id9"]
    assert [q.impossible for q in picked] == [False] * 3 + [True] * 3
    assert picked[0].gold == ("gold0",) and picked[3].gold == ()
    assert len(pick_questions(_articles(), ["Alpha"], per_class=160)) == 14  # fewer than asked: all of them


def test_ci_titles_are_the_shortest_articles():
    assert ci_titles(_articles(), ["Alpha", "Zed"]) == ["Alpha", "Zed"]
    assert ci_titles(_articles() + [{"title": "Mid", "paragraphs": [{"context": "m" * 30, "qas": []}]}],
                     ["Alpha", "Zed", "Mid"]) == ["Alpha", "Mid"]


def test_articles_are_written_once(tmp_path):
    files = write_articles(_articles(), ["Alpha"], tmp_path / "arts")
    (path, code), = files.items()
    assert code == "Alpha" and path.read_text() == "Alpha\n\nshort text\n\nmore\n"
    before = path.stat().st_mtime_ns
    write_articles(_articles(), ["Alpha"], tmp_path / "arts")
    assert path.stat().st_mtime_ns == before
    assert not list((tmp_path / "arts").glob(".*tmp"))


def test_a_missing_data_file_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="dev-v2.0.json"):
        load_articles(tmp_path)


# ------------------------------------------------------------------------------------------ scoring


def test_gold_is_found_ignoring_case_and_spacing():
    assert has_gold("It was  founded by\nAnsel KORRIN in 1821.", ["Ansel Korrin"])
    assert has_gold("in 1821", ["nobody", "1821"])
    assert not has_gold("It was founded by Ansel.", ["Ansel Korrin"])
    assert not has_gold("anything", ["", "  "])


def test_outcome_of_each_status():
    q = _q(1, False, ("Korrin",))
    ok = Answer(query="q", status="success", answer="By Korrin [A_1_0].", confidence=0.7)
    assert outcome_of(q, ok) == Outcome(q, "answered", None, 0.7, True)
    refused = Answer(query="q", status="insufficient_context", answer="no", reason_code="question_detail_missing")
    assert outcome_of(q, refused).status == "refused" and outcome_of(q, refused).reason == "question_detail_missing"
    assert outcome_of(q, Answer(query="q", status="low_confidence", answer="no")).reason == "low_confidence"
    assert outcome_of(q, Answer(query="q", status="error", answer="no", reason_code="internal_error")).status == "error"
    assert not outcome_of(_q(2, True), ok).right  # an unanswerable question answered is never right


OUTCOMES = (
    # unanswerable: 3 refused, 1 answered, 1 error
    [_o(True, "refused", reason="low_confidence")] * 2 + [_o(True, "refused", reason="question_detail_missing")]
    + [_o(True, "answered", confidence=0.8)] + [_o(True, "error", reason="internal_error")]
    # answerable: 3 answered with gold, 1 without, 2 refused
    + [_o(False, "answered", right=True, confidence=c) for c in (0.9, 0.6, 0.35)]
    + [_o(False, "answered", confidence=0.5)] + [_o(False, "refused", reason="low_confidence")] * 2
)


def test_split_metrics_on_known_outcomes():
    maker = MetricMaker("refusal", "squad_dev", "hand-made", split="dev", resamples=200)
    metrics = {m.name: m for m in split_metrics(maker, OUTCOMES)}
    assert list(metrics) == ["unanswerable refused", "answerable answered", "answerable gold in answer",
                             "answered precision", "answerability ROC AUC"]
    auc = metrics.pop("answerability ROC AUC")
    assert 0.0 <= auc.value <= 1.0 and auc.n == len(OUTCOMES)
    got = {name: (m.count, m.n, m.value) for name, m in metrics.items()}
    assert got == {"unanswerable refused": (3, 5, 0.6), "answerable answered": (4, 6, 4 / 6),
                   "answerable gold in answer": (3, 6, 0.5), "answered precision": (3, 5, 0.6)}
    for m in metrics.values():
        assert m.id == f"refusal.squad_dev.{m.name.replace(' ', '_')}" and m.split == "dev"
    # The interval is the seeded bootstrap over the items of that metric.
    precision = metrics["answered precision"]
    expected = bootstrap_interval(np.array([0.0, 1, 1, 1, 0]), np.mean, resamples=200,
                                  seed=zlib.crc32(precision.id.encode()))
    assert precision.ci == expected and expected.low <= 0.6 <= expected.high
    constant = split_metrics(maker, [_o(True, "refused", reason="low_confidence")] * 4
                             + [_o(False, "answered", right=True, confidence=0.9)] * 3)
    assert all((m.value, m.ci.low, m.ci.high) == (1.0, 1.0, 1.0) for m in constant if "AUC" not in m.name)


def test_reasons_table_counts_per_class():
    table = reasons_table("dev", OUTCOMES)
    assert table.columns == ("reason code", "unanswerable", "answerable")
    assert table.rows == (("low_confidence", "2", "2"), ("internal_error", "1", "0"),
                          ("question_detail_missing", "1", "0"))
    assert table.note  # says errors are in it


def test_risk_coverage_points():
    rows = {round(t, 2): (c, r, g, w) for t, c, r, g, w in curve_rows(OUTCOMES)}
    # 11 questions; given at 0: 5 answers, 2 wrong (the unanswerable one at 0.8 and the no-gold one at 0.5).
    assert rows[0.0] == (5 / 11, 2 / 5, 5, 2)
    assert rows[0.4] == (4 / 11, 2 / 4, 4, 2)  # the right answer at 0.35 drops out
    assert rows[0.6] == (3 / 11, 1 / 3, 3, 1)
    assert rows[0.9] == (1 / 11, 0.0, 1, 0)


# ------------------------------------------------------------------------------------------ the suite


def _tiny_squad(root) -> None:  # noqa: ANN001
    """Two fictional articles written for this test: "Brightwater" is held (by the test's manifest), "Aldermoor" dev."""
    def qa(qid: str, question: str, gold: str | None) -> dict:
        return {"id": qid, "question": question, "is_impossible": gold is None,
                "answers": [{"text": gold, "answer_start": 0}] if gold else []}

    data = {"version": "v2.0", "data": [
        {"title": "Brightwater", "paragraphs": [{"context": (
            "Brightwater is a fishing harbour on a rocky northern coast. Its stone lighthouse was completed in 1887 "
            "by the engineer Mirela Voss, who also designed the harbour wall. The lighthouse lamp was converted to "
            "electricity in 1931."), "qas": [
                qa("b1", "Who designed the Brightwater harbour wall?", "Mirela Voss"),
                qa("b2", "What is the population of Brightwater's twin city in Peru?", None)]}]},
        {"title": "Aldermoor", "paragraphs": [{"context": (
            "Aldermoor is a market town known for its wool trade. The town's covered market hall was built in 1764 "
            "and holds a weekly fair every Thursday. The river Tarrow runs along the eastern edge of the town."),
            "qas": [qa("a1", "On which day is the weekly fair held in Aldermoor?", "Thursday"),
                    qa("a2", "Which football club won the 1998 championship of Aldermoor?", None)]}]},
    ]}
    (root / "squad2-dev-subset").mkdir(parents=True)
    (root / "squad2-dev-subset" / "dev-v2.0.json").write_text(json.dumps(data))


@pytest.mark.integration
def test_the_suite_on_two_tiny_articles(tmp_path, monkeypatch):
    _tiny_squad(tmp_path / "data")
    articles = load_articles(tmp_path / "data")
    monkeypatch.setattr(splits, "SQUAD_MANIFEST", _manifest(tmp_path, articles, ["Brightwater"]))
    ctx = EvalContext(data_root=tmp_path / "data", cache_dir=tmp_path / "cache", resamples=50)
    out = refusal.run(ctx, ())
    report = out.report
    ids = [m.id for m in report.metrics]
    assert ids == [f"refusal.squad_{s}.{n}" for s in ("dev", "held") for n in (
        "unanswerable_refused", "answerable_answered", "answerable_gold_in_answer", "answered_precision",
        "answerability_ROC_AUC")]
    assert [m.split for m in report.metrics] == ["dev"] * 5 + ["held"] * 5
    assert "dev half: 1 article (Aldermoor), 1 answerable + 1 unanswerable" in report.metrics[0].dataset
    # Every answer is handed on, with its pack, for the grounding suite.
    assert len(out.answered) == 4 and {a.dataset for a in out.answered} == {"squad_dev", "squad_held"}
    by_q = {a.answer.query: a.answer for a in out.answered}
    fair = by_q["On which day is the weekly fair held in Aldermoor?"]
    assert fair.status == "success" and "thursday" in fair.answer.lower()
    assert by_q["What is the population of Brightwater's twin city in Peru?"].status != "success"
    # The figures are the ones the answers give.
    dev = {m.name: m for m in report.metrics if m.split == "dev"}
    assert (dev["answerable gold in answer"].count, dev["answerable gold in answer"].n) == (1, 1)
    assert report.plots and report.plots[0].svg.startswith("<svg")
    assert [t.title for t in report.tables] == ["Refusal reasons, dev half", "Refusal reasons, held half",
                                                "Risk–coverage over the confidence threshold"]
    assert len(report.tables[2].rows) == 2 * len(refusal.THRESHOLDS)
    assert (tmp_path / "cache" / "squad-articles" / "Aldermoor.txt").is_file()
    assert list((tmp_path / "cache").glob("vectors-*.npz"))
