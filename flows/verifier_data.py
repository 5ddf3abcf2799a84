"""The verifier's training data: pinned files read, hash-checked, parsed and turned into labelled pairs.

The files live outside the repository (``citebound train-verifier --data DIR``; public data sets, each folder
with its SOURCE.md). ``models/verifier/sources.json`` pins every file by sha256; a file that is missing or
differs stops the run before anything trains (``ConfigError`` naming it). What each data set becomes is decided
by the pure builders in ``stages.training``; this module only reads.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from contracts._base import sha256_file
from contracts.errors import ConfigError
from contracts.verifier import DataSource, LabelledPair
from stages.training.claim_pairs import boolq_pairs, halueval_pairs, multirc_pairs
from stages.training.nli_pairs import nli_pairs, sufficiency_pairs
from stages.training.selection_pairs import review_pairs, sentence_selection_pairs
from stages.training.squad_pairs import mrqa_as_squad, squad_pairs
from stages.training.statute_pairs import StatuteSection, statute_pairs

__all__ = ["check_sources", "read_sources", "training_pairs"]

SplitSentences = Callable[[str], list[str]]


def read_sources(path: Path) -> tuple[DataSource, ...]:
    try:
        return tuple(DataSource.model_validate(s) for s in json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the pinned training sources {path.name}: {exc}") from exc


def check_sources(data_dir: Path, sources: Sequence[DataSource]) -> None:
    """Every pinned file present with its sha256, else one ``ConfigError`` listing each that is not."""
    problems = []
    for source in sources:
        path = data_dir / source.path
        if not path.is_file():
            problems.append(f"{source.path}: missing")
        elif sha256_file(path) != source.sha256:
            problems.append(f"{source.path}: sha256 differs from the pinned {source.sha256[:12]}…")
    if problems:
        raise ConfigError("training data does not match models/verifier/sources.json: " + "; ".join(problems))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _jsonl(path: Path) -> Iterator[dict]:
    for line in _lines(path):
        if line.strip():
            yield json.loads(line)


def _tsv(path: Path) -> Iterator[dict]:
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as fh:
        yield from csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)


def _csv(path: Path) -> Iterator[dict]:
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as fh:
        yield from csv.DictReader(fh)


def _files(sources: Sequence[DataSource], name: str) -> list[str]:
    return [s.path for s in sources if s.name == name]


def training_pairs(
    data_dir: Path, sources: Sequence[DataSource], acts_dir: Path, *, seed: int, split_sentences: SplitSentences,
    squad_skip_titles: frozenset[str], statute_files: Sequence[str] = (),
) -> list[LabelledPair]:
    """Every labelled pair the pinned sources make, in a fixed order (data set by data set, file by file).

    ``acts_dir`` holds the statute JSON (``shared/data/indian-acts-json``), of which ``statute_files`` are read
    (pinned and checked by the caller); ``squad_skip_titles`` are SQuAD articles an eval suite uses (never read
    into training).
    """
    pairs: list[LabelledPair] = []
    for path in _files(sources, "squad2_dev_reconstructed"):
        articles = json.loads((data_dir / path).read_text(encoding="utf-8"))["data"]
        kept = [a for a in articles if a["title"] not in squad_skip_titles]
        pairs += squad_pairs(kept, seed=seed, split_sentences=split_sentences)
    for name in ("tydiqa", "policyqa"):
        for path in _files(sources, name):
            articles = json.loads((data_dir / path).read_text(encoding="utf-8"))["data"]
            pairs += squad_pairs(articles, seed=seed, source=name, split_sentences=split_sentences)
    for path in _files(sources, "mrqa_relation_extraction"):
        articles = mrqa_as_squad(list(_jsonl(data_dir / path)), "relation_extraction")
        pairs += squad_pairs(articles, seed=seed, source="relation_extraction", split_sentences=split_sentences)
    for path in _files(sources, "multirc"):
        pairs += multirc_pairs(_jsonl(data_dir / path), split_sentences=split_sentences)
    for path in _files(sources, "boolq"):
        pairs += boolq_pairs(_jsonl(data_dir / path))
    for name in ("mnli_binary", "fever_nli_binary"):
        for path in _files(sources, name):
            rows = (line.split("\t") for line in _lines(data_dir / path) if line.count("\t") == 2)
            pairs += nli_pairs(((p, h, label.replace("not_entailment", "neutral")) for label, p, h in rows),
                               source=f"nli.{name.removesuffix('_binary')}")
    for path in _files(sources, "halueval_qa_partial"):
        pairs += halueval_pairs(list(_jsonl(data_dir / path)), seed=seed)
    acts = []
    for name in statute_files:
        records = json.loads((acts_dir / name).read_text(encoding="utf-8"))
        sections, seen = [], set()
        for r in records:
            section = str(r.get("Section", r.get("section", ""))).strip()
            title = str(r.get("section_title", r.get("title", "")) or "").strip()
            text = str(r.get("section_desc", r.get("description", "")) or "").strip()
            if section and section not in seen and (title or text):
                seen.add(section)
                sections.append(StatuteSection(act=name.split(".")[0], section=section, title=title, text=text))
        acts.append(sections)
    pairs += statute_pairs(acts, seed=seed)
    for path in _files(sources, "qnli_dev"):
        pairs += sentence_selection_pairs(((r["question"], r["sentence"], r["label"] == "entailment")
                                           for r in _tsv(data_dir / path)), source="qnli")
    for path in _files(sources, "wikiqa"):
        pairs += sentence_selection_pairs(((r["Question"], r["Sentence"], r["Label"] == "1")
                                           for r in _tsv(data_dir / path)), source="wikiqa")
    for path in _files(sources, "subjqa"):
        rows = ((r["question"], r["review"].replace("ANSWERNOTFOUND", "").strip(),
                 None if r["human_ans_spans"] == "ANSWERNOTFOUND" else r["human_ans_spans"])
                for r in _csv(data_dir / path))
        pairs += review_pairs(rows, source="subjqa", split_sentences=split_sentences)
    for path in _files(sources, "glue_rte"):
        pairs += nli_pairs(((r["sentence1"], r["sentence2"], r["label"].replace("not_entailment", "neutral"))
                            for r in _tsv(data_dir / path)), source="nli.rte")
    for path in _files(sources, "sick"):
        pairs += nli_pairs(((r["sentence_A"], r["sentence_B"], r["entailment_judgment"])
                            for r in _tsv(data_dir / path)), source="nli.sick")
    snli = sorted(_files(sources, "snli"))
    for split in ("dev", "test"):
        premises = [p for p in snli if p.endswith(f"s1.{split}")]
        if premises:
            base = premises[0][: -len(f"s1.{split}")]
            rows = zip(_lines(data_dir / f"{base}s1.{split}"), _lines(data_dir / f"{base}s2.{split}"),
                       _lines(data_dir / f"{base}labels.{split}"), strict=True)
            pairs += nli_pairs(rows, source="nli.snli")
    fever = sorted(_files(sources, "fever_rte"))
    if fever:
        base = fever[0].rsplit("/", 1)[0]
        rows = zip(_lines(data_dir / f"{base}/dev.raw.input0"), _lines(data_dir / f"{base}/dev.raw.input1"),
                   (x.replace("not_entailment", "neutral") for x in _lines(data_dir / f"{base}/dev.label")),
                   strict=True)
        pairs += nli_pairs(rows, source="nli.fever")
    for path in _files(sources, "covidfact_rte"):
        # The dev file's header names its label column "entailment": the label is the last column in both.
        pairs += nli_pairs(((r["sentence1"], r["Sentence2"], list(r.values())[-1].replace("not_entailment", "neutral"))
                            for r in _tsv(data_dir / path)), source="nli.covidfact")
    for path in _files(sources, "climate_fever"):
        rows = ((e["evidence"], c["claim"], {"SUPPORTS": "entailment", "REFUTES": "contradiction"}.get(
                 e["evidence_label"], "neutral")) for c in _jsonl(data_dir / path) for e in c["evidences"])
        pairs += nli_pairs(rows, source="nli.climate_fever")
    for path in _files(sources, "fever_symmetric"):
        rows = ((r["evidence"], r["claim"], {"SUPPORTS": "entailment", "REFUTES": "contradiction"}.get(
                 r["gold_label"], "neutral")) for r in _jsonl(data_dir / path))
        pairs += nli_pairs(rows, source="nli.fever_symmetric")
    for path in _files(sources, "sufficient_facts"):
        pairs += sufficiency_pairs(_jsonl(data_dir / path), source="sufficient_facts")
    return pairs


def read_labelled_pairs(folder: Path, sources: Sequence[DataSource]) -> list[LabelledPair]:
    """The pinned JSON-lines files of ``LabelledPair`` in ``folder`` (checked first), in order."""
    check_sources(folder, sources)
    pairs: list[LabelledPair] = []
    for source in sources:
        for line in _lines(folder / source.path):
            if line.strip():
                pairs.append(LabelledPair.model_validate_json(line))
    return pairs
