"""One pass over the store's new messages feeds every consumer of our side database.

``manage.py sync_index`` reads the messages after the last id it has seen
(:mod:`sessions_admin.store.feed`) and hands each batch to every
:class:`SyncListener` in :data:`LISTENERS`, inside the same transaction on
the side database as the batch's bookkeeping, so an interrupted build resumes
where its last committed batch ended and the consumers never drift apart.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

from sessions_admin.store.feed import FeedMessage


class SyncListener(Protocol):
    """A consumer of the sync: the search index, the rollups."""

    name: str

    def create(self, side: sqlite3.Connection) -> None:
        """Create this consumer's tables in the side database if they are missing."""

    def reset(self, side: sqlite3.Connection) -> None:
        """Forget everything (``sync_index --rebuild``)."""

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        """Take in a batch of new messages, ids increasing."""

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        """Drop what these sessions contributed (deleted by the runtime or by us)."""

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        """Drop what these messages contributed (deleted while their session stays)."""


#: Filled in by the consumers' modules (the search index, the rollups).
LISTENERS: list[SyncListener] = []
