"""The reference site builds: ``mkdocs build --strict`` over ``mkdocs.yml`` and ``docs/``, with no warning.

Strict mode turns every MkDocs warning into a failure: a link to a page or an anchor that does not exist, a page in
``docs/`` that the nav leaves out, an absolute or unrecognised link (``mkdocs.yml``'s ``validation``). The build
goes to a temporary folder, never into the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_site_builds_strictly_with_no_warning(tmp_path: Path) -> None:
    # Material's end-of-life banner is not a build warning; it is switched off so the output holds only the build's.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    output = run.stdout + run.stderr
    warnings = [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert run.returncode == 0 and not warnings, output
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "measurements" / "index.html").is_file()
