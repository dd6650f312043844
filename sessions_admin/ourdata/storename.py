"""Which store a row of ours is about, and which store this data folder was made for.

Several dashboards (one per store) may share one PostgreSQL for accounts, the
audit, notes and queues; a session id means something only within its store.
So every row of ours that names a session also names its store, and every page
reads only its own store's rows. A store is known by its host and its file
(``host:/srv/agents/data/agents/store.db``) unless ``SESSIONS_ADMIN_STORE_NAME``
names it, so two stores on one host never share a name.

The data folder (``settings.VAR_DIR``) holds our side index and, by default,
Django's own database: it belongs to one store. ``store-identity.json`` there
records which, when the folder is first used; pointed at another store (a copy
made to try something), the dashboard refuses to start and to delete until
told (:func:`identity_problem`, ``manage.py adopt_store``).
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import sha256
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, models, transaction

from sessions_admin.store.feed import store_file

#: Longest store name kept (``SESSIONS_ADMIN_STORE_NAME`` is cut to it).
STORE_NAME_CHARS = 100
IDENTITY_FILE = "store-identity.json"


@dataclass(frozen=True)
class StoreIdentity:
    """The store a data folder was made for: its file, and the name our rows give it."""

    store: str
    name: str


def host_name() -> str:
    return socket.gethostname()[:50] or "localhost"


def default_name(store: str) -> str:
    """``host:/path/to/store.db``; a path too long for the column goes by its digest."""
    name = f"{host_name()}:{store}"
    if len(name) > STORE_NAME_CHARS:
        digest = sha256(store.encode("utf-8", "surrogateescape")).hexdigest()
        name = f"{host_name()}:sha256:{digest[:32]}"
    return name


def identity_path() -> Path:
    return Path(settings.VAR_DIR) / IDENTITY_FILE


def read_identity() -> StoreIdentity | None:
    """What ``store-identity.json`` says (None: the folder has none, or it is unreadable)."""
    try:
        data = json.loads(identity_path().read_text("utf-8"))
        return StoreIdentity(store=str(data["store"]), name=str(data["name"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _legacy_rows_exist(name: str) -> bool:
    """Whether our tables already hold rows under ``name`` (a folder from before identities)."""
    try:
        # A savepoint: during the migrations that add these columns the query fails,
        # and on PostgreSQL a failed query would abort the migration's transaction.
        with transaction.atomic():
            for label in ("DeletionAudit", "Note", "ReviewQueue"):
                model = apps.get_model("sessions_admin", label)
                if model.objects.filter(store_name=name).exists():
                    return True
    except (DatabaseError, LookupError):
        return False
    return False


def write_identity(store: str, name: str) -> StoreIdentity:
    """Record that this data folder belongs to ``store`` (``adopt_store`` and first use)."""
    identity = StoreIdentity(store=store, name=name)
    payload = {"store": store, "name": name, "recorded_at": datetime.now(UTC).isoformat()}
    path = identity_path()
    tmp = path.with_suffix(".tmp")
    # Private as everything in the data folder, whatever the umask.
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(json.dumps(payload, indent=2) + "\n")
    os.replace(tmp, path)
    _cache.clear()
    return identity


def ensure_identity() -> StoreIdentity:
    """This folder's identity, recorded now if it has none.

    A folder already holding rows under the host name alone (made before stores
    had identities) keeps that name, so its notes and audit stay visible.
    """
    found = read_identity()
    if found is not None:
        return found
    store = store_file()
    legacy = host_name()
    name = legacy if _legacy_rows_exist(legacy) else default_name(store)
    try:
        return write_identity(store, name)
    except OSError:
        return StoreIdentity(store=store, name=name)


_cache: dict[tuple, str] = {}


def current_store() -> str:
    """The name our rows give the store this process reads.

    ``SESSIONS_ADMIN_STORE_NAME`` when set; else the name this data folder
    recorded for its store; a different store (a copy) gets a name of its own,
    so nothing done there reaches the other store's rows.
    """
    explicit = getattr(settings, "STORE_NAME", None)
    store = store_file()
    key = (explicit, str(settings.VAR_DIR), store)
    if key not in _cache:
        if explicit:
            name = str(explicit)[:STORE_NAME_CHARS]
        else:
            identity = ensure_identity()
            name = identity.name if identity.store == store else default_name(store)
        _cache[key] = name
    return _cache[key]


def identity_problem() -> str:
    """Why this process must not act on its store with this data folder ("" when it may)."""
    if not getattr(settings, "STORE_IDENTITY_CHECK", True):
        return ""
    identity = ensure_identity()
    store = store_file()
    if identity.store == store:
        return ""
    return (
        f"The data folder {settings.VAR_DIR} was made for the store {identity.store}, "
        f"not {store}: its notes, verdicts, receipts and index belong to that store. "
        "To look at this store, give it a data folder of its own "
        "(SESSIONS_ADMIN_VAR_DIR=/another/folder); if the store itself moved here, "
        "run `manage.py adopt_store` once."
    )


class OfThisStore(models.QuerySet):
    """Our rows, each of which names its store: ``.of_this_store()`` keeps this store's."""

    def of_this_store(self) -> OfThisStore:
        return self.filter(store_name=current_store())
