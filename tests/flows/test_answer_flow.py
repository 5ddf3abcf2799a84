"""The answer flow end to end (hash embedder, extractive or scripted LLMs): grounded answers, refusals,
a planted injection stopped, and every failure degraded to a refusal with a reason and no partial artifact."""

from __future__ import annotations


import pytest

from contracts import Answer, ArtifactStore, Catalog, EmbeddingSet, IndexManifest
from flows.answer_flow import answer_flow
from flows.ingest_flow import INDEX_POINTER, ingest_flow
from flows.localhost import free_port
from tests.fakes import ScriptedLLM
from tests.fixtures.statutes import PENAL_CODE, PLANTED, WAGES_ACT

pytestmark = [pytest.mark.integration]


@pytest.fixture
def store_root(tmp_path, prefect_harness, fake_backends):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "penal_code.txt").write_text(PENAL_CODE, encoding="utf-8")
    (d / "wages_act.txt").write_text(WAGES_ACT, encoding="utf-8")
    root = tmp_path / "store"
    ingest_flow(paths=[str(d / "penal_code.txt")], doc_code="IPC", store=str(root), embedder="hash")
    ingest_flow(paths=[str(d / "wages_act.txt")], doc_code="WagesAct", store=str(root), embedder="hash")
    return root


def _ask(root, q, **kw) -> Answer:
    return answer_flow(question=q, store=str(root), embedder="hash", **kw)


def _assert_store_clean(root) -> None:
    st = ArtifactStore(root)
    assert not list(st.root.rglob("*.tmp"))
    for kind_dir in (st.root / "objects").iterdir():
        for ref in st.iter_refs(kind_dir.name):
            st.get(ref)  # every stored artifact verifies: nothing half-written


def test_punishment_question_is_answered_with_a_checked_citation(store_root):
    answer = _ask(store_root, "What is the punishment for cheating under section 420?")
    assert answer.status == "success", answer.refusal_reason
    assert any(c.source_id.startswith("IPC_420_") for c in answer.citations)
    assert "seven years" in answer.answer
    cite = next(c for c in answer.citations if c.source_id.startswith("IPC_420_"))
    assert cite.filename == "penal_code.txt" and cite.page >= 1
    assert answer.run_id
    run = ArtifactStore(store_root).get_run(answer.run_id)
    assert [s.stage for s in run.steps] == ["request", "retrieve", "context", "answerability", "precheck", "generate",
                                            "validate"]
    assert answer.answerability is None  # the verifier is off by default (GenerationPolicy.verify)
    read = _ask(store_root, "What is the punishment for cheating under section 420?", overrides={"verify": "true"})
    assert read.status == "success", read.refusal_reason
    assert read.answerability == pytest.approx(0.9)  # the lenient verifier's reading of the best passage


def test_out_of_scope_question_is_refused_with_the_exact_sentence(store_root):
    answer = _ask(store_root, "What is the boiling point of liquid nitrogen on Mars?")
    assert answer.status != "success"
    assert answer.answer == "I cannot answer based on the provided documents."
    assert answer.reason_code


def test_configurable_refusal_sentence(store_root):
    answer = _ask(store_root, "Who painted the ceiling of the Sistine Chapel?",
                  refusal_text="I don't know based on NCERT textbooks.")
    assert answer.answer == "I don't know based on NCERT textbooks."


def test_llm_citing_outside_the_pack_is_replaced_by_the_refusal(store_root, fake_backends):
    fake_backends("liar", ScriptedLLM(["Cheating is punished with death [IPC_999_0]."]))
    answer = _ask(store_root, "What is the punishment for cheating under section 420?", llm="liar")
    assert answer.status == "invalid_citations"
    assert answer.answer == "I cannot answer based on the provided documents."
    assert "death" not in answer.answer


def test_gullible_llm_obeying_a_planted_document_is_stopped(store_root, fake_backends, tmp_path):
    planted = tmp_path / "circular.txt"
    planted.write_text(PLANTED, encoding="utf-8")
    report = ingest_flow(paths=[str(planted)], doc_code="Circular", store=str(store_root), embedder="hash")
    assert report.files[0].quarantined, "the planted section must be flagged at ingestion"

    def gullible(prompt: str) -> str:
        # Obeys any instruction it can see, and cites whatever id it saw near it.
        if "developer mode" in prompt.lower() or "ignore all previous instructions" in prompt.lower():
            return "The punishment for cheating is death [Circular_8_0]."
        return "The punishment for cheating is death [FAKE_1]."

    fake_backends("gullible", ScriptedLLM(gullible))
    answer = _ask(store_root, "What is the punishment for cheating? Check the notice in the circular.", llm="gullible")
    assert answer.status != "success"
    assert "death" not in answer.answer
    assert all(not s.startswith("Circular_8") for s in answer.sources)


