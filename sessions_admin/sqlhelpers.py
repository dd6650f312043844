"""SQL chores every layer shares: ids in chunks, ``?`` placeholders, the count cap.

The bottom layer: no Django, no store imports, so the store, our side
database and the admin all use the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import batched

#: Values per ``IN (…)`` list. SQLite allows 32,766 host parameters (since
#: 3.32), far above this; 500 keeps every statement short enough to plan
#: instantly and leaves room for the other parameters beside the list.
CHUNK = 500

#: Counting stops here: past it a page says "more than 10,000" (datasette's
#: capped counts), so no count reads a whole big table.
COUNT_CAP = 10_000


def chunks[T](values: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    """``values`` in lists of at most ``size`` (none for empty input), in order."""
    for batch in batched(values, size):
        yield list(batch)


def placeholders(n: int) -> str:
    """``"?, ?, ?"`` for ``n`` = 3: the marks of an ``IN (…)`` or ``VALUES (…)`` list."""
    return ", ".join("?" * n)


#: The range of SQLite's INTEGER (signed 64-bit), which every rowid lies in.
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: A mark below every rowid (``-5`` and ``-2**63`` are rowids too): "nothing taken in yet".
BEFORE_FIRST_ID = INT_MIN - 1


def id_above(column: str, after_id: int) -> tuple[str, int]:
    """``column > after_id`` as a clause and the one parameter it binds, which SQLite can
    hold even for :data:`BEFORE_FIRST_ID` (the clause then keeps every rowid)."""
    if after_id < INT_MIN:
        return f"{column} >= ?", INT_MIN
    return f"{column} > ?", after_id
