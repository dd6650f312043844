"""A message and a session as the sync takes them in: every value normalised once, here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions_admin.sqlhelpers import (
    INT_MAX,
    INT_MIN,
)
from sessions_admin.store.toolcalls import reports_error_sql


# Not frozen: a frozen dataclass sets each of its 16 fields through
# object.__setattr__, which was 5 % of a first build's time.
@dataclass(slots=True)
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
    #: Whether ``tool_result`` reports an error (:mod:`~sessions_admin.store.toolcalls`'s
    #: rule), when the read that made this message computed it in SQLite (the sync's
    #: batches); None otherwise.
    failed: bool | None = None


@dataclass(frozen=True, slots=True)
class FeedSession:
    """A session row as the side index keeps it (title and principal are searchable)."""

    id: str
    target_key: str | None
    profile_key: str | None
    principal_id: str | None
    title: str | None
    turn_count: int | None
    created_at: int | None
    last_active: int | None
    #: :func:`row_digest` of the whole row as stored (every column, any storage
    #: class): the sync compares it with the one it kept to see any edit.
    sig: bytes = b""
    #: The same over the columns a session's messages are counted under
    #: (target, profile, principal, created_at): when it changes, the sync
    #: forgets the session and takes its messages in again.
    ident: bytes = b""
    #: The row's rowid in the store (the walk's order); 0 when unknown.
    rowid: int = 0


def as_text(value: Any) -> str | None:
    """Any storage class as text: a BLOB decoded with replacement characters."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def as_int(value: Any) -> int | None:
    """A whole number SQLite can store, or ``None`` for anything else.

    Text digits are accepted; a REAL that is not whole, and any number beyond
    signed 64 bits (text digits or a REAL like ``1e300``), become ``None``:
    the listeners write these values into the side database, which would
    refuse them (``OverflowError``).
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        number = int(value)
    elif isinstance(value, str | bytes):
        try:
            number = int(value)
        except ValueError:
            return None
    else:
        return None
    return number if INT_MIN <= number <= INT_MAX else None


#: A message's own columns, then its session's (joined by the reader).
_OWN_COLUMNS = (
    "m.id, m.session_id, m.role, m.content, m.tool_name, m.tool_call_id, m.tool_target, "
    "m.tool_op, m.tool_args, m.tool_result, m.tool_duration_ms, m.ts"
)

MESSAGE_COLUMNS = f"{_OWN_COLUMNS}, s.target_key, s.profile_key, s.principal_id"

#: The failure rule, evaluated by SQLite in the reading thread, not once per
#: result in the thread that writes the side database.
_FAILED = (
    "CASE WHEN m.tool_name IS NULL OR instr(m.tool_result, '{') = 0 "
    f"THEN 0 ELSE {reports_error_sql('m.tool_result')} END"
)

#: The batches' columns: the message's, its session's, whether it failed.
BATCH_COLUMNS = f"{MESSAGE_COLUMNS}, {_FAILED}"

#: The same without the session's (NULL): a first build read the session row once
#: per message (a join: a third of the read, 3.2 against 2.2 µs a row on the bench
#: store), which the sync reads again anyway inside its transaction.
UNJOINED_COLUMNS = f"{_OWN_COLUMNS}, NULL, NULL, NULL, {_FAILED}"


def batch_message(row: tuple) -> FeedMessage:
    message = feed_message(row[:15])
    message.failed = bool(row[15])
    return message


def feed_message(row: tuple) -> FeedMessage:
    (mid, sid, role, content, name, call, target, op, args, result, dur, ts, tk, pk, pr) = row
    # Nearly every value is already a str or None: test for that inline (a first
    # build normalises ten million rows), and call as_text only for the rest.
    text = str
    return FeedMessage(
        id=mid,
        session_id=sid if type(sid) is text else (as_text(sid) or ""),
        role=role if type(role) is text else (as_text(role) or ""),
        content=content if type(content) is text else (as_text(content) or ""),
        tool_name=name if name is None or type(name) is text else as_text(name),
        tool_call_id=call if call is None or type(call) is text else as_text(call),
        tool_target=target if target is None or type(target) is text else as_text(target),
        tool_op=op if op is None or type(op) is text else as_text(op),
        tool_args=args if args is None or type(args) is text else as_text(args),
        tool_result=result if result is None or type(result) is text else as_text(result),
        tool_duration_ms=dur if dur is None or type(dur) is int else as_int(dur),
        ts=ts if type(ts) is int else as_int(ts),
        target_key=tk if tk is None or type(tk) is text else as_text(tk),
        profile_key=pk if pk is None or type(pk) is text else as_text(pk),
        principal_id=pr if pr is None or type(pr) is text else as_text(pr),
    )
