"""The web page in headless Chromium (Debian `chromium` + `chromium-driver`, driven by selenium; nothing is
downloaded): ask, see citation chips, click one, and the page image shows the highlight over the cited words;
a refusal shows its reason. The screenshot is kept in the test's temp folder (and in $CITEBOUND_SCREENSHOT_DIR
when set)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pymupdf
import pytest

from tests.api.conftest import start_keyed_api

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PDF = Path(__file__).resolve().parents[2] / "samples" / "corpus" / "model_penal_code.pdf"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM and DRIVER):
        pytest.skip("headless browser test needs Debian chromium and chromium-driver (make system-deps)")
    webdriver = pytest.importorskip("selenium.webdriver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-sync", "--disable-extensions",
                 "--window-size=1400,1800"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def web_api(tmp_path_factory, prefect_harness, module_backends):
    from flows.ingest_flow import ingest_flow

    root = tmp_path_factory.mktemp("web") / "store"
    assert ingest_flow(paths=[str(PDF)], doc_code="IPC", store=str(root), embedder="hash").files[0].status == "ingested"
    for api, (key,), _ in start_keyed_api(root, "default"):
        yield api, key


def _ask(driver, api, key: str, question: str, project: str | None = None) -> None:  # noqa: ANN001
    from selenium.webdriver.common.by import By

    driver.get(api.url + "/")
    key_field = driver.find_element(By.ID, "key")
    key_field.clear()  # the page refills it from the session's last key
    key_field.send_keys(key)
    driver.find_element(By.ID, "question").send_keys(question)
    if project:
        driver.find_element(By.ID, "project").clear()
        driver.find_element(By.ID, "project").send_keys(project)
    driver.find_element(By.ID, "ask").click()


def _wait(driver, condition, timeout: float = 300):  # noqa: ANN001, ANN202
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _overlap(a, b) -> bool:  # noqa: ANN001
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_ask_click_a_citation_and_see_the_cited_words_highlighted(browser, web_api, tmp_path):
    from selenium.webdriver.common.by import By

    api, key = web_api
    _ask(browser, api, key, "What is the punishment for cheating under section 420?")
    chip = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#citations .chip"))[0]
    source_id, page = chip.get_attribute("data-source-id"), int(chip.get_attribute("data-page"))
    chip.click()
    img = _wait(browser, lambda d: d.find_elements(By.ID, "page-image"))[0]
    _wait(browser, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img))
    assert source_id in browser.find_element(By.ID, "source-title").text
    chunk_text = browser.find_element(By.ID, "chunk").text
    assert chunk_text.strip()
    boxes = [tuple(b) for b in __import__("json").loads(img.get_attribute("data-boxes"))]
    assert boxes, "no highlight boxes for a cited chunk of a text PDF"
    # The cited words, found on that page by PyMuPDF independently of the page's aligner.
    words = chunk_text.split()
    with pymupdf.open(PDF) as doc:
        pdf_page = doc[page - 1]
        # Each 4-word phrase of the chunk that is on this page (a phrase may also occur in other sections:
        # it counts as covered when one of its occurrences is under a box).
        phrases = [pdf_page.search_for(" ".join(words[i:i + 4])) for i in range(0, max(1, len(words) - 4), 4)]
        phrases = [spots for spots in phrases if spots]
        page_width = pdf_page.rect.width
    assert phrases
    hit = sum(any(_overlap(b, tuple(s)) for b in boxes for s in spots) for spots in phrases) / len(phrases)
    assert hit >= 0.8, f"only {hit:.0%} of the cited phrases lie under a highlight box"
    # And the highlight is painted where the boxes say, in the image the reader sees.
    shot = pymupdf.Pixmap(img.screenshot_as_png)
    scale = shot.width / page_width
    x0, y0, x1, y1 = boxes[0]
    r, g, b = shot.pixel(int((x0 + x1) / 2 * scale), int((y0 + 0.15 * (y1 - y0)) * scale))[:3]
    assert b < 200 and r > 170 and g > 140, (r, g, b)
    target = tmp_path / "web_citation.png"
    browser.save_screenshot(str(target))
    if os.environ.get("CITEBOUND_SCREENSHOT_DIR"):
        shutil.copy(target, Path(os.environ["CITEBOUND_SCREENSHOT_DIR"]) / "web_citation.png")
    assert target.stat().st_size > 10_000


def test_a_refusal_is_shown_as_a_refusal_with_its_reason(browser, web_api):
    from selenium.webdriver.common.by import By

    api, key = web_api
    # A project with no documents: the refusal is certain whatever the (test) embedder ranks.
    _ask(browser, api, key, "What is the punishment for theft?", project="no-documents-here")
    shown = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#refusal, #citations"))[0]
    assert shown.get_attribute("id") == "refusal"
    refusal = shown
    assert "I cannot answer based on the provided documents." in refusal.text
    assert "reason " in refusal.text
    assert not browser.find_elements(By.CSS_SELECTOR, "#citations .chip")


def test_a_wrong_key_shows_the_error(browser, web_api):
    from selenium.webdriver.common.by import By

    api, _ = web_api
    _ask(browser, api, "cb_wrong_key", "What is theft?")
    error = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#answer .error"))[0]
    assert error.text.startswith("403")
