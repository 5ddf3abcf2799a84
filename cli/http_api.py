"""``citebound api`` and ``keys``: serve the HTTP API for this store, and the API keys it accepts."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from cli.common import add_common, prepare, store_root

__all__ = ["add_parsers", "cmd_api", "cmd_keys"]


def cmd_api(args: argparse.Namespace) -> int:
    """Serve the HTTP API (FastAPI + uvicorn) for this store until interrupted."""
    from flows.settings import configure_query_process

    configure_query_process()
    root = prepare(args)
    import uvicorn

    from api.app import ApiConfig, create_app
    from api.auth import OpenAuthenticator
    from flows.runners import local_run_settings
    from flows.settings import Settings

    if args.no_auth and args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("citebound: --no-auth serves loopback only (--host 127.0.0.1)")
    db = None if args.no_auth else _open_db(args, root)
    settings = Settings()
    cfg = ApiConfig(store_root=root, llm_hosts=frozenset(args.llm_host), db=db,
                    rate_per_minute=args.rate_per_minute,
                    authenticator=OpenAuthenticator() if args.no_auth else None, index_uri=settings.index_uri,
                    quota_bytes=settings.quota_bytes, quota_documents=settings.quota_documents)
    app = create_app(cfg)
    with local_run_settings(os.environ.get("PREFECT_API_URL")):
        note = app.state.engine.warm_up()
        if note:
            print(f"citebound: {note}", file=sys.stderr)
        print(f"citebound API for {root} on http://{args.host}:{args.port} (OpenAPI at /docs)", file=sys.stderr)
        if db is not None and not any(not k.revoked for k in db.list_keys()):
            print("no API keys yet: every request will be refused until you run "
                  f"`citebound --store {root} keys add --tenant T`", file=sys.stderr)
        # SIGTERM/SIGINT: stop accepting, give requests in flight --shutdown-grace seconds, then end (uvicorn
        # re-raises the signal; an upload still being read is abandoned: the store's writes are atomic, and
        # `citebound gc` removes what it had written).
        server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                                               timeout_graceful_shutdown=args.shutdown_grace))
        try:
            server.run()
        except KeyboardInterrupt:  # SIGINT, re-raised by uvicorn once it has stopped (as uvicorn.run does)
            pass
    return 0


def _open_db(args: argparse.Namespace, root: Path):  # noqa: ANN202 - api.db.Database
    from api.db import Database, default_url

    db = Database(args.db or os.environ.get("CITEBOUND_DB_URL") or default_url(root))
    db.migrate()
    return db


def cmd_keys(args: argparse.Namespace) -> int:
    """API keys: add (the key is printed once, on the last line), list, revoke."""
    root = store_root(args)
    root.mkdir(parents=True, exist_ok=True)
    db = _open_db(args, root)
    try:
        if args.action == "add":
            if not args.tenant:
                raise SystemExit("citebound: keys add needs --tenant T")
            key_id, key = db.add_key(args.tenant, args.label)
            print(f"key {key_id} for tenant {args.tenant} (shown once; only its hash is kept):")
            print(key)
        elif args.action == "list":
            keys = db.list_keys(args.tenant)
            if args.json:
                for k in keys:
                    print(json.dumps({"key_id": k.key_id, "tenant": k.tenant_id, "label": k.label,
                                      "created_at": k.created_at.isoformat(), "revoked": k.revoked}))
            for k in [] if args.json else keys:
                print(f"{k.key_id}  {k.tenant_id:20s} {'revoked' if k.revoked else 'active ':8s} "
                      f"{k.created_at:%Y-%m-%d %H:%M}  {k.label or ''}".rstrip())
        else:
            if not args.key_id:
                raise SystemExit("citebound: keys revoke needs a KEY_ID (see keys list)")
            if not db.revoke_key(args.key_id):
                print(f"citebound: no active key {args.key_id!r}", file=sys.stderr)
                return 1
            print(f"revoked {args.key_id}")
    finally:
        db.close()
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The api and keys commands."""
    sp = sub.add_parser("api", help="serve the HTTP API (FastAPI; OpenAPI at /docs)")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=int, default=8000)
    sp.add_argument("--no-auth", action="store_true", help="no keys: every caller is one local user (loopback only)")
    sp.add_argument("--llm-host", action="append", default=[],
                    help="a host requests may name as their OpenAI-compatible server besides loopback (repeatable)")
    sp.add_argument("--db", help="database URL for keys, documents and runs (default: SQLite in the store; "
                                 "e.g. postgresql+psycopg://user@host/db)")
    sp.add_argument("--rate-per-minute", type=float, default=600.0, help="requests per minute per key")
    sp.add_argument("--shutdown-grace", type=int, default=2,
                    help="seconds requests in flight get to finish after SIGTERM/SIGINT (default 2)")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_api)

    sp = sub.add_parser("keys", help="API keys: add --tenant T | list | revoke KEY_ID")
    sp.add_argument("action", choices=["add", "list", "revoke"])
    sp.add_argument("key_id", nargs="?")
    sp.add_argument("--tenant")
    sp.add_argument("--label")
    sp.add_argument("--db", help="database URL (default: SQLite in the store)")
    add_common(sp, scope=False)
    sp.set_defaults(func=cmd_keys)
