"""A file's own failure is one row of the report, never a traceback on the console; what extraction repaired or
left out, and what is front matter or an exercise, is counted per file and said in one line each."""

from __future__ import annotations

import pymupdf
import pytest

from cli.ingest import print_ingest
from flows.ingest_flow import ingest_flow

pytestmark = [pytest.mark.integration]

PROSE = ("in the previous unit you have learnt that the element carbon has the unique property called catenation "
         "due to which it forms covalent bonds with other carbon atoms.")


def _pdf(path, pages):  # noqa: ANN001
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        if text:
            page.insert_textbox(pymupdf.Rect(72, 72, 520, 700), text, fontsize=11)
    doc.save(path)
    doc.close()


def test_blank_and_shifted_files_are_reported_in_one_line_each_without_a_traceback(
        prefect_harness, fake_backends, tmp_path, capfd):
    folder = tmp_path / "in"
    folder.mkdir()
    _pdf(folder / "blank.pdf", ["", ""])
    _pdf(folder / "kech202.pdf", ["".join(ch if ch == " " else chr(ord(ch) - 29) for ch in PROSE)])
    (folder / "act.txt").write_text("ARRANGEMENT OF SECTIONS\n1. Short title.\n2. Definitions.\n3. Theft.\n"
                                    "1. Short title.—This Act may be called the Toy Act.\n"
                                    "3. Theft.—Whoever takes a toy dishonestly commits theft.\n", encoding="utf-8")
    report = ingest_flow(paths=[str(folder)], store=str(tmp_path / "store"), embedder="hash", index_uri="faiss")
    by_name = {f.path.rsplit("/", 1)[-1]: f for f in report.files}
    assert (by_name["blank.pdf"].status, by_name["blank.pdf"].reason) == ("error", "no_text")
    assert "blank" in by_name["blank.pdf"].message
    shifted = by_name["kech202.pdf"]
    assert shifted.status == "ingested" and len(shifted.notes) == 1 and "reversed" in shifted.notes[0]
    assert by_name["act.txt"].n_front_matter == 1
    err = capfd.readouterr().err
    assert "IngestError" not in err and "blank.pdf" not in err  # the row says it; the console does not repeat it
    print_ingest(report)
    out = capfd.readouterr().out
    assert "kech202.pdf: 1 page(s) in a font whose character codes are 29 below" in out
    assert "front matter in act.txt: 1 chunk(s)" in out
