"""What ``sync_index`` reads from the store: new messages, in id order, with their session.

Message ids only grow (``AUTOINCREMENT``), so "everything after the last id
we saw" is complete. Values are normalised here, once, so that nothing
downstream meets a BLOB or a REAL where text or an integer was declared:
text columns arrive as ``str`` or ``None`` (a BLOB decoded with replacement
characters; TEXT that is not UTF-8 as an ``Undecodable``, a ``str`` with
U+FFFD in place of the bad bytes, so the index and the rollups take the rest
of its text and the pass never stops on it), integer columns as ``int``
or ``None`` (anything that is not a whole number within SQLite's signed 64
bits becomes ``None``).

This is the only code that reads the store for our side data (with
:mod:`.blockread`, which it runs): the sync's batches, every session row in
blocks (:func:`read_blocks`, to notice what the runtime edited or deleted),
the queries the search uses to check each hit against the
store's own row (:func:`messages_by_id`, :func:`sessions_by_id`,
:func:`newest_messages`), the session list's filters and order as SQL
(:func:`session_list_sql`) for the side index's copy of the session columns,
and the sessions that moved since the last pass, which the list reads from
the store instead (:func:`sessions_touched_after`, :func:`session_sort_values`).

The package's edge is the wall: ``ourdata/`` imports from the store only this
package (and ``store.toolcalls``), so what it needs is exported here.
"""

from sessions_admin.sqlhelpers import BEFORE_FIRST_ID, INT_MAX, INT_MIN
from sessions_admin.store.blockread import row_digest
from sessions_admin.store.feed.blocks import (
    BLOCK_BITS,
    CHILD_FROM_ROWIDS,
    PART_BLOCKS,
    BlockPart,
    all_sessions,
    block_ranges,
    read_blocks,
)
from sessions_admin.store.feed.messages import (
    READ_ERRORS,
    MessageStats,
    call_heads,
    calls,
    close_thread_connection,
    count_messages_after,
    last_message_id,
    message_stats,
    messages_after,
    messages_by_id,
    messages_of_sessions,
    newest_messages,
    session_message_ids,
)
from sessions_admin.store.feed.rows import FeedMessage, FeedSession, as_int, as_text
from sessions_admin.store.feed.sessions import (
    IDENT_SQL,
    IDENTITY_COLUMNS,
    ROW_COLUMNS,
    SIG_SQL,
    SortKeys,
    count_sessions,
    decoded_id,
    present_session_ids,
    session_ids,
    session_list_sql,
    session_sort_values,
    sessions_by_id,
    sessions_touched_after,
    sort_keys,
    store_file,
)
from sessions_admin.store.queries import Cursor, SessionFilter, merge_pairs
from sessions_admin.store.values import Undecodable

__all__ = [
    "BEFORE_FIRST_ID",
    "INT_MAX",
    "INT_MIN",
    "Cursor",
    "SessionFilter",
    "Undecodable",
    "merge_pairs",
    "row_digest",
    "BLOCK_BITS",
    "BlockPart",
    "CHILD_FROM_ROWIDS",
    "FeedMessage",
    "FeedSession",
    "IDENTITY_COLUMNS",
    "IDENT_SQL",
    "MessageStats",
    "PART_BLOCKS",
    "READ_ERRORS",
    "ROW_COLUMNS",
    "SIG_SQL",
    "SortKeys",
    "all_sessions",
    "as_int",
    "as_text",
    "block_ranges",
    "call_heads",
    "calls",
    "close_thread_connection",
    "count_messages_after",
    "count_sessions",
    "decoded_id",
    "last_message_id",
    "message_stats",
    "messages_after",
    "messages_by_id",
    "messages_of_sessions",
    "newest_messages",
    "present_session_ids",
    "read_blocks",
    "session_ids",
    "session_list_sql",
    "session_message_ids",
    "session_sort_values",
    "sessions_by_id",
    "sessions_touched_after",
    "sort_keys",
    "store_file",
]
