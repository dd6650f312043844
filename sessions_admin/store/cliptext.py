"""Short text columns, bounded before they leave SQLite.

Titles, principals, targets, tool names and ids are short in a healthy store,
but the store can hold anything: a 5 MB title would otherwise be read for
every list row and sent in every page that shows it. These expressions cut
such a value to its head plus "…" inside SQLite, so neither memory nor the
page grows with it. (Long *values* — content, tool args and results, state —
have their own preview-and-load-on-demand path in ``store.transcript``.)
"""

from __future__ import annotations

from django.db.models import Case, F, TextField, Value, When
from django.db.models.functions import Concat, Length, Substr
from django.db.models.lookups import GreaterThan

#: More than any real title or id; small enough that a page never balloons.
SHORT_TEXT_CHARS = 1000
ELLIPSIS = "…"


def clipped_sql(column: str, chars: int = SHORT_TEXT_CHARS) -> str:
    """An SQL expression: ``column`` itself, or its first ``chars`` characters and "…"."""
    return (
        f"CASE WHEN length({column}) > {chars} "
        f"THEN substr({column}, 1, {chars}) || '{ELLIPSIS}' ELSE {column} END"
    )


def clipped_expr(field: str, chars: int = SHORT_TEXT_CHARS) -> Case:
    """The same as an ORM expression, for ``QuerySet.annotate``."""
    return Case(
        When(
            GreaterThan(Length(field), chars),
            then=Concat(Substr(field, 1, chars), Value(ELLIPSIS), output_field=TextField()),
        ),
        default=F(field),
        output_field=TextField(),
    )
