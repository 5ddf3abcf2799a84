"""keys, document registry, run index

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(32), primary_key=True),
        sa.Column("tenant_id", sa.String(200), nullable=False, index=True),
        sa.Column("key_sha256", sa.String(64), nullable=False),
        sa.Column("label", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "documents",
        sa.Column("doc_key", sa.String(64), primary_key=True),
        sa.Column("tenant_id", sa.String(200), nullable=False, index=True),
        sa.Column("project_id", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(500), nullable=False),
        sa.Column("doc_code", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("tenant_id", sa.String(200), nullable=False, index=True),
        sa.Column("flow", sa.String(32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("runs")
    op.drop_table("documents")
    op.drop_table("api_keys")