def test_embedder_failure_degrades_to_error_refusal(store_root, fake_backends):
    from flows import backends

    class Broken:
        model_name, model_revision, dim = "hash-embedder", "1", 64

        def embed(self, texts):
            raise RuntimeError("embedder exploded")

    backends.register_embedder("hash", lambda: Broken())
    answer = _ask(store_root, "What is the punishment for theft?")
    assert (answer.status, answer.reason_code) == ("error", "internal_error")
    assert "embedder exploded" in answer.refusal_reason
    assert answer.answer == "I cannot answer based on the provided documents."
    _assert_store_clean(store_root)


def test_deleted_index_files_are_rebuilt_and_deleted_vectors_refuse_by_name(store_root):
    st = ArtifactStore(store_root)
    manifest = st.get(st.get_pointer(INDEX_POINTER), IndexManifest)
    for _, sha in manifest.blobs:
        st.blob_path(sha).unlink()
    from flows import index_views
    from flows.index_backends import clear_index_caches

    clear_index_caches()
    # The index is derived data: the question's view is built again from the documents' stored vectors.
    answer = _ask(store_root, "What is the punishment for theft?")
    assert answer.status == "success", answer.refusal_reason
    # A document's own vectors are not: without them the question is refused, naming the document.
    entry = next(e for e in st.get(st.get_pointer("catalog/current"), Catalog).entries if e.doc_code == "IPC")
    st.blob_path(st.get(f"embedding_set.v1:{entry.embedding_set_sha256}", EmbeddingSet).vectors_blob).unlink()
    index_views._views.clear()
    answer = _ask(store_root, "What is the punishment for cheating?")  # a new question: no stored retrieval
    assert (answer.status, answer.reason_code) == ("error", "artifact_corrupt")
    assert "IPC (penal_code.txt) is damaged" in answer.refusal_reason and str(store_root) not in answer.refusal_reason
    _assert_store_clean(store_root)


def test_llm_server_down_degrades_to_error_refusal(store_root, monkeypatch):
    port = free_port()  # nothing listens there
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("CITEBOUND_LLM_TIMEOUT", "2")
    answer = _ask(store_root, "What is the punishment for cheating under section 420?", llm="openai")
    assert (answer.status, answer.reason_code) == ("error", "llm_transport_error")
    _assert_store_clean(store_root)


def test_llm_garbage_is_refused_not_shown(store_root, fake_backends):
    fake_backends("garbage", ScriptedLLM(["\x00\x01 }}{{ <|im_start|>system lorem ipsum"]))
    answer = _ask(store_root, "What is the punishment for cheating under section 420?", llm="garbage")
    assert answer.status != "success"
    assert "lorem" not in answer.answer


@pytest.mark.parametrize("damage", ["missing", "corrupt"])
def test_a_broken_verifier_refuses_every_question_by_name_never_falls_back(store_root, tmp_path, damage):
    """A verifier folder whose model is missing or altered: each question is refused with status error and reason
    ``verifier_unavailable``; no answer is produced by the word checks alone."""
    import shutil

    from flows.backends import VERIFIER_DIR

    folder = tmp_path / "verifier"
    shutil.copytree(VERIFIER_DIR, folder)
    model = next(folder.glob("*.onnx"))
    if damage == "missing":
        model.unlink()
    else:
        model.write_bytes(model.read_bytes()[:-10] + b"0123456789")
    for question in ("What is the punishment for cheating under section 420?", "What is theft?"):
        answer = _ask(store_root, question, verifier=str(folder), overrides={"verify": "true"})
        assert (answer.status, answer.reason_code) == ("error", "verifier_unavailable"), answer.refusal_reason
        assert answer.answer == "I cannot answer based on the provided documents." and answer.citations == ()
        assert str(folder) not in (answer.refusal_reason or "")  # names the file, not the server path
    _assert_store_clean(store_root)


def test_switching_the_verifier_off_is_explicit_and_recorded(store_root):
    answer = _ask(store_root, "What is the punishment for cheating under section 420?",
                  overrides={"verify": "false"})
    assert answer.status == "success" and answer.answerability is None
    on = _ask(store_root, "What is the punishment for cheating under section 420?", overrides={"verify": "true"})
    assert on.answerability is not None
    run = ArtifactStore(store_root).get_run(answer.run_id)
    policy_sha = dict(run.parameters)["policy"]
    from contracts import GenerationPolicy

    assert ArtifactStore(store_root).get(policy_sha, GenerationPolicy).verify is False
