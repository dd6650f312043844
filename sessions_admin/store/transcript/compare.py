"""Two sessions side by side: their first messages cut into turns (a turn starts at a
user's message), turn by turn, and within a turn each message paired with its
counterpart: a tool's k-th call with the other side's k-th call of the same tool,
any other message by role and position. A pair says which of its values differ
and which side's call failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import zip_longest

from sessions_admin.store.toolcalls import reports_error
from sessions_admin.store.transcript.messages import MessageRow, message_page

#: Messages of each side one comparison reads.
COMPARE_MESSAGES = 100
#: Characters of each value a pair shows.
SHOWN_CHARS = 300


@dataclass
class Pair:
    a: MessageRow | None
    b: MessageRow | None
    a_failed: bool = False
    b_failed: bool = False
    #: Which of content, tool, args, result differ (both sides present).
    differs: frozenset[str] = frozenset()

    @property
    def one_sided(self) -> bool:
        return self.a is None or self.b is None


@dataclass
class Turn:
    number: int
    pairs: list[Pair] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return any(p.one_sided or p.differs for p in self.pairs)


@dataclass
class Comparison:
    turns: list[Turn]
    #: More messages after the compared ones, on each side (and where they start).
    a_after: int | None
    b_after: int | None


def failed(message: MessageRow | None) -> bool:
    if message is None or message.tool_result is None:
        return False
    if message.result_error is not None:
        return message.result_error
    return reports_error(message.tool_result.text)


def turns_of(messages: list[MessageRow]) -> list[list[MessageRow]]:
    """The messages cut before each user's message (the first turn may start otherwise)."""
    turns: list[list[MessageRow]] = []
    for message in messages:
        if not turns or (message.role == "user" and turns[-1]):
            turns.append([])
        turns[-1].append(message)
    return turns


def _keys(messages: list[MessageRow]) -> list[tuple]:
    """Each message's pairing key: a tool and which of its calls in the turn, or a role
    and which of its messages."""
    seen: dict[tuple, int] = {}
    keys = []
    for m in messages:
        base = ("tool", m.tool_name) if m.tool_name else ("role", m.role)
        seen[base] = seen.get(base, -1) + 1
        keys.append((*base, seen[base]))
    return keys


def _text(value) -> str | None:
    return None if value is None else str(value.text)[: SHOWN_CHARS * 10]


def _pair(a: MessageRow | None, b: MessageRow | None) -> Pair:
    pair = Pair(a, b, failed(a), failed(b))
    if a is not None and b is not None:
        pair.differs = frozenset(
            name
            for name, x, y in (
                ("content", _text(a.content), _text(b.content)),
                ("tool", a.tool_name, b.tool_name),
                ("args", _text(a.tool_args), _text(b.tool_args)),
                ("result", _text(a.tool_result), _text(b.tool_result)),
            )
            if x != y
        )
    return pair


def pair_turn(a: list[MessageRow], b: list[MessageRow]) -> list[Pair]:
    """The two sides' messages of one turn, paired by key, in the first side's order;
    the other side's messages with no counterpart where they fall in its own order."""
    a_keys, b_keys = _keys(a), _keys(b)
    in_a = set(a_keys)
    b_index = {key: i for i, key in enumerate(b_keys)}
    pairs: list[Pair] = []
    used: set[int] = set()
    next_b = 0
    for message, key in zip(a, a_keys, strict=True):
        j = b_index.get(key)
        if j is None:
            pairs.append(_pair(message, None))
            continue
        for k in range(next_b, j):  # the other side's lone messages up to the match
            if k not in used and b_keys[k] not in in_a:
                used.add(k)
                pairs.append(_pair(None, b[k]))
        used.add(j)
        next_b = max(next_b, j + 1)
        pairs.append(_pair(message, b[j]))
    pairs.extend(_pair(None, b[k]) for k in range(len(b)) if k not in used)
    return pairs


def compare_sessions(
    a_id: str,
    b_id: str,
    *,
    a_after: int | None = None,
    b_after: int | None = None,
    limit: int = COMPARE_MESSAGES,
) -> Comparison:
    """The first ``limit`` messages of each session (after the given ids), turn by turn."""
    a_page = message_page(a_id, after=a_after, limit=limit)
    b_page = message_page(b_id, after=b_after, limit=limit)
    turns = [
        Turn(n, pair_turn(x or [], y or []))
        for n, (x, y) in enumerate(
            zip_longest(turns_of(a_page.messages), turns_of(b_page.messages)), start=1
        )
    ]
    return Comparison(
        turns,
        a_page.last_id if a_page.has_after else None,
        b_page.last_id if b_page.has_after else None,
    )
