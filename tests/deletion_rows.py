"""Stores filled for the deletion tests, and what to read back from them."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import connections

from sessions_admin.deletion import Actor
from sessions_admin.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from sessions_admin.ourdata.storename import current_store
from tests.storebuilder import BASE_MS

ACTOR = Actor(name="tester")


def fill(
    store,
    sessions: int,
    messages: int = 3,
    *,
    principal: str = "user:alice",
    prefix: str = "s",
    last_active: int = BASE_MS,
    state: bool = True,
) -> list[str]:
    ids = [f"{prefix}{n:05d}" for n in range(sessions)]
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count,"
            " created_at, last_active) VALUES (?, 't', 'default', ?, 'x', 0, ?, ?)",
            [(sid, principal, last_active, last_active) for sid in ids],
        )
        conn.executemany(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES (?, 'user', 'm', ?)",
            [(sid, last_active) for sid in ids for _ in range(messages)],
        )
        if state:
            conn.executemany(
                "INSERT INTO session_state (session_id, key, value, updated_at) "
                "VALUES (?, 'repl_state', '{}', 0)",
                [(sid,) for sid in ids],
            )
    return ids


def rows_of(store, session_id: str) -> tuple[int, int, int]:
    return (
        store.execute("SELECT COUNT(*) FROM sessions WHERE id = ?", (session_id,))[0][0],
        store.execute("SELECT COUNT(*) FROM session_messages WHERE session_id = ?", (session_id,))[
            0
        ][0],
        store.execute("SELECT COUNT(*) FROM session_state WHERE session_id = ?", (session_id,))[0][
            0
        ],
    )


def other_tables(store) -> dict:
    return {
        "schema": store.schema_objects(),
        "memory": store.execute("SELECT * FROM memory_records ORDER BY id"),
        "user_version": store.execute("PRAGMA user_version"),
    }


class Recorder:
    """Every statement sent to the store, and whether it ran inside a transaction."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, tuple, bool]] = []

    def __call__(self, execute, sql, params, many, context):
        connection = connections["agents"]
        self.statements.append(
            (sql.replace("%s", "?"), tuple(params or ()), connection.in_atomic_block)
        )
        return execute(sql, params, many, context)

    def writes(self) -> list[tuple[str, tuple, bool]]:
        return [s for s in self.statements if not s[0].lstrip().upper().startswith("SELECT")]


def annotate(session_id: str, *, store_name: str | None = None) -> ReviewItem:
    """Two notes, a label and a reviewed queue item with text, on ``session_id``."""
    store = store_name or current_store()
    user, _ = User.objects.get_or_create(username="reviewer")
    label, _ = Label.objects.get_or_create(name="regression")
    for text in ("first look", "second look"):
        Note.objects.create(
            store_name=store, session_id=session_id, text=text, author=user, author_name="r"
        )
    SessionLabel.objects.create(store_name=store, session_id=session_id, label=label)
    queue, _ = ReviewQueue.objects.get_or_create(
        name="q", store_name=store, defaults={"source": "/sessions/"}
    )
    return ReviewItem.objects.create(
        queue=queue,
        store_name=store,
        session_id=session_id,
        position=queue.items.count(),
        verdict="fail",
        text="broke the deploy",
        reviewer=user,
    )
