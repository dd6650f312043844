"""Which store a row of ours is about: ``settings.STORE_NAME``.

Several dashboards (one per host, each over its own store) may share one
PostgreSQL for accounts, the audit, notes and queues; a session id means
something only within its store. So every row of ours that names a session
also names its store, and every page reads only its own store's rows.
"""

from __future__ import annotations

from django.conf import settings

#: Longest store name kept (``SESSIONS_ADMIN_STORE_NAME`` is cut to it).
STORE_NAME_CHARS = 100


def current_store() -> str:
    """This dashboard's store name (``SESSIONS_ADMIN_STORE_NAME``, default the host name)."""
    return str(settings.STORE_NAME)[:STORE_NAME_CHARS]
