"""No held eval item is quoted in the code, tests, docs or benches: held figures stay clean.

Held items: the SQuAD 2.0 held articles (``evaluation/data/squad_held_split.json``) and the retired held half
(reported as held before; quoting them now would make those reports unclean after the fact), the IPC held
question sets (``evaluation.splits.IPC_HELD``) and the HaluEval held half. Each one's id and its question text
(case, punctuation and spacing folded) are looked for in every tracked file under ``stages/``, ``tests/``,
``docs/``, ``bench/``, ``evaluation/`` and in ``README.md``, except the data files that are the held sets.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from evaluation import splits
from evaluation.corpora import ipc_queries
from evaluation.suites.hallucination import halueval_items

ROOT = Path(__file__).resolve().parent.parent
SCOPE = ("stages/", "tests/", "docs/", "bench/", "evaluation/", "README.md")
HELD_DATA = {"bench/data/ipc_questions.jsonl", "evaluation/data/squad_held_split.json",
             "evaluation/heldout/ipc_lay_v2.jsonl", "evaluation/heldout/claims_v1.jsonl",
             "evaluation/heldout/bns_lay_v1.jsonl", "evaluation/heldout/ncert_v1.jsonl"}
READER_HELD = ROOT / "evaluation" / "heldout"
BINARY = (".onnx", ".npy", ".pdf", ".png", ".jpg")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_-]*")


def _words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).split()


def held_items(data_root: Path) -> list[tuple[str, str | None, str]]:
    """(where from, id or None, question) of every held item."""
    articles = json.loads((data_root / "squad2-dev-subset" / "dev-v2.0.json").read_text(encoding="utf-8"))["data"]
    split = splits.squad_split(articles)
    items = [(f"SQuAD {'held' if a['title'] in split.held else 'retired held'} {a['title']}", qa["id"], qa["question"])
             for a in articles if a["title"] in set(split.held) | set(split.retired_held)
             for p in a["paragraphs"] for qa in p["qas"]]
    items += [(f"IPC {name}", qid, question) for name in splits.IPC_HELD for qid, question, _ in ipc_queries(name)]
    items += [("HaluEval held", None, rec["question"]) for _, rec in halueval_items(data_root, "held")]
    # The reader's held-out checks (issue 29): the lay IPC questions, out-of-scope questions and claims.
    for name, field in (("ipc_lay_v2.jsonl", "question"), ("claims_v1.jsonl", "claim"),
                        ("bns_lay_v1.jsonl", "question"), ("ncert_v1.jsonl", "question")):
        for line in (READER_HELD / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            items.append((f"Reader {name}", row["id"], row[field]))
    return items


def scoped_files(root: Path) -> dict[str, str]:
    names = subprocess.run(["git", "-C", str(root), "ls-files", "--", *SCOPE], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    return {n: (root / n).read_text(encoding="utf-8", errors="ignore") for n in names
            if n not in HELD_DATA and not n.endswith(BINARY) and (root / n).is_file()}


def quoted(items: list[tuple[str, str | None, str]], files: dict[str, str]) -> list[str]:
    """'file: where from, id' for each held item whose id or folded question text a file holds."""
    tokens: dict[str, set[str]] = defaultdict(set)
    starts: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    words_of = {}
    for name, text in files.items():
        for token in _TOKEN.findall(text.lower()):
            tokens[token].add(name)
        words = words_of[name] = _words(text)
        for i in range(len(words)):
            starts[tuple(words[i:i + 3])].append((name, i))
    hits = []
    for where, qid, question in items:
        if qid is not None:
            hits += [f"{name}: {where}, id {qid}" for name in sorted(tokens.get(qid.lower(), ()))]
        q = _words(question)
        if not q:
            continue
        found = {name for name, i in starts.get(tuple(q[:3]), ()) if words_of[name][i:i + len(q)] == q}
        hits += [f"{name}: {where}, question {qid or ''} (text)" for name in sorted(found)]
    return hits


def test_no_held_item_is_quoted_in_code_tests_docs_or_benches(shared_data: Path) -> None:
    items = held_items(shared_data)
    kinds = {where.split()[0] + " " + where.split()[1] for where, _, _ in items}
    assert {"SQuAD held", "SQuAD retired", "IPC heldout7", "IPC heldout9", "HaluEval held",
            "Reader ipc_lay_v2.jsonl", "Reader claims_v1.jsonl", "Reader bns_lay_v1.jsonl", "Reader ncert_v1.jsonl"} <= kinds
    assert sum(where.startswith("SQuAD held") for where, _, _ in items) == 766
    files = scoped_files(ROOT)
    assert "stages/grounding/question_alignment.py" in files and "README.md" in files
    assert quoted(items, files) == []


def test_the_search_finds_an_id_or_a_reworded_spacing_of_a_held_question(shared_data: Path) -> None:
    # The check itself can fail: a held question quoted with other case, spacing and punctuation is found, and so
    # is a bare id.
    where, qid, question = next(i for i in held_items(shared_data) if i[0].startswith("SQuAD held"))
    mangled = "  ".join(question.upper().split()).replace("?", " ?!")
    files = {"stages/x.py": f'"""Example: {mangled}"""', "tests/y.py": f"ID = '{qid}'", "docs/z.md": "nothing held"}
    assert quoted([(where, qid, question)], files) == [f"tests/y.py: {where}, id {qid}",
                                                      f"stages/x.py: {where}, question {qid} (text)"]


@pytest.mark.parametrize("name", sorted(HELD_DATA))
def test_the_held_data_files_left_out_of_the_search_exist(name: str) -> None:
    assert (ROOT / name).is_file()
