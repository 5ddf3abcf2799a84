"""``citebound``: ingest, ask, retrieve, validate, demo, runs, replay, show, remove, docs, reindex, fsck, repair,
gc, api, keys, mcp, server, eval, train-verifier, provisions, reader-questions, reader-pairs.

Every command takes ``--store DIR`` (default ``$CITEBOUND_HOME``, else ``./artifacts``). Heavy imports
(Prefect, torch) happen inside commands, after the process environment is set for offline, quiet runs.
Exit codes: 0 answered and grounded / valid / done; 1 refused / invalid / some file failed; 2 usage or
configuration error, or a store the file system refuses (one line naming the path and the cause).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from cli import (
    ask, demo, documents, evaluate, http_api, index, ingest, maintenance, mcp_stdio, prefect_server, provisions,
    reader, runs, settings, train,
)
from cli.common import prepare, quiet_store_refusals

__all__ = ["build_parser", "main"]

_REFUSALS = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM})

# In the order `citebound --help` lists them.
COMMAND_GROUPS = (
    ingest, ask, demo, settings, runs, documents, index, maintenance, http_api, mcp_stdio, evaluate, train, reader,
    prefect_server, provisions,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="citebound", description=__doc__.split("\n")[0])
    p.add_argument("--store", help="store folder (default $CITEBOUND_HOME, else ./artifacts)")
    sub = p.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.add_parsers(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from contracts.errors import CiteboundError, StorageError

    try:
        if getattr(args, "runs_flows", False):
            if getattr(args, "before_flows", None):
                args.before_flows(args)  # refuse bad requests before paying for a Prefect start-up
            # Flow runs from this process: no per-run heartbeat thread (0.6-0.8 s per run, see bench/cli.py).
            prepare(args)  # env and server first: Prefect reads its settings when it is imported
            quiet_store_refusals()  # a store the file system refuses is told in one line below, not by Prefect
            from flows.runners import local_run_settings

            with local_run_settings(os.environ.get("PREFECT_API_URL")):
                return args.func(args)
        return args.func(args)
    except StorageError as exc:
        print(f"citebound: {exc.describe()}", file=sys.stderr)
        return 2
    except CiteboundError as exc:
        print(f"citebound: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"citebound: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno not in _REFUSALS:
            raise
        # The file system refused something outside the store (the user's Prefect home, an output folder).
        print(f"citebound: {StorageError('write', exc.filename or 'a file', exc).describe()}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
