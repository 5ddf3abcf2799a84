"""What CI runs: ``citebound eval --subset ci --check`` on the shared data, every suite, cold caches, in a fresh
process; it must pass the shipped floors. Its report then opens in headless Chromium (Debian chromium +
chromium-driver via selenium; nothing downloaded), and a screenshot is kept (in ``$CITEBOUND_SCREENSHOT_DIR``
when set)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contracts.evaluation import EvalReport

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
SUITES = ("refusal", "hallucination", "injection", "retrieval", "provisions", "grounding")


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory, shared_data):  # noqa: ANN001, ANN201
    work = tmp_path_factory.mktemp("eval-ci")
    env = {**os.environ, "CITEBOUND_SHARED_DATA": str(shared_data), "HOME": str(work / "home")}
    proc = subprocess.run(
        [sys.executable, "-m", "cli", "eval", "--subset", "ci", "--check", "--out", str(work / "report"),
         "--cache", str(work / "cache")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)
    return proc, work / "report"


def test_the_ci_slice_passes_its_floors_with_every_suite(ci_run) -> None:  # noqa: ANN001
    proc, out = ci_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = EvalReport.model_validate_json((out / "report.json").read_text())
    assert report.subset == "ci"
    assert tuple(s.suite for s in report.suites) == SUITES
    for suite in report.suites:
        assert suite.metrics, suite.suite
        for m in suite.metrics:
            assert m.n > 0 and m.ci.resamples == 1000, m.id
            assert m.ci.low <= m.value + 1e-12 and m.value <= m.ci.high + 1e-12, m.id
    # Every bound in floors.toml names a metric the ci run measures, and none fails.
    assert report.checks and all(c.passed is True for c in report.checks), \
        [c for c in report.checks if c.passed is not True]
    assert json.loads((out / "report.json").read_text())["floors_version"] == report.floors_version
    assert "report.html" in proc.stdout


def test_the_report_opens_in_headless_chromium(ci_run, tmp_path) -> None:  # noqa: ANN001
    if not (CHROMIUM and DRIVER):
        pytest.skip("the browser test needs Debian chromium and chromium-driver (make system-deps)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    proc, out = ci_run
    assert proc.returncode == 0
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--window-size=1200,1600"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        driver.get((out / "report.html").as_uri())
        assert driver.title.startswith("citebound eval")
        sections = [s.get_attribute("id") for s in driver.find_elements(By.TAG_NAME, "section")]
        assert sections == list(SUITES)
        plots = driver.find_elements(By.CSS_SELECTOR, "figure svg")
        assert plots and all(p.size["width"] > 100 and p.size["height"] > 100 for p in plots)
        rows = driver.find_elements(By.CSS_SELECTOR, "section table tr")
        assert len(rows) > 20
        # Every number the page shows for a metric is the report's own.
        report = EvalReport.model_validate_json((out / "report.json").read_text())
        first = report.suites[0].metrics[0]
        assert f"{first.count} of {first.n}" in driver.find_element(By.ID, first.suite).text
        shot = tmp_path / "eval_report.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        if os.environ.get("CITEBOUND_SCREENSHOT_DIR"):
            shutil.copy(shot, Path(os.environ["CITEBOUND_SCREENSHOT_DIR"]) / shot.name)
    finally:
        driver.quit()
    assert not math.isnan(report.seconds)
