"""What a user gets for each IPC question: a right answer, a wrong answer, or a refusal (end to end, no Prefect).

Runs the answer stages exactly as ``flows.answer_flow`` chains them (retrieve -> context pack -> prechecks
-> generate -> validate) with the default extractive answerer and the default ``GenerationPolicy``, over the
seven acts of ``indian-acts-json`` (the index of ``bench/retrieval_eval.py``), for every natural-language
question set of ``bench/data/ipc_questions.jsonl`` and for off-topic SQuAD 2.0 questions. Each answer falls
in one of four bins:

* ``right``   success, and a citation names the gold IPC section;
* ``wrong``   success, and no citation names it: a grounded answer to a question it was not asked (the
              outcome the grounding contract exists to prevent; the citations let a reader see it);
* ``refused`` the refusal sentence, with its reason code (counted per code below the table);
* ``error``   anything else (should be 0).

Retrieval recall (``bench/retrieval_eval.py``) says whether the right section was found; this says whether
the user was told something true, told nothing, or misled.

Usage: .venv/bin/python bench/answer_eval.py [--negatives N]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from retrieval_eval import (  # noqa: E402
    FRESH_SPLITS,
    PROJECT,
    TENANT,
    act_chunks,
    build_index,
    ipc_queries,
    squad_questions,
)

from contracts import Answer, GenerationPolicy, RetrieveConfig  # noqa: E402
from stages.adapters.extractive_llm import ExtractiveLLM  # noqa: E402
from stages.context import build_context_pack  # noqa: E402
from stages.generate import generate_draft  # noqa: E402
from stages.retrieve import retrieve  # noqa: E402
from stages.sufficiency import precheck_pack  # noqa: E402
from stages.validate import validate_draft  # noqa: E402


def answer(question: str, index, embedder, cfg: RetrieveConfig, policy: GenerationPolicy, llm) -> Answer:  # noqa: ANN001
    result = retrieve(question, index, embedder, cfg, tenant_id=TENANT, project_id=PROJECT)
    pack = build_context_pack(result, cfg, policy)
    refusal = precheck_pack(pack, policy)
    if refusal is not None:
        return refusal
    return validate_draft(generate_draft(pack, llm, policy), pack, policy)


def outcome(ans: Answer, gold: set[str]) -> str:
    if ans.status == "success":
        cited = {f"IPC_{c.section_id}" for c in ans.citations}
        return "right" if cited & gold else "wrong"
    # Every other status but "error" is the refusal sentence: refused before generation
    # (insufficient_context, low_confidence) or blocked by the validator (hallucination_detected, invalid_citations).
    return "error" if ans.status == "error" else "refused"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--negatives", type=int, default=100, help="off-topic SQuAD questions")
    args = parser.parse_args()

    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    embedder = SentenceTransformersEmbedder()
    embedder.warm_up()
    index = build_index(act_chunks(), embedder)
    cfg, policy, llm = RetrieveConfig(), GenerationPolicy(), ExtractiveLLM()
    sets = {"dev": [(q, g) for qid, q, g in ipc_queries("dev") if not qid.startswith("ipc-r")],
            "held": [(q, g) for _, q, g in ipc_queries("heldout")]}
    sets |= {tag: [(q, g) for _, q, g in ipc_queries(split)] for tag, split in FRESH_SPLITS.items()}
    sets["off-topic"] = [(q, set()) for q in squad_questions(args.negatives)]

    print(f"{'set':<11}{'n':>5}{'right':>9}{'wrong':>9}{'refused':>9}{'error':>8}   refusal reasons")
    started = time.perf_counter()
    total = 0
    for name, questions in sets.items():
        bins: collections.Counter[str] = collections.Counter()
        reasons: collections.Counter[str] = collections.Counter()
        for question, gold in questions:
            ans = answer(question, index, embedder, cfg, policy, llm)
            kind = outcome(ans, gold)
            bins[kind] += 1
            if kind == "refused":
                reasons[ans.reason_code or "?"] += 1
        n = len(questions)
        total += n
        print(f"{name:<11}{n:>5}" + "".join(f"{bins[k] / n:>{w}.1%}" for k, w in
                                           (("right", 9), ("wrong", 9), ("refused", 9), ("error", 8)))
              + "   " + ", ".join(f"{code} {count}" for code, count in reasons.most_common()))
    print(f"\n{total} questions in {time.perf_counter() - started:.1f} s; off-topic 'wrong' = answered at all.")


if __name__ == "__main__":
    main()
