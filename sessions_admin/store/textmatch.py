"""Text "contains, ignoring case" in the store's SQL, by the one folding.

The side index folds with Python's ``str.casefold`` (:mod:`sessions_admin.folding`);
so must every scan of the store, or one question gets two answers
(``/sessions/?q=résumé`` found two sessions from a fresh index and none from
the scan, whose ``LIKE`` folds ASCII only). :func:`contains_folded_sql` asks
SQLite ``instr(casefold(col), ?)`` with the connection's ``casefold`` function
(registered in ``store.backend.base``).

A Python call per row is the price, so values whose characters are all ASCII
skip it. A TEXT value is all ASCII when its character count equals its byte
count (any multi-byte character, including the non-ASCII ones that fold *to*
ASCII such as ``ſ`` and ``K``, makes the first smaller). For such a value
``casefold`` is ``lower``, so:

* an ASCII folded query is answered by SQLite's ``LIKE``, which ignores ASCII
  case exactly as ``casefold`` does on ASCII text;
* a non-ASCII folded query cannot be in it (ASCII folds to ASCII): false.

Every other value (non-ASCII text, a BLOB, a number) goes through the fold,
which costs about half what the function on every row did. It is the
fallback: a fresh side index answers the list's text filter in milliseconds.
"""

from __future__ import annotations

from sessions_admin.folding import SQL_FUNCTION, folds_like_ascii


def escape_like(text: str) -> str:
    """``text`` for a ``LIKE … ESCAPE`` pattern: its ``%``, ``_`` and ``\\`` match literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def contains_folded_sql(column: str, folded_query: str) -> tuple[str, list[str]]:
    """SQL that is true when the folded ``column`` contains ``folded_query``, and its parameters.

    ``column`` is passed as a BLOB so that TEXT which is not UTF-8 reaches the
    function (it decodes with replacement, as the readers do) instead of
    failing the statement. NULL contains nothing.
    """
    folded = f"instr({SQL_FUNCTION}(CAST({column} AS BLOB)), ?) > 0"
    # length() stops at a NUL, the BLOB's length does not: such text is not taken as ASCII.
    ascii_only = f"typeof({column}) = 'text' AND length({column}) = length(CAST({column} AS BLOB))"
    if not folds_like_ascii(folded_query):
        return f"(CASE WHEN {ascii_only} THEN 0 ELSE {folded} END)", [folded_query]
    return (
        f"(CASE WHEN {ascii_only} THEN {column} LIKE ? ESCAPE '\\' ELSE {folded} END)",
        ["%" + escape_like(folded_query) + "%", folded_query],
    )
