"""``citebound reader-questions``: questions a local instruct model writes for every provision of the statutes.

The edge resolves the sources (the BNS PDF with its illustrations, then the Acts of the civictech JSON, from the
shared data), the model cache (``$CITEBOUND_MODEL_CACHE`` or ``~/.cache/citebound``), the output files
(``models/reader/questions.jsonl`` and its card) and the store that keeps each reply (``--store``); then it runs
the ``reader-questions`` flow. ``--limit N`` asks at most N new requests and exports what is stored; run it again
to go on. It needs the ``[train]`` extra (llama-cpp-python and the model's slices). Stop it with Ctrl-C or a
kill: the model server is its child and ends with it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from cli.common import add_common, store_root

__all__ = ["add_parsers", "cmd_reader_questions", "cmd_reader_pairs", "cmd_reader_train"]

_REPO = Path(__file__).resolve().parent.parent
READER_DIR = _REPO / "models" / "reader"
# (code, file under the shared data): the BNS first (its illustrations), the IPC next (what users ask about).
SOURCES = (
    ("BNS", "statute-pdfs/Bhartiya_Nyay_Sanhita_BNS.pdf"),
    ("IPC", "indian-acts-json/ipc.json"),
    ("CrPC", "indian-acts-json/crpc.json"),
    ("Evidence Act", "indian-acts-json/iea.json"),
    ("NI Act", "indian-acts-json/nia.json"),
    ("CPC", "indian-acts-json/cpc.json"),
    ("Divorce Act", "indian-acts-json/ida.json"),
    ("MV Act", "indian-acts-json/MVA.json"),
)


def cmd_reader_questions(args: argparse.Namespace) -> int:
    from contracts.errors import ConfigError
    from evaluation.runner import check_data_root
    from flows.question_flow import QuestionPlan, StatuteSource, reader_questions_flow
    from flows.settings import Settings

    data_root = check_data_root(Path(args.shared_data) if args.shared_data else Settings().shared_data_dir)
    codes = [c.strip() for c in args.codes.split(",")] if args.codes else [code for code, _ in SOURCES]
    known = dict(SOURCES)
    unknown = [c for c in codes if c not in known]
    if unknown:
        raise ConfigError(f"unknown code(s) {', '.join(unknown)}: choose from {', '.join(known)}")
    out_dir = Path(args.out).resolve() if args.out else READER_DIR
    cache = Path(os.environ.get("CITEBOUND_MODEL_CACHE") or Path.home() / ".cache" / "citebound")
    plan = QuestionPlan(store_root=store_root(args), sources=tuple(StatuteSource(c, data_root / known[c]) for c in codes),
                        model_cache=cache, out_file=out_dir / "questions.jsonl", card_file=out_dir / "questions_card.json",
                        threads=args.threads, limit=args.limit)

    def progress(done: int, total: int, batch) -> None:  # noqa: ANN001 - a QuestionBatch
        print(f"[{done}] {batch.provision_key} {batch.origin}: {len(batch.questions)} kept, "
              f"{len(batch.dropped)} dropped, {batch.seconds:.1f} s", file=sys.stderr, flush=True)

    card = reader_questions_flow.fn(plan, progress=None if args.json else progress)
    if args.json:
        print(card.model_dump_json(indent=1))
    else:
        print(f"{card.questions} questions from {card.requests} requests over {card.provisions} provisions "
              f"-> {plan.out_file} (sha256 {card.file_sha256[:12]})")
    return 0


def _safe(code: str) -> str:
    return re.sub(r"\W+", "_", code)


def cmd_reader_pairs(args: argparse.Namespace) -> int:
    """Hard negatives by today's retrieval, and the pairs file the reader trains on."""
    import json

    from contracts import RetrieveConfig, sha256_bytes
    from evaluation.corpora import PROJECT, TENANT, build_index, make_record_chunk
    from evaluation.runner import check_data_root
    from flows.backends import get_embedder
    from flows.question_flow import StatuteSource, read_provisions
    from flows.reader_pairs import build_reader_pairs, mine_negatives, read_questions, write_pairs
    from flows.settings import Settings
    from stages.retrieval.retrieve import retrieve
    from stages.text.units import split_sentences

    data_root = check_data_root(Path(args.shared_data) if args.shared_data else Settings().shared_data_dir)
    out_dir = Path(args.out).resolve() if args.out else READER_DIR
    questions_file = out_dir / "questions.jsonl"
    provisions, hashes = read_provisions([StatuteSource(c, data_root / f) for c, f in SOURCES])
    # The BNS's scenarios are the IPC's own: each BNS question is also asked of its IPC predecessor(s), found by
    # the successor alignment (IPC -> BNS, links scoring at least 0.5; built and cached in --store).
    from flows.provisions_flow import build_provision_map
    from stages.training.reader_pairs import with_predecessors

    _, pmap = build_provision_map(str(store_root(args)), "IPC", "BNS", from_path=str(data_root / dict(SOURCES)["IPC"]),
                                  to_path=str(data_root / dict(SOURCES)["BNS"]))
    predecessors: dict[str, list[str]] = {}
    for link in pmap.links:
        if link.score >= 0.5:
            for section in link.to_sections:
                predecessors.setdefault(section, []).append(link.from_section)
    generated = read_questions(questions_file)
    questions = tuple(with_predecessors(generated, "BNS", predecessors, "IPC"))
    embedder = get_embedder("minilm")
    cache = Path(os.environ.get("CITEBOUND_MODEL_CACHE") or Path.home() / ".cache" / "citebound") / "reader-vectors"
    indexes = {}
    for code in sorted({q.code for q in questions}):
        chunks = [make_record_chunk(_safe(code), code, p.section, p.title, p.text, "0" * 64)
                  for p in provisions if p.code == code]
        indexes[code] = build_index(chunks, embedder, cache)
    cfg = RetrieveConfig(top_k=10)

    def ranked(question: str, code: str) -> list[str]:
        result = retrieve(question, indexes[code], embedder, cfg, tenant_id=TENANT, project_id=PROJECT)
        prefix = _safe(code) + "_"
        return [f"{code}:{item.source_id.removeprefix(prefix).rsplit('_', 1)[0]}" for item in result.results]

    negatives, found = mine_negatives(questions, ranked)
    # Sections whose claims are held out (evaluation/heldout/claims_v1.jsonl): never made into claim pairs.
    held = _REPO / "evaluation" / "heldout" / "claims_v1.jsonl"
    skip = frozenset(f"IPC:{json.loads(line)['section']}" for line in held.read_text().splitlines() if line.strip())
    pairs = build_reader_pairs(provisions, questions, negatives, split_sentences, skip)
    inputs = {name: sha for name, sha in hashes}
    inputs[questions_file.name] = sha256_bytes(questions_file.read_bytes())
    card = write_pairs(pairs, out_dir / "pairs.jsonl", out_dir / "pairs_card.json", inputs,
                       {"retrieval": "citebound hybrid retrieval (MiniLM ONNX + BM25), one index per code, top 10",
                        "source_rank": dict(found), "claims_skipped_sections": sorted(skip),
                        "questions": len(generated), "questions_with_ipc_predecessors": len(questions),
                        "successor_map": f"IPC -> BNS, links scoring >= 0.5 ({sum(map(len, predecessors.values()))} pairs)"})
    print(json.dumps(card, indent=1) if args.json else
          f"{card['pairs']} pairs -> {out_dir / 'pairs.jsonl'}; sources ranked first / lower / not retrieved: "
          f"{found['first']} / {found['below_first']} / {found['not_retrieved']}")
    return 0


