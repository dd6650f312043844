"""The pass's writer of the trigram index's own file (:mod:`.textindex`), in a thread.

Inserting text into FTS5 (cutting it into trigrams, writing segments at each
commit) was half of a first build's time in the one thread that wrote the
side database. SQLite allows one writer per file, so the index lives in
``side-text.sqlite3`` (:func:`~sessions_admin.ourdata.sidedb.text_path`),
attached to every side connection as ``text``; during a pass a
:class:`TextWriter` writes it from a thread with its own connection while
the pass's thread writes everything else. Each batch's text goes in as one
statement over a JSON array (``json_each``), so the thread holds Python's
lock only to start it: SQLite runs the whole insert on the other core.

**Two files, one answer.** A batch's text transaction commits just before
the side database's (:meth:`TextWriter.flush`). If the process dies between
the two commits, the text file is one batch ahead; the next pass takes the
same messages in again, and the file's own mark (the highest message id it
ever took in) makes that harmless: an id at or below it is deleted before it
is inserted, so no message is indexed twice. Deleting an id that is not
there does nothing. Search reads every candidate back from the store, so a
row the text file kept for a session the side database never took in
(it was deleted in the store between the two attempts) is never shown.

**A build may let it lag** (:class:`TextWriter`): then the text file is behind,
never with a gap, and :func:`.textindex.indexed_through` tells the search how far
it holds everything; the next pass's ``catch_up`` indexes what a dead build left out.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.textindex import (
    BUILD_SETTINGS,
    DEFAULT_SETTINGS,
    TextIndex,
    blocks,
)
from sessions_admin.store.feed import FeedMessage

logger = logging.getLogger(__name__)

#: In a build, the text file commits once per this many side transactions (each
#: FTS5 commit writes a segment, later merged: fewer, bigger ones cost less), and the
#: pass's thread runs at most this many batches ahead of the text thread (memory).
LAG_BATCHES = 8
IN_FLIGHT = 2


class TextWriter:
    """Writes the text file from a thread of its own, one transaction per side transaction.

    Operations queue in order; the first one after a commit opens the text
    transaction. :meth:`flush` waits for them and commits (raising the first
    failure, after rolling back); :meth:`abort` rolls back.

    **A build lets the text file lag.** Committing the text file before each
    side transaction made the pass's thread wait for FTS5's commit (writing a
    segment) at every batch: 41 % of a first build's time, one core idle. In
    :meth:`build_mode`, a batch whose only text is new messages (every id above
    any queued before: :meth:`add_messages`) does not wait: the text file commits every
    :data:`LAG_BATCHES` batches and may be that far behind the side database. It
    never holds a gap below its own mark (ids only grow there), so what it
    lacks is exactly the messages above its mark: searches scan those in the
    store (:func:`.textindex.indexed_through`), and the next pass indexes them
    again from the store if the process died (:func:`.listener.catch_up`). A
    batch with any other text work (a delete, a session taken in again)
    commits strictly, as outside a build. The pass's own thread is then the
    one that bounds a build.
    """

    def __init__(self) -> None:
        self.conn = sidedb.connect_text()
        # Each commit reaches the disk before the side database's: after a power
        # cut the text file may be ahead of it (harmless), never behind. A first
        # build turns this off with the side database's own fsyncs
        # (set_synchronous): a cut build is derived again by --rebuild.
        self.conn.execute("PRAGMA synchronous = FULL")
        self.index = TextIndex(self.conn, "main")
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sync-text")
        self.pending: list[Future] = []
        self.open = False
        self.failed: BaseException | None = None
        #: The highest message id queued for adding (the text file's mark once done).
        self.queued_max = self.pool.submit(self.index.mark).result()
        self.lag = False  # build mode: see the class's docstring
        self.strict = False  # this batch queued text work other than new messages
        self.lagged = 0  # batches queued since the text file last committed

    def run(self, operation: Callable[[TextIndex], None]) -> None:
        """Queue ``operation(index)`` in the current text transaction (committed with
        this batch, before the side database)."""
        self.strict = True
        self._queue(operation)

    def add_messages(self, messages: Sequence[FeedMessage]) -> None:
        """Queue these messages' text: folded into documents in the writer's thread,
        which a build's pass thread waits on less than on its own work."""
        if messages:
            self._ids_queued(m.id for m in messages)
            self._queue(lambda index: index.add(blocks(messages)))

    def _ids_queued(self, ids: Iterable[int]) -> None:
        ids = list(ids)
        if min(ids) <= self.queued_max:
            self.strict = True  # a message taken in again: see the class's docstring
        self.queued_max = max(self.queued_max, max(ids))

    def _queue(self, operation: Callable[[TextIndex], None]) -> None:
        def step() -> None:
            if self.failed is not None:
                return  # the transaction is lost already: flush raises and rolls back
            try:
                if not self.open:
                    self.conn.execute("BEGIN IMMEDIATE")
                    self.open = True
                operation(self.index)
            except BaseException as exc:
                self.failed = exc
                raise

        self.pending.append(self.pool.submit(step))

    def _settle(self, keep: int = 0) -> None:
        """Wait for all queued operations but the newest ``keep``."""
        done, self.pending = (
            self.pending[: len(self.pending) - keep],
            self.pending[-keep:] if keep else [],
        )
        for future in done:
            future.exception()  # wait; the first failure is in self.failed

    def _end(self, verb: str, *, wait: bool = True) -> None:
        def end() -> None:
            if self.open and not (verb == "COMMIT" and self.failed is not None):
                self.open = False
                try:
                    self.conn.execute(verb)
                except BaseException as exc:
                    self.failed = self.failed or exc  # raised by the next flush if not here
                    raise

        future = self.pool.submit(end)
        if wait:
            future.result()
        else:
            self.pending.append(future)

    def flush(self) -> None:
        """Commit what is queued (the side database commits right after), or in a
        build let new messages' text lag (see the class's docstring)."""
        if self.lag and not self.strict:
            self.lagged += 1
            if self.lagged >= LAG_BATCHES:
                self.lagged = 0
                self._end("COMMIT", wait=False)
            self._settle(keep=IN_FLIGHT)
            self._raise_failure()
            return
        self._settle()
        self._raise_failure()
        self._end("COMMIT")
        self.strict = False
        self.lagged = 0

    def _raise_failure(self) -> None:
        failed, self.failed = self.failed, None
        if failed is not None:
            self._settle()
            self._end("ROLLBACK")
            raise failed

    def abort(self) -> None:
        """Roll back what is not committed (in a build, text the side database may
        already hold: :func:`catch_up` takes it in again)."""
        self._settle()
        self.failed = None
        self._end("ROLLBACK")
        self.strict = False
        self.lagged = 0

    def build_mode(self, on: bool) -> None:
        """A first build: no fsyncs, and FTS5 merges its segments once at the end.

        Merging as it goes (``automerge`` 4, FTS5's default) rewrote the index
        several times over: with ``automerge`` 0, segments merged only when 64
        pile up at one level (``crisismerge``) and a hash of 8 MB (one segment
        per batch), the inserts and the final ``optimize`` took 40 % less CPU
        (600,000 messages of the demo store: 45,000 to 76,000 a CPU-second).
        The settings are kept in the table, so they go back after the build.
        """
        settings = BUILD_SETTINGS if on else DEFAULT_SETTINGS
        if not on:
            self._commit_lagged()
        self.lag = on

        def apply() -> None:
            self.conn.execute(f"PRAGMA synchronous = {'OFF' if on else 'FULL'}")
            for name, value in settings.items():
                self.conn.execute(
                    "INSERT INTO search_text (search_text, rank) VALUES (?, ?)", [name, value]
                )

        self.pool.submit(apply).result()

    def _commit_lagged(self) -> None:
        """The end of a build: commit the text the side database already holds (or, if
        that failed, roll it back: the next pass's :func:`catch_up` takes it in)."""
        self._settle()
        if self.failed is not None:
            logger.warning(
                "the text index's last build batches failed (%s): rolled back; the next "
                "pass indexes their text again from the store",
                self.failed,
            )
            self.abort()
        else:
            self._end("COMMIT")
        self.strict = False
        self.lagged = 0

    def _release(self) -> None:
        # A merge (optimize) or a big forget freed pages: give them back to the disk.
        self.conn.execute("PRAGMA incremental_vacuum").fetchall()
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        try:
            self.abort()
            self.pool.submit(self._release).result()
        finally:
            self.pool.submit(self.conn.close).result()
            self.pool.shutdown()


