"""Alembic environment: migrations run on the connection ``api.db.Database.migrate`` hands over."""

from alembic import context

from api.db import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata)
with context.begin_transaction():
    context.run_migrations()
