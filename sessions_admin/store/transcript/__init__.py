"""One session as the session page reads it: :mod:`.messages` (pages of the transcript and
its values), :mod:`.state`, :mod:`.outline`, :mod:`.stats` and :mod:`.export`.
"""

from sessions_admin.store.transcript.export import EXPORT_CHUNK, iter_messages, strict_json_valid
from sessions_admin.store.transcript.messages import (
    LARGE_VALUE_CHARS,
    MESSAGE_COLUMNS,
    PAGE_SIZE,
    PAIR_WINDOW,
    PREVIEW_CHARS,
    VALUE_COLUMNS,
    MessageFilter,
    MessagePage,
    MessageRow,
    UnknownMessage,
    Value,
    has_message_after,
    message_count,
    message_in_session,
    message_page,
    message_value,
)
from sessions_admin.store.transcript.outline import (
    OUTLINE_CALLS,
    OUTLINE_MESSAGES,
    OutlineCall,
    OutlineRows,
    tool_outline,
)
from sessions_admin.store.transcript.state import (
    StateRow,
    iter_state,
    state_keys,
    state_rows,
    state_value,
)
from sessions_admin.store.transcript.stats import SessionStats, ToolStats, session_stats

__all__ = [
    "EXPORT_CHUNK",
    "LARGE_VALUE_CHARS",
    "MESSAGE_COLUMNS",
    "MessageFilter",
    "MessagePage",
    "MessageRow",
    "OUTLINE_CALLS",
    "OUTLINE_MESSAGES",
    "OutlineCall",
    "OutlineRows",
    "PAGE_SIZE",
    "PAIR_WINDOW",
    "PREVIEW_CHARS",
    "SessionStats",
    "StateRow",
    "ToolStats",
    "UnknownMessage",
    "VALUE_COLUMNS",
    "Value",
    "iter_messages",
    "iter_state",
    "has_message_after",
    "message_count",
    "message_in_session",
    "message_page",
    "message_value",
    "session_stats",
    "state_keys",
    "state_rows",
    "state_value",
    "strict_json_valid",
    "tool_outline",
]
