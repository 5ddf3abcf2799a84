"""The questions suite (your own JSONL over your own store): reading the file (every bad line a one-line
ConfigError naming file and line), the rule matching expected entries to citations, outcomes, the metrics on known
outcomes (exact counts and the seeded bootstrap), and one run over a store ingested from the sample corpus."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from contracts import Answer, Citation
from contracts.errors import ConfigError
from evaluation.metrics import MetricMaker, bootstrap_interval
from evaluation.suite import EvalContext
from evaluation.suites import questions as suite
from evaluation.suites.questions import (
    Outcome,
    UserQuestion,
    citation_keys,
    contains_facts,
    load_questions,
    matches,
    norm_key,
    outcome_of,
    question_metrics,
    questions_table,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_QUESTIONS = ROOT / "samples" / "eval_questions.jsonl"


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ the file


def test_questions_are_read_with_defaults(tmp_path):
    path = _write(tmp_path, json.dumps({"question": " What is theft? ", "expected": ["IPC_378"]}), "",
                  json.dumps({"id": 7, "question": "Capital of Mars?", "expected": [], "facts": ["x", " "]}))
    got = load_questions(path)
    assert got == [UserQuestion(line=1, qid="line 1", question="What is theft?", expected=("IPC_378",)),
                   UserQuestion(line=3, qid="7", question="Capital of Mars?", expected=(), facts=("x",))]
    assert got[1].expects_refusal and not got[0].expects_refusal


@pytest.mark.parametrize(("line", "message"), [
    ('{"question": "a", "expected": [}', "not valid JSON"),
    ('["a", "b"]', "expected a JSON object"),
    ('{"expected": ["IPC"]}', "missing 'question'"),
    ('{"question": "  ", "expected": ["IPC"]}', "missing 'question'"),
    ('{"question": "a"}', "missing 'expected'"),
    ('{"question": "a", "expected": "IPC_379"}', "'expected' must be a list of strings"),
    ('{"question": "a", "expected": ["IPC"], "facts": [3]}', "'facts' must be a list of strings"),
])
def test_a_bad_line_is_a_one_line_config_error_naming_file_and_line(tmp_path, line, message):
    path = _write(tmp_path, json.dumps({"question": "fine", "expected": ["IPC"]}), line)
    with pytest.raises(ConfigError, match=message) as info:
        load_questions(path)
    assert str(info.value).startswith(f"{path}:2: ") and "\n" not in str(info.value)


def test_an_empty_or_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no questions"):
        load_questions(_write(tmp_path, "", "  "))
    with pytest.raises(ConfigError, match="nope.jsonl"):
        load_questions(tmp_path / "nope.jsonl")


def test_the_sample_file_is_valid_and_has_a_question_to_refuse():
    got = load_questions(SAMPLE_QUESTIONS)
    assert len(got) >= 5 and sum(q.expects_refusal for q in got) == 1


# ------------------------------------------------------------------------------------------ matching


CITATION = Citation(source_id="IPC_379_0", filename="model_penal_code.pdf", page=1, page_end=2, section_id="379",
                    chunk_id="c" * 64, doc_hash="d" * 64)


def test_keys_ignore_case_spaces_underscores_and_dots():
    assert norm_key("IPC 379") == norm_key("ipc_379") == norm_key("I.P.C. 379") == "ipc379"
    assert citation_keys(CITATION, "IPC") == {"ipc3790", "modelpenalcodepdf", "379", "ipc379", "ipc"}
    assert citation_keys(CITATION, None) == {"ipc3790", "modelpenalcodepdf", "379"}


@pytest.mark.parametrize("entry", ["IPC_379_0", "ipc 379", "IPC.379", "379", "IPC", "model_penal_code.pdf",
                                   "Model Penal Code.PDF"])
def test_an_expected_entry_matches_by_any_name(entry):
    assert matches([entry], [CITATION], {"IPC_379_0": "IPC"})


@pytest.mark.parametrize("entry", ["IPC_379A", "380", "IPC_380_0", "WagesAct", "wages_act.txt", "IPC_37"])
def test_other_entries_do_not_match(entry):
    assert not matches([entry], [CITATION], {"IPC_379_0": "IPC"})


def test_any_citation_may_match_and_the_doc_code_comes_from_the_pack():
    other = CITATION.model_copy(update={"source_id": "WagesAct_2_0", "filename": "w.pdf", "section_id": "2"})
    assert matches(["WagesAct_2"], [CITATION, other], {"WagesAct_2_0": "WagesAct"})
    assert not matches(["WagesAct_2"], [CITATION, other], {})  # without the pack's doc code: only "2" or the id
    assert not matches([], [CITATION], {"IPC_379_0": "IPC"})


def test_facts_ignore_case_and_spacing():
    assert contains_facts("imprisonment for  THREE\nyears, or fine", ["three years", "Fine"])
    assert not contains_facts("three years", ["three years", "fine"])


# ------------------------------------------------------------------------------------------ outcomes and metrics


def _uq(expected: tuple[str, ...] = ("IPC_379",), facts: tuple[str, ...] = ()) -> UserQuestion:
    return UserQuestion(line=1, qid="q", question="q?", expected=expected, facts=facts)


def test_outcome_of_each_status():
    ok = Answer(query="q", status="success", answer="Three years [IPC_379_0].", citations=(CITATION,))
    codes = {"IPC_379_0": "IPC"}
    assert outcome_of(_uq(facts=("three years",)), ok, codes) == Outcome(_uq(facts=("three years",)), "right",
                                                                         ("IPC_379_0",), None, True)
    assert outcome_of(_uq(facts=("seven years",)), ok, codes).facts_present is False
    assert outcome_of(_uq(), ok, codes).facts_present is None
    assert outcome_of(_uq(("IPC_420",)), ok, codes).kind == "wrong provision"
    assert outcome_of(_uq(()), ok, codes).kind == "wrong provision"  # an answer where a refusal was expected
    refused = Answer(query="q", status="low_confidence", answer="I cannot answer.", reason_code="low_confidence")
    assert (outcome_of(_uq(), refused, {}).kind, outcome_of(_uq(), refused, {}).reason) == ("refused", "low_confidence")
    failed = Answer(query="q", status="error", answer="I cannot answer.", reason_code="llm_transport_error")
    assert outcome_of(_uq(), failed, {}).kind == "error"


def _out(kind: str, *, refuse: bool = False, facts: bool | None = None) -> Outcome:
    return Outcome(_uq(() if refuse else ("IPC_379",)), kind, (), None, facts)


KNOWN = ([_out("right", facts=True)] * 3 + [_out("right", facts=False)] + [_out("right")]
         + [_out("wrong provision")] * 2 + [_out("refused")] * 2 + [_out("error")]
         + [_out("refused", refuse=True)] * 2 + [_out("wrong provision", refuse=True)])


def test_metrics_on_known_outcomes():
    maker = MetricMaker("questions", "own", "hand-made", resamples=300)
    metrics = {m.name: m for m in question_metrics(maker, KNOWN)}
    got = {name: (m.count, m.n, round(m.value, 6), m.higher_is_better) for name, m in metrics.items()}
    assert got == {
        "right": (5, 10, 0.5, True),
        "wrong provision": (2, 10, 0.2, False),
        "refused": (2, 10, 0.2, False),
        "answered precision": (5, 8, 0.625, True),  # 5 right of 8 answers (2 wrong + 1 where a refusal was due)
        "expected refusals refused": (2, 3, round(2 / 3, 6), True),
        "facts present": (3, 4, 0.75, True),
    }
    assert all(m.id == f"questions.own.{m.name.replace(' ', '_')}" and m.split == "all" for m in metrics.values())
    right = metrics["right"]
    assert right.ci == bootstrap_interval(np.array([1.0] * 5 + [0.0] * 5), np.mean, resamples=300,
                                          seed=zlib.crc32(b"questions.own.right"))
    assert right.ci.low < 0.5 < right.ci.high


def test_metrics_without_facts_or_refusals_are_left_out():
    names = [m.name for m in question_metrics(MetricMaker("questions", "own", "x", resamples=10),
                                              [_out("right"), _out("refused")])]
    assert names == ["right", "wrong provision", "refused", "answered precision"]


def test_table_has_a_row_per_question():
    table = questions_table(KNOWN[:2] + KNOWN[3:4] + KNOWN[-1:])
    assert table.columns == ("id", "question", "expected", "outcome", "cited", "reason")
    assert [r[3] for r in table.rows] == ["right", "right", "right", "wrong provision"]
    assert table.rows[2][5] == "facts missing" and table.rows[3][2] == "(refusal)"


# ------------------------------------------------------------------------------------------ the store


def test_a_store_without_an_index_is_a_config_error(tmp_path):
    path = _write(tmp_path, json.dumps({"question": "a", "expected": ["IPC"]}))
    (tmp_path / "empty").mkdir()
    for root, message in ((tmp_path / "empty", "has no index yet"), (tmp_path / "none", "is not a folder")):
        with pytest.raises(ConfigError, match=message):
            suite.run(EvalContext(data_root=tmp_path, cache_dir=tmp_path, store_root=root, questions_file=path), ())
    bad = _write(tmp_path, "not json")
    with pytest.raises(ConfigError, match=r"q.jsonl:1: not valid JSON"):  # the file is checked first
        suite.run(EvalContext(data_root=tmp_path, cache_dir=tmp_path, store_root=tmp_path / "empty",
                              questions_file=bad), ())


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory, prefect_harness) -> Path:
    """The text-layer PDF and the Markdown chapter of the sample corpus, ingested by the real flow (the scanned
    Act is left out: OCR would cost ~12 s)."""
    from flows.ingest_flow import ingest_flow

    root = tmp_path_factory.mktemp("questions") / "store"
    corpus = ROOT / "samples" / "corpus"
    for name, code in (("model_penal_code.pdf", "IPC"), ("ncert_chapter.md", "NCERT")):
        ingest_flow(paths=[str(corpus / name)], doc_code=code, store=str(root), ocr=False)
    return root


@pytest.mark.integration
def test_the_suite_over_the_sample_corpus(sample_store, tmp_path):
    rows = [line for line in SAMPLE_QUESTIONS.read_text().splitlines() if line and "WagesAct" not in line]
    path = _write(tmp_path, *rows)
    ctx = EvalContext(data_root=tmp_path, cache_dir=tmp_path, store_root=sample_store, questions_file=path,
                      resamples=50)
    out = suite.run(ctx, ())
    table = {r[0]: r for r in out.report.tables[0].rows}
    assert table["cheating-420"][3] == "right" and "IPC_420_0" in table["cheating-420"][4]
    assert table["off-topic"][3] == "refused"
    metrics = {m.name: m for m in out.report.metrics}
    kinds = [r[3] for r in out.report.tables[0].rows]
    answerable = [r for r in out.report.tables[0].rows if r[2] != "(refusal)"]
    assert (metrics["right"].count, metrics["right"].n) == (sum(r[3] == "right" for r in answerable), len(answerable))
    assert (metrics["expected refusals refused"].count, metrics["expected refusals refused"].n) == (1, 1)
    assert metrics["answered precision"].n == sum(k in ("right", "wrong provision") for k in kinds)
    # Each answer goes on with the pack it was validated against, read back from its run record.
    assert len(out.answered) == len(rows)
    for item in out.answered:
        assert {c.source_id for c in item.answer.citations} <= set(item.pack.sources)
    # A tenant with no documents in the store is bad input, not a row of refusals.
    with pytest.raises(ConfigError, match="no documents of tenant 'nobody'"):
        suite.run(EvalContext(data_root=tmp_path, cache_dir=tmp_path, store_root=sample_store, questions_file=path,
                              tenant="nobody"), ())
