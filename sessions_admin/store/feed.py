"""What ``sync_index`` reads from the store: new messages, in id order, with their session.

Message ids only grow (``AUTOINCREMENT``), so "everything after the last id
we saw" is complete. Values are normalised here, once, so that nothing
downstream meets a BLOB or a REAL where text or an integer was declared:
text columns arrive as ``str`` or ``None`` (a BLOB decoded with replacement
characters), integer columns as ``int`` or ``None`` (anything that is not a
whole number becomes ``None``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FeedMessage:
    """One message as the side index and the rollups see it."""

    id: int
    session_id: str
    role: str
    content: str
    tool_name: str | None
    tool_call_id: str | None
    tool_target: str | None
    tool_op: str | None
    tool_args: str | None
    tool_result: str | None
    tool_duration_ms: int | None
    ts: int | None
    # From the message's session row (None when the session row is missing).
    target_key: str | None
    profile_key: str | None
    principal_id: str | None