#: The writer of each pass's side connection (keyed by the connection's id).
_WRITERS: dict[int, TextWriter] = {}


def writer_of(side: sqlite3.Connection) -> TextWriter | None:
    return _WRITERS.get(id(side))


def run(side: sqlite3.Connection, operation: Callable[[TextIndex], None]) -> None:
    """``operation`` on the text index: queued to the pass's writer, or run now through
    the side connection's attached file (a delete outside a pass, a test)."""
    writer = writer_of(side)
    if writer is not None:
        writer.run(operation)
    else:
        operation(TextIndex(side, sidedb.TEXT_SCHEMA))


def add_messages(side: sqlite3.Connection, messages: Sequence[FeedMessage]) -> None:
    """Index these messages' text: through the pass's writer (which may let new
    messages lag in a build), or now through the attached file."""
    writer = writer_of(side)
    if writer is not None:
        writer.add_messages(messages)
    else:
        TextIndex(side, sidedb.TEXT_SCHEMA).add(blocks(messages))


def pair_new(side: sqlite3.Connection) -> None:
    """Name this side database and its (new, empty) text file with one fresh token."""
    token = secrets.token_hex(8)
    side.execute(
        "INSERT INTO main.search_state (key, value) VALUES ('pair', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [token],
    )
    run(side, lambda index: index.set_pair(token))


def begin_pass(side: sqlite3.Connection) -> None:
    """Hand the text file to a writer thread for a pass (the side connection lets go of it)."""
    if id(side) in _WRITERS:
        return
    attached = side.execute(
        "SELECT 1 FROM pragma_database_list WHERE name = ?", [sidedb.TEXT_SCHEMA]
    ).fetchone()
    if attached:
        sidedb.detach_text(side)
    _WRITERS[id(side)] = TextWriter()


def end_pass(side: sqlite3.Connection) -> None:
    writer = _WRITERS.pop(id(side), None)
    if writer is None:
        return
    try:
        writer.close()
    finally:
        sidedb.attach_text(side)
