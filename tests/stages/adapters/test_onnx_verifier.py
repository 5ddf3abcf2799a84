"""The shipped verifier: loaded hash-checked, scores typed pairs in batches, and fails loudly and by name when
its files are missing or altered (never a silent fallback)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from contracts.errors import VerifierLoadError
from contracts.verifier import VerifierPair
from flows.backends import VERIFIER_DIR
from stages.adapters.onnx_verifier import OnnxVerifier, read_card
from stages.ports import Verifier

pytestmark = pytest.mark.integration

IPC_379 = ("Section 379. Punishment for theft\nWhoever commits theft shall be punished with imprisonment of either "
           "description for a term which may extend to three years, or with fine, or with both.")
IPC_378 = ("Section 378. Theft\nWhoever, intending to take dishonestly any movable property out of the possession "
           "of any person without that person's consent, moves that property in order to such taking, is said to "
           "commit theft.")


@pytest.fixture(scope="module")
def verifier() -> OnnxVerifier:
    shipped = OnnxVerifier(VERIFIER_DIR)
    shipped.warm_up()
    return shipped


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "verifier"
    shutil.copytree(VERIFIER_DIR, folder)
    return folder


def test_implements_the_port_and_names_its_model(verifier: OnnxVerifier) -> None:
    assert isinstance(verifier, Verifier)
    card = read_card(VERIFIER_DIR)
    assert verifier.name == f"citebound-verifier:{card.model_sha256[:12]}" and verifier.model == card.model_sha256


def test_scores_are_probabilities_in_order_and_batch_independent(verifier: OnnxVerifier) -> None:
    pairs = [VerifierPair(task="answers", text="What is the punishment for theft?", passage=IPC_379),
             VerifierPair(task="answers", text="What is the punishment for theft?", passage=IPC_378),
             VerifierPair(task="supports", text="Three years.", passage=IPC_379,
                          question="What is the longest prison term for theft?")]
    together = verifier.score(pairs)
    alone = tuple(verifier.score([p])[0] for p in pairs)
    assert all(0.0 <= p <= 1.0 for p in together)
    assert verifier.score(pairs) == together  # the same pairs, the same scores, bit for bit
    # Each pair is run alone, so a score never depends on the pairs scored with it (in int8 batches it moved
    # by up to 0.044: activation ranges are read from the whole batch).
    assert together == alone
    assert verifier.score([]) == ()


def test_reads_which_neighbouring_provision_answers(verifier: OnnxVerifier) -> None:
    punishment, definition = verifier.score([
        VerifierPair(task="answers", text="What is the punishment for theft?", passage=IPC_379),
        VerifierPair(task="answers", text="What is the punishment for theft?", passage=IPC_378)])
    assert punishment > definition


def test_missing_card_is_a_named_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "card.json").unlink()
    with pytest.raises(VerifierLoadError, match="card missing"):
        OnnxVerifier(folder).score([VerifierPair(task="answers", text="q?", passage="p.")])


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete"])
def test_an_altered_or_missing_model_file_is_a_named_error(tmp_path: Path, damage: str) -> None:
    folder = _copy(tmp_path)
    model = folder / read_card(folder).model_file
    if damage == "flip":
        data = bytearray(model.read_bytes())
        data[len(data) // 2] ^= 0xFF
        model.write_bytes(bytes(data))
    elif damage == "truncate":
        model.write_bytes(model.read_bytes()[:1000])
    else:
        model.unlink()
    with pytest.raises(VerifierLoadError, match=read_card(folder).model_file):
        OnnxVerifier(folder).score([VerifierPair(task="answers", text="q?", passage="p.")])


def test_a_card_that_does_not_parse_is_a_named_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    card = json.loads((folder / "card.json").read_text())
    card["unexpected"] = 1
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(VerifierLoadError, match="unreadable"):
        OnnxVerifier(folder).score([VerifierPair(task="answers", text="q?", passage="p.")])
