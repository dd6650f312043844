"""The consumers of the sync (the search index, the rollups) and the one list that holds them.

The app registers each consumer in ``AppConfig.ready()`` (:func:`register`); a
pass, a delete's forgetting and ``prepare`` call every listener in that list.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Protocol

from sessions_admin.store.feed import FeedMessage


class SyncListener(Protocol):
    """A consumer of the sync: the search index, the rollups.

    Optional methods, called when a listener has them:

    * ``update_sessions(side, sessions)`` takes the current rows
      (:class:`~sessions_admin.store.feed.FeedSession`) of sessions that are
      new or got new messages in the batch, in the batch's transaction;
    * ``finish_build(side)`` runs in its own transaction after a pass that
      took in at least :data:`LONG_PASS` messages (a first build), e.g. to
      merge an index's segments;
    * ``begin_pass(side)`` / ``end_pass(side)`` around a pass's work, and
      ``before_commit(side)`` / ``after_rollback(side)`` around each of its
      transactions: a listener that writes a file of its own from another
      thread (the search index's text) commits it just before the side
      database; ``build_mode_on(side)`` / ``build_mode_off(side)`` around a
      first build's batches (no fsyncs);
    * ``begin_forgetting(side)`` / ``end_forgetting(side)`` around a large
      forgetting (an erasure's thousands of sessions), which commits through
      ``before_commit`` too: the text file's deletes run beside the rest.

    Deferring an index to the end of a build was measured and dropped: this
    SQLite keeps its temporary files in memory (``SQLITE_TEMP_STORE=3``), so
    sorting ten million keys at the end took peak RSS to 628 MB.
    """

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


#: Filled in by :func:`register` (the app's ``ready()``): the search index, the rollups.
LISTENERS: list[SyncListener] = []


def register(listener: SyncListener) -> None:
    """Add a consumer (once): every pass and every forgetting reaches it from then on."""
    if listener not in LISTENERS:
        LISTENERS.append(listener)


def listeners() -> list[SyncListener]:
    return LISTENERS


def call_hooks(name: str, side: sqlite3.Connection) -> None:
    """Call the listeners' optional hook ``name`` (see :class:`SyncListener`)."""
    for listener in listeners():
        hook = getattr(listener, name, None)
        if hook is not None:
            hook(side)
