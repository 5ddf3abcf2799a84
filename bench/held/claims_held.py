"""The claim checks on held-out claims: is a faithful restatement of an IPC section kept, and is one that keeps
the section's words but changes its meaning rejected? (``evaluation/heldout/claims_v1.jsonl``; run once, when the
checks are frozen: the figure is reported, never tuned on.)

Each claim is checked as an answer sentence citing its section's chunk (one chunk per section, as
``evaluation.corpora.act_chunks`` makes them), against a pack holding that chunk alone, by the same
``validate_answer_text`` every answer goes through, with the default ``GenerationPolicy`` (the word checks; the
trained verifier is off by default) and with ``verify`` on.

Usage: .venv/bin/python bench/held/claims_held.py (kept out of `make bench`, which runs bench/*.py: a held figure is run once)
"""

from __future__ import annotations

import collections
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from contracts import ContextPack, GenerationPolicy  # noqa: E402
from evaluation.corpora import act_chunks  # noqa: E402
from stages.grounding.validate import validate_answer_text  # noqa: E402
from stages.retrieval.query_analysis import analyze_query  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()


def main() -> None:
    from flows.backends import get_verifier

    chunks = {c.semantic_id: c for c in act_chunks(SHARED) if c.provenance.doc_code == "IPC"}
    claims = [json.loads(line) for line in (ROOT / "evaluation" / "heldout" / "claims_v1.jsonl").read_text().splitlines()
              if line.strip()]
    for name, policy, verifier in (("word checks", GenerationPolicy(), None),
                                   ("word checks + verifier", GenerationPolicy(verify=True), get_verifier())):
        kept: collections.Counter[str] = collections.Counter()
        total: collections.Counter[str] = collections.Counter()
        for row in claims:
            chunk = chunks[f"IPC_{row['section']}_0"]
            question = f"What does section {row['section']} of the IPC provide?"
            pack = ContextPack(query=question, query_analysis=analyze_query(question),
                               context_text=f"[{chunk.semantic_id}]\n{chunk.text}", sources=(chunk.semantic_id,),
                               chunks=(chunk,), confidence=1.0)
            ans = validate_answer_text(f"{row['claim']} [{chunk.semantic_id}]", pack, policy, verifier=verifier)
            total[row["label"]] += 1
            kept[row["label"]] += ans.status == "success"
        print(f"{name}: faithful kept {kept['faithful']}/{total['faithful']}, "
              f"meaning-changing rejected {total['changed'] - kept['changed']}/{total['changed']}")


if __name__ == "__main__":
    main()
