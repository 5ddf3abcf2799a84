"""``citebound eval`` at the edge: bad input is one line and exit 2, nothing written; the CI slice with
``--check`` passes the shipped floors, and its report opens in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.unit
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--suite", "nope"], "unknown suite"),
        (["--suite", "questions"], "--questions"),
        (["--questions", "/nonexistent/q.jsonl"], "no such file"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(argv, message, tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "out"
    assert main(["eval", "--out", str(out), "--store", str(tmp_path / "store"), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("citebound: ") and message in err and "\n" not in err
    assert not out.exists()


@pytest.mark.unit
def test_missing_data_is_a_config_error(tmp_path, capsys, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("CITEBOUND_SHARED_DATA", str(tmp_path / "no-data"))
    assert main(["eval", "--out", str(tmp_path / "out")]) == 2
    assert "no evaluation data" in capsys.readouterr().err


@pytest.mark.unit
def test_a_broken_floors_file_is_refused_before_any_suite_runs(tmp_path, capsys) -> None:  # noqa: ANN001
    floors = tmp_path / "floors.toml"
    floors.write_text("version = 'one'\n")
    assert main(["eval", "--out", str(tmp_path / "out"), "--floors", str(floors)]) == 2
    assert "floors file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
