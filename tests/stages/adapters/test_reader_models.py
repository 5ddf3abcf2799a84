"""The reader's two models as shipped: trained weights merged with the package's word table, exported to ONNX and
hash-checked on load. Checked against torch running the same merged weights, on weights made here (the base
model's, moved a little), so the test needs no trained model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from contracts.errors import ReaderModelError

pytestmark = pytest.mark.integration

TEXTS = ["My neighbour's son took my scooter for a ride without asking.", "Section 379. Punishment for theft\n"
         "Whoever commits theft shall be punished with imprisonment which may extend to three years."]


def _trained_parts(folder: Path, *, prefix: str = "", layers: int = 6, head: bool = False) -> list[str]:
    """The base model's weights but the word table, layer 0's query moved a little, fp16, in two parts."""
    from safetensors.numpy import load_file, save_file

    from stages.adapters.minilm import model_dir

    base = load_file(str(model_dir() / "model.safetensors"))
    rng = np.random.default_rng(0)
    keep = {k: v for k, v in base.items() if k not in ("embeddings.word_embeddings.weight", "embeddings.position_ids")
            and not k.startswith("pooler.") and (not k.startswith("encoder.layer.") or int(k.split(".")[2]) < layers)}
    q = "encoder.layer.0.attention.self.query.weight"
    keep[q] = keep[q] + rng.normal(0, 0.02, keep[q].shape).astype(np.float32)
    state = {prefix + k: v.astype(np.float16) for k, v in keep.items()}
    if head:
        state["head.weight"] = rng.normal(0, 0.1, (1, 384)).astype(np.float16)
        state["head.bias"] = np.zeros(1, dtype=np.float16)
    names = sorted(state)
    parts = [names[: len(names) // 2], names[len(names) // 2:]]
    files = []
    for i, part in enumerate(parts):
        files.append(f"trained.part{i}.safetensors")
        save_file({k: state[k] for k in part}, str(folder / files[-1]))
    return files


def _card_fields(max_tokens: int) -> dict:
    from stages.adapters.minilm import model_dir

    return dict(max_tokens=max_tokens, model_folder=model_dir(), bundle_files={"train.jsonl": "0" * 64},
                question_set_sha256="1" * 64, params={"seed": 1}, steps=1, trained_on="test", dev={"r@1": 0.5})


@pytest.fixture(scope="module")
def retriever_folder(tmp_path_factory) -> Path:
    from training.reader_models import write_retriever

    work = tmp_path_factory.mktemp("trained")
    parts = _trained_parts(work)
    folder = tmp_path_factory.mktemp("models") / "retriever"
    write_retriever(work, parts, folder, **_card_fields(256))
    return folder


def test_the_retriever_on_onnx_encodes_as_torch_does_with_the_same_merged_weights(retriever_folder, tmp_path):
    import torch
    import transformers

    from stages.adapters.minilm import model_dir
    from stages.adapters.onnx_embedder import OnnxMiniLMEmbedder
    from stages.adapters.reader_embedder import MODEL_NAME, OnnxReaderEmbedder, merged_weights

    embedder = OnnxReaderEmbedder(tmp_path / "cache", retriever_folder)
    got = embedder.embed(TEXTS)
    config = transformers.BertConfig.from_pretrained(str(model_dir()))
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    model.load_state_dict({k: torch.from_numpy(v) for k, v in merged_weights(retriever_folder).items()
                           if not k.startswith("pooler.")}, strict=False)
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir()))
    batch = tok(TEXTS, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    want = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1).numpy()
    assert np.einsum("ij,ij->i", got, want) == pytest.approx([1.0, 1.0], abs=1e-5)
    base = OnnxMiniLMEmbedder(tmp_path / "cache").embed(TEXTS)
    assert float(np.einsum("ij,ij->i", got, base).min()) < 0.9999  # the trained weights are what ran
    assert (embedder.model_name, embedder.model_revision.startswith("reader+")) == (MODEL_NAME, True)
    # A second embedder finds the cached graph (same revision, same file).
    again = OnnxReaderEmbedder(tmp_path / "cache", retriever_folder)
    assert np.allclose(again.embed(TEXTS), got) and again.model_revision == embedder.model_revision


def test_an_altered_model_file_is_an_error_naming_it(retriever_folder, tmp_path):
    import shutil

    from stages.adapters.reader_embedder import OnnxReaderEmbedder

    broken = tmp_path / "retriever"
    shutil.copytree(retriever_folder, broken)
    part = sorted(broken.glob("*.safetensors"))[0]
    data = bytearray(part.read_bytes())
    data[-1] ^= 0xFF
    part.write_bytes(bytes(data))
    with pytest.raises(ReaderModelError, match=part.name):
        OnnxReaderEmbedder(tmp_path / "cache", broken).embed(["x"])
    (broken / "card.json").unlink()
    with pytest.raises(ReaderModelError, match="card missing"):
        OnnxReaderEmbedder(tmp_path / "cache", broken).embed(["x"])


def test_the_reranker_scores_as_its_torch_module_and_in_any_order_the_same(tmp_path):
    import torch

    from stages.adapters.minilm import model_dir
    from stages.adapters.onnx_reranker import OnnxReranker
    from training.reader_models import reranker_module, write_reranker

    work = tmp_path / "trained"
    work.mkdir()
    parts = _trained_parts(work, prefix="encoder.", layers=3, head=True)
    folder = tmp_path / "reranker"
    write_reranker(work, parts, 3, folder, **_card_fields(128))
    reranker = OnnxReranker(folder)
    question = "someone took my bike from outside the gym, how long can he be jailed?"
    passages = [TEXTS[1], "Section 420. Cheating\nWhoever cheats shall be punished.",
                "Section 302. Punishment for murder\nWhoever commits murder shall be punished with death."]
    got = reranker.logits(question, passages)
    module = reranker_module(model_dir(), work, parts, 3)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()  # the package's tokenizer.json pads to 128 by default
    tok.enable_truncation(max_length=128, strategy="longest_first")
    want = []
    for p in passages:
        e = tok.encode(question, p)
        ids = torch.tensor([e.ids])
        with torch.no_grad():
            want.append(float(module(ids, torch.ones_like(ids), torch.tensor([e.type_ids]))[0]))
    assert got == pytest.approx(want, abs=0.15)  # int8 against float32
    scores = reranker.score(question, passages, [1, 2, 3])
    assert reranker.score(question, passages[::-1], [3, 2, 1]) == scores[::-1]
    assert all(0.0 < s < 1.0 for s in scores)