def cmd_reader_train(args: argparse.Namespace) -> int:
    """The ``reader-train`` flow: the hand-written set -> the bundle -> training (here, or an accelerator's outputs
    given with --trained) -> the shipped retriever and reranker with their cards."""
    from flows.settings import configure_process_env

    configure_process_env()
    try:
        from training.reader_flow import reader_train
    except ImportError as exc:  # torch / transformers come with the [train] extra
        print(f"citebound reader-train needs the [train] extra: {exc}", file=sys.stderr)
        return 2
    work = Path(args.work).resolve()
    result = reader_train(bundle=str(work / "bundle"), work=str(work / "trained"),
                          trained=str(Path(args.trained).resolve()) if args.trained else None,
                          data_root=args.shared_data, library=args.library or os.environ.get("CITEBOUND_NCERT_LIBRARY"))
    print(json.dumps(result, indent=1, default=str))
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The reader-questions command."""
    sp = sub.add_parser("reader-questions", help="generate the reader's training questions with a local model")
    sp.add_argument("--codes", help=f"comma-separated, in order (default all: {', '.join(c for c, _ in SOURCES)})")
    sp.add_argument("--limit", type=int, help="ask at most this many new requests, then export")
    sp.add_argument("--threads", type=int, default=2, help="model threads")
    sp.add_argument("--out", help="folder for questions.jsonl and its card (default models/reader)")
    sp.add_argument("--shared-data", help="the shared data folder (default $CITEBOUND_SHARED_DATA or ../shared/data)")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_reader_questions)
    sp = sub.add_parser("reader-pairs", help="the reader's training pairs: questions, hard negatives, rule-made claims")
    sp.add_argument("--out", help="folder holding questions.jsonl; pairs.jsonl and its card go there (default models/reader)")
    sp.add_argument("--shared-data", help="the shared data folder (default $CITEBOUND_SHARED_DATA or ../shared/data)")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_reader_pairs)
    sp = sub.add_parser("reader-train", help="train the reader's retriever and reranker on the hand-written questions")
    sp.add_argument("--work", default=".reader", help="work folder: bundle/ and trained/ (checkpoints) (default .reader)")
    sp.add_argument("--trained", help="outputs of training/device_reader.py run elsewhere (an accelerator) on this bundle")
    sp.add_argument("--library", help="the NCERT chapter PDFs the textbook questions were written from "
                                      "(default $CITEBOUND_NCERT_LIBRARY; without it textbook questions are left out)")
    sp.add_argument("--shared-data", help="the shared data folder (default $CITEBOUND_SHARED_DATA or ../shared/data)")
    sp.set_defaults(func=cmd_reader_train)
