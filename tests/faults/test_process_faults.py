"""Killing `citebound api` during an OCR upload, and `citebound ingest` during OCR, leaves nothing behind.

Each command runs as a real process on 127.0.0.1 over an image-only PDF (the shared scan, repeated so that OCR
is still running when the signal comes). The signal is sent once a `tesseract` run of the command exists; from
then on every process carrying the command's mark (the command, its threads' `tesseract` runs, anything they
started) must be gone within 5 seconds, measured from the signal. For the API the port must then be free and a
new `citebound api` on it must serve."""

from __future__ import annotations

import signal
import threading
import time

import httpx
import pytest

from tests.faults.conftest import (
    Cli,
    image_only_pdf,
    kill_marked,
    port_is_free,
    seconds_until_none_left,
    start_api,
    wait_for_marked,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ACCEPTED_S = 5.0  # the acceptance: nothing of the killed command left within 5 s of the signal


@pytest.fixture(scope="module")
def scan(tmp_path_factory, shared_data):
    return image_only_pdf(tmp_path_factory.mktemp("scan") / "scanned_rules.pdf", shared_data, copies=6)


def _upload_in_background(url: str, pdf) -> threading.Thread:  # noqa: ANN001
    def upload() -> None:
        try:
            with open(pdf, "rb") as fh:
                httpx.post(url + "/documents", files={"files": (pdf.name, fh, "application/pdf")}, timeout=600)
        except httpx.HTTPError:
            pass  # the server is killed under it: the connection breaks, as it should

    thread = threading.Thread(target=upload, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_api_leaves_no_process_and_frees_its_port(sig, tmp_path, prefect_env, scan):
    cli = Cli(tmp_path / "store", prefect_env)
    api = start_api(cli)
    try:
        uploading = _upload_in_background(api.url, scan)
        wait_for_marked(cli.mark, "tesseract")  # OCR of the upload is running in a process of the API's
        api.proc.send_signal(sig)
        signalled = time.monotonic()
        took = seconds_until_none_left(cli.mark, signalled, api.proc.pid)
        api.proc.wait(timeout=60)
        print(f"FIGURE api {sig.name} during OCR: nothing left after {took:.2f} s")  # for the README (-rP)
        assert took <= ACCEPTED_S, f"processes of the API outlived the {sig.name} by {took:.1f} s"
        assert port_is_free(api.port)
        uploading.join(timeout=60)
    finally:
        api.stop()
    again = start_api(cli, api.port)  # the same port: free, and the store still opens
    try:
        health = httpx.get(again.url + "/health", timeout=30)
        assert health.status_code == 200 and health.json()["ok"] is True
        assert httpx.get(again.url + "/documents", timeout=30).status_code == 200
    finally:
        again.stop()


def test_a_killed_ingest_leaves_no_process(tmp_path, prefect_env, scan):
    cli = Cli(tmp_path / "store", prefect_env)
    ingest = cli.popen("ingest", str(scan), "--doc-code", "Rules")
    try:
        wait_for_marked(cli.mark, "tesseract")
        ingest.send_signal(signal.SIGKILL)
        signalled = time.monotonic()
        took = seconds_until_none_left(cli.mark, signalled, ingest.pid)
        ingest.wait(timeout=60)
        print(f"FIGURE ingest SIGKILL during OCR: nothing left after {took:.2f} s")  # for the README (-rP)
        assert took <= ACCEPTED_S, f"processes of the ingest outlived the SIGKILL by {took:.1f} s"
    finally:
        if ingest.poll() is None:
            ingest.kill()
        kill_marked(cli.mark)
