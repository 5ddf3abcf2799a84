"""The API's database: tenants' keys, the document registry and the run index (SQLAlchemy 2, Alembic).

SQLite in the store (``<store>/citebound.db``) by default; PostgreSQL (or any SQLAlchemy URL) when given
(``citebound api --db postgresql+psycopg://...`` or ``CITEBOUND_DB_URL``). The schema is made by the Alembic
migrations in ``api/migrations`` (``Database.migrate()``, run on every open: a no-op when current).

Keys: ``cb_<key id>_<secret>``; only sha256(key) is stored (keys are 256-bit random, so a slow hash adds
nothing), looked up by key id and compared with ``hmac.compare_digest``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import DateTime, String, create_engine, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

__all__ = ["Base", "ApiKey", "DocumentRow", "RunRow", "Database", "KeyInfo", "default_url"]

KEY_PREFIX = "cb_"


class Base(DeclarativeBase):
    pass


class ApiKey(Base):
    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(200), index=True)
    key_sha256: Mapped[str] = mapped_column(String(64))
    label: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class DocumentRow(Base):
    """Which tenant uploaded which document through the API (the store's catalog holds the content)."""

    __tablename__ = "documents"

    doc_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(200), index=True)
    project_id: Mapped[str] = mapped_column(String(200))
    filename: Mapped[str] = mapped_column(String(500))
    doc_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RunRow(Base):
    """The run index: which tenant each API-started run belongs to."""

    __tablename__ = "runs"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(200), index=True)
    flow: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class KeyInfo:
    key_id: str
    tenant_id: str
    label: str | None
    created_at: datetime
    revoked: bool


def default_url(store_root: Path) -> str:
    return f"sqlite:///{Path(store_root).resolve() / 'citebound.db'}"


def _now() -> datetime:
    return datetime.now(UTC)


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Database:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = create_engine(url, pool_pre_ping=True)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def migrate(self) -> None:
        """Bring the schema to the newest Alembic revision."""
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(Path(__file__).resolve().parent / "migrations"))
        with self.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")

    def close(self) -> None:
        self.engine.dispose()

    # ------------------------------------------------------------------ keys

    def add_key(self, tenant_id: str, label: str | None = None) -> tuple[str, str]:
        """Create a key for ``tenant_id``; returns (key id, the key). The key itself is not kept."""
        key_id = secrets.token_hex(6)
        key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        with self.sessions.begin() as s:
            s.add(ApiKey(key_id=key_id, tenant_id=tenant_id, key_sha256=_sha(key), label=label, created_at=_now()))
        return key_id, key

    def list_keys(self, tenant_id: str | None = None) -> list[KeyInfo]:
        with self.sessions() as s:
            q = select(ApiKey).order_by(ApiKey.created_at)
            if tenant_id is not None:
                q = q.where(ApiKey.tenant_id == tenant_id)
            return [KeyInfo(k.key_id, k.tenant_id, k.label, k.created_at, k.revoked_at is not None)
                    for k in s.scalars(q)]

    def revoke_key(self, key_id: str) -> bool:
        with self.sessions.begin() as s:
            row = s.get(ApiKey, key_id)
            if row is None or row.revoked_at is not None:
                return False
            row.revoked_at = _now()
            return True

    def tenant_of_key(self, key: str) -> tuple[str, str] | None:
        """(tenant, key id) for a live key, else None. Constant-time comparison of the hashes."""
        if not key.startswith(KEY_PREFIX) or key.count("_") < 2:
            return None
        key_id = key[len(KEY_PREFIX):].split("_", 1)[0]
        with self.sessions() as s:
            row = s.get(ApiKey, key_id)
            stored = row.key_sha256 if row is not None else "0" * 64
            ok = hmac.compare_digest(_sha(key), stored)
            if row is None or not ok or row.revoked_at is not None:
                return None
            return row.tenant_id, row.key_id

    # ------------------------------------------------------------------ documents and runs

    def record_document(self, doc_key: str, tenant_id: str, project_id: str, filename: str,
                        doc_code: str | None) -> None:
        with self.sessions.begin() as s:
            s.merge(DocumentRow(doc_key=doc_key, tenant_id=tenant_id, project_id=project_id, filename=filename,
                                doc_code=doc_code, created_at=_now()))

    def forget_document(self, doc_key: str) -> None:
        with self.sessions.begin() as s:
            row = s.get(DocumentRow, doc_key)
            if row is not None:
                s.delete(row)

    def record_run(self, run_id: str, tenant_id: str, flow: str) -> None:
        with self.sessions.begin() as s:
            s.merge(RunRow(run_id=run_id, tenant_id=tenant_id, flow=flow, created_at=_now()))

    def run_tenant(self, run_id: str) -> str | None:
        with self.sessions() as s:
            row = s.get(RunRow, run_id)
            return row.tenant_id if row else None

    def runs_of(self, tenant_id: str, limit: int = 100) -> list[RunRow]:
        with self.sessions() as s:
            q = select(RunRow).where(RunRow.tenant_id == tenant_id).order_by(RunRow.created_at.desc()).limit(limit)
            return list(s.scalars(q))
