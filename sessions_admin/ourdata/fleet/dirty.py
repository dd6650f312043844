"""Which sessions the fleet's directory must be told about: a sync listener that notes them.

Every change a pass makes to a session's share of the side data (new, new messages,
edited, moved, forgotten) goes through the listeners in the pass's own transaction;
this one writes the session's id to ``fleet_dirty`` in the side database there. The
publisher (:mod:`.publish`) reads those ids after the pass, writes their current rows
to the shared database, and only then clears them: a pass killed in between, or a
database that cannot be reached, leaves them noted for the next pass.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from django.conf import settings

from sessions_admin.ourdata.sidedb import bind_id, run_script
from sessions_admin.store.feed import FeedMessage, FeedSession

SCHEMA = """
CREATE TABLE IF NOT EXISTS fleet_dirty (id PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fleet_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
"""
#: ``fleet_state`` key: every session is to be published again (a rebuild, a message
#: deleted on its own), and rows of sessions the store no longer holds swept.
EVERYTHING = "everything"


def publishing() -> bool:
    """Is this host part of a fleet (``SESSIONS_ADMIN_FLEET``)?"""
    return bool(getattr(settings, "FLEET_PUBLISH", False))


def note(side: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    side.executemany(
        "INSERT OR IGNORE INTO fleet_dirty (id) VALUES (?)", [(bind_id(s),) for s in session_ids]
    )


def note_everything(side: sqlite3.Connection) -> None:
    side.execute(
        "INSERT INTO fleet_state (key, value) VALUES (?, 1) "
        "ON CONFLICT (key) DO UPDATE SET value = 1",
        [EVERYTHING],
    )


class FleetDirty:
    """The sync listener, registered in ``AppConfig.ready()``. While this host does not
    publish it notes nothing; a side database that published before is marked to be
    published whole when publishing is on again (what changed meanwhile is not known)."""

    name = "fleet"

    def create(self, side: sqlite3.Connection) -> None:
        if publishing():
            run_script(side, SCHEMA)

    def begin_pass(self, side: sqlite3.Connection) -> None:
        if not publishing() and _has_tables(side):
            note_everything(side)

    def reset(self, side: sqlite3.Connection) -> None:
        if _has_tables(side):
            side.execute("DELETE FROM fleet_dirty")
            note_everything(side)

    def update_sessions(self, side: sqlite3.Connection, sessions: Sequence[FeedSession]) -> None:
        if publishing():
            note(side, (session.id for session in sessions))

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        if publishing():
            note(side, dict.fromkeys(message.session_id for message in batch))

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        if publishing():
            note(side, session_ids)

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        # Which sessions these messages belonged to is not at hand: publish them all.
        if publishing() and message_ids:
            note_everything(side)


def _has_tables(side: sqlite3.Connection) -> bool:
    found = side.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fleet_state'"
    ).fetchone()
    return found is not None
