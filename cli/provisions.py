"""``citebound provisions map`` and ``provisions show``: which section of a newer code replaced an older one's.

``map`` builds (or, unchanged, reads back from the cache) the alignment of ``--from`` to ``--to`` and prints it:
one line a section, or JSON lines (``from_code``, ``from_section``, ``to_code``, ``to_sections`` best first and
empty when there is no successor, ``score``, and the evidence). ``show`` prints one older section beside its
successor(s), from the map last built.
"""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap

from cli.common import add_common, check_writable, prepare, store_root

__all__ = ["add_parsers", "cmd_map", "cmd_show"]


def _line(pmap, link) -> dict:  # noqa: ANN001 - ProvisionMap, ProvisionLink
    row = {"from_code": pmap.from_code, "from_section": link.from_section, "from_title": link.from_title,
           "to_code": pmap.to_code, "to_sections": list(link.to_sections), "score": link.score,
           "evidence": link.evidence.model_dump(mode="json")}
    if not link.to_sections:
        row.update(nearest=link.nearest, nearest_score=link.nearest_score, reason=link.reason)
    if pmap.to_commencement:
        row["to_commencement"] = pmap.to_commencement
    return row


def cmd_map(args: argparse.Namespace) -> int:
    root = store_root(args)
    check_writable(root)
    prepare(args, prefect=False)
    from flows.provisions_flow import build_provision_map

    _, pmap = build_provision_map(str(root), args.from_code, args.to_code, from_path=args.from_file,
                                  to_path=args.to_file, force=args.force)
    for link in pmap.links:
        if args.json:
            print(json.dumps(_line(pmap, link), ensure_ascii=False))
        elif link.to_sections:
            print(f"{pmap.from_code} {link.from_section:>6} -> {pmap.to_code} {', '.join(link.to_sections):<10} "
                  f"{link.score:.2f}  {link.from_title[:60]}")
        else:
            print(f"{pmap.from_code} {link.from_section:>6} -> no successor (nearest {pmap.to_code} {link.nearest}, "
                  f"{link.nearest_score:.2f}{_why(link)})  {link.from_title[:60]}")
    return 0


def _why(link) -> str:  # noqa: ANN001 - ProvisionLink
    return ", no shared term beyond the code's boilerplate" if link.reason == "no_evidence" else ""


def _column(title: str, text: str, width: int) -> list[str]:
    return [*textwrap.wrap(title, width), "", *textwrap.wrap(text, width)]


def cmd_show(args: argparse.Namespace) -> int:
    from contracts.provisions import ProvisionsError
    from flows.provisions_flow import stored_map

    pmap, older, newer = stored_map(str(store_root(args)), args.code, args.to_code)
    link = pmap.link(args.section)
    if link is None:
        raise ProvisionsError(f"{pmap.from_code} has no section {args.section!r}")
    old = next(p for p in older.provisions if p.section == link.from_section)
    new = [p for p in newer.provisions if p.section in link.to_sections]
    new.sort(key=lambda p: link.to_sections.index(p.section))
    if args.json:
        print(json.dumps({**_line(pmap, link), "from_text": old.text,
                          "to_texts": [{"section": p.section, "title": p.title, "text": p.text} for p in new]},
                         ensure_ascii=False))
        return 0
    if link.to_sections:
        head = (f"{pmap.from_code} s.{link.from_section} -> {pmap.to_code} s.{', '.join(link.to_sections)}  "
                f"score {link.score:.2f} (heading {link.evidence.heading:.2f}, embedding {link.evidence.embedding:.2f},"
                f" words {link.evidence.words:.2f}, {'in order' if link.evidence.in_order else 'out of order'})")
    else:
        head = (f"{pmap.from_code} s.{link.from_section}: no successor in {pmap.to_code} "
                f"(nearest s.{link.nearest}, score {link.nearest_score:.2f}{_why(link)})")
    print(head)
    width = max(30, (shutil.get_terminal_size((120, 24)).columns - 3) // 2)
    left = _column(f"{pmap.from_code} {old.section}. {old.title}", old.text, width)
    right: list[str] = []
    for p in new:
        right += [*_column(f"{pmap.to_code} {p.section}. {p.title}", p.text, width), ""]
    for k in range(max(len(left), len(right))):
        a = left[k] if k < len(left) else ""
        b = right[k] if k < len(right) else ""
        print(f"{a:<{width}} | {b}".rstrip())
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The provisions command group."""
    sp = sub.add_parser("provisions", help="successor sections: align an older code to a newer one")
    group = sp.add_subparsers(dest="provisions_command", required=True)

    p = group.add_parser("map", help="align --from's sections to --to's and print the table")
    p.add_argument("--from", dest="from_code", required=True, help="doc code of the older code (e.g. IPC)")
    p.add_argument("--to", dest="to_code", required=True, help="doc code of the newer code (e.g. BNS)")
    p.add_argument("--from-file", help="the older code's file (default: its ingested document)")
    p.add_argument("--to-file", help="the newer code's file (default: its ingested document)")
    p.add_argument("--force", action="store_true", help="recompute even when cached")
    add_common(p, scope=False)
    p.set_defaults(func=cmd_map)

    p = group.add_parser("show", help="one older section beside its successor(s), from the map last built")
    p.add_argument("code", help="the older code (e.g. IPC)")
    p.add_argument("section", help="its section number (e.g. 420)")
    p.add_argument("--to", dest="to_code", default="BNS", help="the newer code (default BNS)")
    add_common(p, scope=False)
    p.set_defaults(func=cmd_show)
