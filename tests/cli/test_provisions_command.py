"""``citebound provisions map`` / ``show`` on a temp store with two small codes (the real embedder)."""

from __future__ import annotations

import json

import pytest

from cli.main import main

pytestmark = pytest.mark.integration

OLD = [
    {"Section": 1, "section_title": "Theft", "section_desc": "Whoever dishonestly takes movable property out of "
                                                             "the possession of another person commits theft."},
    {"Section": 2, "section_title": "Punishment for theft",
     "section_desc": "Whoever commits theft shall be punished with imprisonment for three years, or fine."},
    {"Section": 3, "section_title": "Adultery", "section_desc": "Whoever has sexual intercourse with a person "
                                                                "who is the wife of another man commits adultery."},
]
NEW = ("ARRANGEMENT OF SECTIONS\n10. Theft.\n11. Extortion.\n"
       "10. Theft.—(1) Whoever dishonestly takes movable property out of the possession of another person commits "
       "theft.\n(2) Whoever commits theft shall be punished with imprisonment for three years, or fine.\n"
       "11. Extortion.—Whoever puts any person in fear of injury and thereby dishonestly induces him to deliver "
       "any property commits extortion.\n")


@pytest.fixture
def files(tmp_path):  # noqa: ANN201
    (tmp_path / "old.json").write_text(json.dumps(OLD), encoding="utf-8")
    (tmp_path / "new.txt").write_text(NEW, encoding="utf-8")
    return tmp_path


def test_map_prints_json_lines_and_show_prints_both_texts(files, capsys):
    store = str(files / "store")
    args = ["provisions", "map", "--from", "OLD", "--to", "NEW", "--from-file", str(files / "old.json"),
            "--to-file", str(files / "new.txt"), "--json", "--store", store]
    assert main(args) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["from_code"], r["from_section"], r["to_code"], r["to_sections"]) for r in rows] == [
        ("OLD", "1", "NEW", ["10"]), ("OLD", "2", "NEW", ["10"]), ("OLD", "3", "NEW", [])]
    assert all(isinstance(r["score"], float) for r in rows) and rows[2]["nearest"] in {"10", "11"}

    assert main(["provisions", "show", "OLD", "2", "--to", "NEW", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "OLD s.2 -> NEW s.10" in out and "Punishment for theft" in out and "(2) Whoever" in out  # both texts, side by side
    assert main(["provisions", "show", "OLD", "3", "--to", "NEW", "--store", store]) == 0
    assert "no successor in NEW" in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["provisions", "show", "OLD", "1", "--to", "NEW"], "no map from OLD to NEW"),
    (["provisions", "map", "--from", "OLD", "--to", "NEW"], "no ingested document has doc code 'OLD'"),
    (["provisions", "map", "--from", "OLD", "--to", "OLD"], "same code"),
    (["provisions", "map", "--from", "OLD", "--to", "NEW", "--from-file", "missing.json", "--to-file", "x"],
     "no such file"),
])
def test_bad_requests_get_one_line_and_exit_2(files, capsys, argv, says):
    assert main([*argv, "--store", str(files / "store")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_file_with_no_sections_is_refused_and_no_map_is_kept(files, capsys):
    (files / "empty.txt").write_text("nothing numbered here\n", encoding="utf-8")
    store = files / "store"
    argv = ["provisions", "map", "--from", "OLD", "--to", "NEW", "--from-file", str(files / "old.json"),
            "--to-file", str(files / "empty.txt"), "--store", str(store)]
    assert main(argv) == 2
    assert "no numbered sections found" in capsys.readouterr().err
    assert not list(store.glob("objects/provision_map.*/*/*.json"))
    assert main(["provisions", "show", "OLD", "1", "--to", "NEW", "--store", str(store)]) == 2
