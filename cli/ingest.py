"""``citebound ingest``: files or folders into the store, a summary per file."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.common import add_common, check_writable, prepare, store_root

__all__ = ["add_parsers", "cmd_ingest", "print_ingest"]


def print_ingest(report) -> None:  # noqa: ANN001
    rows = [("file", "status", "code", "pages", "ocr", "chunks", "quarantined", "s", "reason")]
    for f in report.files:
        rows.append((Path(f.path).name, f.status, f.doc_code or "-", str(f.n_pages), str(f.n_ocr_pages),
                     str(f.n_chunks), str(len(f.quarantined)), f"{f.seconds:.1f}", (f.message or "")[:70]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    ok = sum(f.status not in ("error", "duplicate") for f in report.files)
    print(f"{ok}/{len(report.files)} files ingested; index holds {report.n_vectors} chunks; "
          f"{sum(f.n_pages for f in report.files)} pages, {sum(f.n_ocr_pages for f in report.files)} OCR'd; "
          f"{report.seconds:.1f} s; run {report.run_id}")
    for f in report.files:
        for note in f.notes:
            print(f"  {Path(f.path).name}: {note}")
        if f.n_front_matter:
            print(f"  front matter in {Path(f.path).name}: {f.n_front_matter} chunk(s) (a table of contents, an "
                  "arrangement of sections...): kept, never evidence")
        if f.n_exercise:
            print(f"  exercises in {Path(f.path).name}: {f.n_exercise} chunk(s) (exercises, activities, questions): "
                  "kept, never evidence")
        if f.quarantined:
            print(f"  quarantined (injection suspected) in {Path(f.path).name}: {', '.join(f.quarantined)}")
        if f.status == "duplicate":
            print(f"  duplicate: {Path(f.path).name} has the same text as {f.duplicate_of} (already stored): not added")
        if f.id_clashes:
            print(f"  id clashes resolved in {Path(f.path).name}: {', '.join(f.id_clashes)}")


def cmd_ingest(args: argparse.Namespace) -> int:
    root = prepare(args)
    from flows.ingest_flow import ingest_flow
    from flows.runners import make_task_runner
    from flows.settings import Settings

    # Threads by default; CITEBOUND_TASK_RUNNER=dask fans the files out on Dask (see flows/runners.py).
    ingest = ingest_flow.with_options(task_runner=make_task_runner(Settings()))
    # The index goes where CITEBOUND_INDEX_URI says (unset: FAISS in the store): resolved here, once.
    report = ingest(paths=args.paths, doc_code=args.doc_code, tenant=args.tenant, project=args.project,
                    store=str(root), index_type=args.index_type, ocr=not args.no_ocr,
                    index_uri=Settings().index_uri or "faiss")
    if args.json:
        print(report.model_dump_json())
    else:
        print_ingest(report)
    return 0 if all(f.status != "error" for f in report.files) else 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ingest command."""
    sp = sub.add_parser("ingest", help="ingest files or folders (.pdf .txt .md .json)")
    sp.add_argument("paths", nargs="+")
    sp.add_argument("--doc-code")
    sp.add_argument("--index-type", choices=["flat", "hnsw"])
    sp.add_argument("--no-ocr", action="store_true")
    add_common(sp)
    sp.set_defaults(func=cmd_ingest, runs_flows=True, before_flows=lambda a: check_writable(store_root(a)))
