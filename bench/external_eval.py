"""Someone else's questions over real statute PDFs: the rag-indian-law gold set, end to end (no Prefect).

``$CITEBOUND_SHARED_DATA/rag-indian-law-gold-qa/gold_dataset.json`` holds 44 questions written for another
project (criminal law, traffic, matrimonial, rental law), each with the statute it expects and often a
section. Only some of those statutes are in this bundle (``statute-pdfs/``: the BNS 2023, the Hindu Marriage
Act, the Dowry Prohibition Act; the Minimum Wages Act is ingested too, as a distractor). The PDFs go through
citebound's real ingestion stages (extract, clean, structure, chunk, injection scan, embed, index) and every
question through the answer stages with the default extractive answerer and policy.

* **answerable** (the expected statute is ingested and a section is named): ``right`` = a success citing that
  section of that statute; ``wrong`` = a success citing anything else; ``refused``.
* **not in the corpus** (the expected sources are absent: the BNSS, the Motor Vehicles Act, rent law, court
  judgments): ``refused`` is the right outcome; an answer is listed with what it cited, for a reader to judge
  (some are fair: a dowry question can be answered from the Dowry Prohibition Act the set did not expect).

The set's own caveats (SOURCE.md) apply: one author, no review; so each answered "not in the corpus" item is
printed rather than scored. Nothing here was used to tune citebound.

Usage: .venv/bin/python bench/external_eval.py
"""

from __future__ import annotations

import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(ROOT / "bench"))

from answer_eval import answer  # noqa: E402

from contracts import GenerationPolicy, RetrieveConfig  # noqa: E402
from evaluation.corpora import build_index, ingested_chunks  # noqa: E402
from stages.adapters.extractive_llm import ExtractiveLLM  # noqa: E402
from stages.ports import IndexBackend  # noqa: E402

SHARED = Path(os.environ.get("CITEBOUND_SHARED_DATA", ROOT.parent / "shared" / "data")).resolve()
CACHE = Path(tempfile.gettempdir()) / "citebound-bench-cache"
# The gold set's source names -> the doc code each bundled PDF is ingested under.
PDFS = {
    "Bhartiya_Nyay_Sanhita_BNS.pdf": "BNS",
    "Hindu_Marriage_Act.pdf": "HMA",
    "Dowry_Prohibition_Act_1961.pdf": "DowryProhibitionAct",
    "Minimum_Wages_Act_and_Central_Rules_1950_Forms_I_to_IV.pdf": "MinimumWagesAct",
}
# How the gold set names the two ingested statutes it expects ("Bharatiya_Nyaya_Sanhita_2023", "BNS 2023,
# Supreme Court judgments", "Hindu Marriage Act 1955, CrPC, ...").
SOURCE_PATTERNS = {"BNS": ("Bharatiya_Nyaya_Sanhita", "BNS 2023"), "HMA": ("Hindu_Marriage_Act", "Hindu Marriage Act")}


def expected_codes(sources: list[str]) -> list[str]:
    return [code for code, names in SOURCE_PATTERNS.items() if any(n in s for s in sources for n in names)]


def cited_titles(ans) -> list[str]:  # noqa: ANN001
    return [f"{c.source_id} ({(c.section_title or '')[:40]})" for c in ans.citations[:2]]


def build_corpus_index(embedder) -> tuple[IndexBackend, int]:  # noqa: ANN001
    chunks = ingested_chunks({SHARED / "statute-pdfs" / name: code for name, code in PDFS.items()})
    return build_index(chunks, embedder, CACHE), len(chunks)


def main() -> None:
    from stages.adapters.st_embedder import SentenceTransformersEmbedder

    embedder = SentenceTransformersEmbedder()
    embedder.warm_up()
    started = time.perf_counter()
    index, n_chunks = build_corpus_index(embedder)
    print(f"ingested {len(PDFS)} PDFs: {n_chunks} chunks in {time.perf_counter() - started:.1f} s")
    records = json.loads((SHARED / "rag-indian-law-gold-qa" / "gold_dataset.json").read_text())
    cfg, policy, llm = RetrieveConfig(), GenerationPolicy(), ExtractiveLLM()

    scored: collections.Counter[str] = collections.Counter()
    absent: collections.Counter[str] = collections.Counter()
    lines = []
    for record in records:
        question = record["question"]
        ans = answer(question, index, embedder, cfg, policy, llm)
        cited = cited_titles(ans)
        wanted = expected_codes(record["expected_sources"])
        section = str(record.get("expected_section") or "")
        answerable = bool(wanted) and bool(section) and not section.startswith("MAT_")
        if answerable:
            hit = any(c.section_id and c.section_id.split("_")[-1].upper() == section.upper()
                      and c.source_id.split("_")[0] in wanted for c in ans.citations)
            kind = "refused" if ans.status != "success" else ("right" if hit else "wrong")
            scored[kind] += 1
            lines.append(f"  {record['id']:8} answerable   {kind:8} want {wanted[0]} s.{section:5} "
                         f"{ans.reason_code or ''} {cited}  <- {question}")
        else:
            kind = "refused" if ans.status != "success" else "answered"
            absent[kind] += 1
            lines.append(f"  {record['id']:8} not ingested {kind:8} {ans.reason_code or ''} {cited}  <- {question}")
    n_scored, n_absent = sum(scored.values()), sum(absent.values())
    print(f"\nanswerable from the ingested PDFs: {n_scored}  right {scored['right']}  wrong {scored['wrong']}  "
          f"refused {scored['refused']}")
    print(f"expected sources not ingested:    {n_absent}  refused {absent['refused']}  answered {absent['answered']} "
          "(listed below for a reader to judge)")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
