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
