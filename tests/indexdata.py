"""The side search index read back, and a small store to fill it (for the sync's tests)."""

from __future__ import annotations

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.text import contains, fold, fts_query
from sessions_admin.store import feed


def indexed_ids(table: str = "search_messages") -> list:
    """The ids (rowids for the FTS tables) an index table holds, in order."""
    side = sidedb.connect()
    try:
        column = "rowid" if table.endswith("_text") else "id"
        if table == "search_text":
            # A contentless index answers MATCH, not plain reads: ask for every trigram-free doc
            # through the per-message table instead.
            table, column = "search_messages", "id"
        return [row[0] for row in side.execute(f"SELECT {column} FROM {table} ORDER BY 1")]
    finally:
        side.close()


def matching(text: str) -> list[int]:
    """The message ids the search index holds with ``text``, in order: the messages of
    every block matching it whose own text (read from the store) holds it, once per
    block holding it (a message in two blocks is there twice)."""
    side = sidedb.connect()
    try:
        candidates = [
            row[0]
            for row in side.execute(
                "SELECT m.id FROM search_text AS t "
                "CROSS JOIN search_blocks AS b ON b.high = t.rowid "
                "CROSS JOIN search_messages AS h ON h.id = t.rowid "
                "CROSS JOIN search_messages AS m ON m.session = h.session "
                "AND m.id BETWEEN b.low AND b.high WHERE search_text MATCH ?",
                (fts_query(fold(text)),),
            )
        ]
    finally:
        side.close()
    found = feed.messages_by_id(candidates)
    return sorted(
        mid
        for mid in candidates
        if mid in found
        and contains(
            fold(text),
            (
                found[mid].content,
                found[mid].tool_name,
                found[mid].tool_args,
                found[mid].tool_result,
            ),
        )
    )


def fill(store, sessions: int = 3, per_session: int = 4) -> list[str]:
    """Sessions ``sess_<s>`` of ``per_session`` messages, each with the word ``wombat<s>``."""
    ids = []
    for s in range(sessions):
        sid = store.add_session(f"sess_{s}", title=f"title {s}", principal=f"user:{s}")
        ids.append(sid)
        for m in range(per_session):
            store.add_message(sid, "user", f"message {m} of session {s} wombat{s}")
    return ids
