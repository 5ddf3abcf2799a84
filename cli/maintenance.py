"""``citebound fsck``, ``repair`` and ``gc``: verify the store, mend it from stored source bytes, sweep it."""

from __future__ import annotations

import argparse
import sys

from cli.common import add_common, check_writable, prepare, store_root

__all__ = ["add_parsers", "cmd_fsck", "cmd_repair", "cmd_gc", "print_problems"]


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def print_problems(problems, out=sys.stdout) -> None:  # noqa: ANN001 - tuple[StoreProblem, ...]
    for p in problems:
        whom = []
        if p.documents:
            whom.append(f"documents: {', '.join(p.documents)}")
        if p.tenants:
            whom.append(f"tenants: {', '.join(p.tenants)}")
        if p.shared:
            whom.append("shared by every tenant")
        if p.detail and not p.documents:
            whom.append(p.detail)
        print(f"{p.problem:15s} {p.name}  {'  '.join(whom)}".rstrip(), file=out)


def _waiting() -> None:
    print("(waiting for running ingests to finish...)", file=sys.stderr)


def cmd_fsck(args: argparse.Namespace) -> int:
    """Verify every object, blob, pointer, run record and cache entry; exit 1 when anything does not."""
    from contracts import ArtifactStore
    from flows.maintenance import fsck

    report = fsck(ArtifactStore(store_root(args)))
    if args.json:
        print(report.model_dump_json())
        return 0 if report.ok else 1
    print_problems(report.problems)
    print(f"checked {report.n_objects} objects, {report.n_blobs} blobs, {report.n_pointers} pointers, "
          f"{report.n_runs} runs, {report.n_cache_entries} cache entries in {report.seconds:.1f} s: "
          + ("all verify" if report.ok else f"{len(report.problems)} problem(s); run `citebound repair`"))
    return 0 if report.ok else 1


def cmd_repair(args: argparse.Namespace) -> int:
    """Re-derive damaged documents from their stored source bytes, drop those that cannot be; exit 1 when
    fsck still finds something afterwards."""
    root = prepare(args)
    from contracts import ArtifactStore
    from flows.maintenance import repair

    report = repair(ArtifactStore(root), index_type=args.index_type, ocr=not args.no_ocr, on_wait=_waiting)
    if args.json:
        print(report.model_dump_json())
        return 0 if not report.remaining else 1
    for name in report.removed:
        print(f"removed    {name} (did not verify)")
    for name in report.rederived:
        print(f"rederived  {name} from its stored source bytes")
    for line in report.dropped:
        print(f"dropped    {line}")
    for what in report.rebuilt:
        print(f"rebuilt    the {what}")
    print_problems(report.remaining)
    print(f"repair took {report.seconds:.1f} s: " + (
        "the store verifies" if not report.remaining else f"{len(report.remaining)} problem(s) remain"))
    return 0 if not report.remaining else 1


def cmd_gc(args: argparse.Namespace) -> int:
    """Remove blobs, upload copies and temporary files that nothing current references."""
    from contracts import ArtifactStore
    from flows.maintenance import gc

    root = store_root(args)
    if not args.dry_run:
        check_writable(root)
    report = gc(ArtifactStore(root), dry_run=args.dry_run, on_wait=_waiting)
    if args.json:
        print(report.model_dump_json())
        return 0
    verb = "would remove" if report.dry_run else "removed"
    print(f"{verb} {report.blobs_removed} blobs ({_mb(report.blob_bytes)}), {report.uploads_removed} upload copies "
          f"({_mb(report.upload_bytes)}), {report.stray_removed} temporary files ({_mb(report.stray_bytes)}); "
          f"kept {report.blobs_kept} blobs in use")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The fsck, repair and gc commands."""
    sp = sub.add_parser("fsck", help="verify every object and pointer; name what is damaged and whom it affects")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_fsck)

    sp = sub.add_parser("repair", help="re-derive damaged documents from stored source bytes, drop what cannot be")
    sp.add_argument("--index-type", choices=["flat", "hnsw"])
    sp.add_argument("--no-ocr", action="store_true")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_repair, runs_flows=True, before_flows=lambda a: check_writable(store_root(a)))

    sp = sub.add_parser("gc", help="remove blobs and upload copies nothing references")
    sp.add_argument("--dry-run", action="store_true", help="count what would be removed, remove nothing")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_gc)
