"""The wake ritual's sessions, its guess log and the phrase-vector cache, on PostgreSQL:
the statements of memlane.store.dialect (SQLite's too) in PostgreSQL's dialect (the
schema is in memlane.store.postgres.schema).
"""

from __future__ import annotations

from functools import partial

from memlane.store.dialect import wake as shared
from memlane.store.postgres.sql import POSTGRES

forget_memory = partial(shared.forget_memory, POSTGRES)
