"""The one case folding every text match uses: the side index, its scans and the list filter.

Rule: full Unicode case folding (Python's :meth:`str.casefold`), nothing else.

* ``résumé`` finds ``RÉSUMÉ``, ``strasse`` finds ``Straße`` (ß folds to ``ss``),
  ``s`` finds ``ſ`` (long s) and ``k`` finds ``K`` (Kelvin sign).
* Turkish dotted capital I: ``İ`` folds to ``i̇`` (``i`` plus U+0307 COMBINING
  DOT ABOVE), so ``istanbul`` does *not* find ``İSTANBUL`` but ``i̇stanbul``
  does; dotless ``ı`` folds to itself. Case folding is language-neutral.
* No Unicode normalisation: a precomposed ``é`` (U+00E9) and ``e`` + U+0301
  are different text, as they are in the store, and one does not find the
  other. (Normalising would have to be done on both sides for every row the
  scans read; the runtime writes NFC in practice, so we leave text as stored.)

Text that is not valid UTF-8 is folded as read: its undecodable bytes replaced
by U+FFFD (see :class:`sessions_admin.store.values.Undecodable`), so the rest
of its text matches.

No Django or store import: the store registers :func:`fold_stored` as the
SQLite function ``casefold`` and our own data folds with :func:`fold`.
"""

from __future__ import annotations

#: The SQLite function name the store's connections know :func:`fold_stored` by.
SQL_FUNCTION = "casefold"


def fold(text: str) -> str:
    # casefold maps code point by code point (no context rules), so folding
    # pieces and joining them equals folding the whole: snippets rely on it.
    return text.casefold()


def fold_stored(value: object) -> str | None:
    """:func:`fold` for any stored value, as SQLite hands it to a function.

    Callers pass ``CAST(column AS BLOB)``: SQLite hands a TEXT argument to
    Python decoded strictly, and one value that is not UTF-8 would fail the
    whole statement; bytes are decoded here with replacement instead, as the
    readers do.
    """
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value).casefold()


def folds_like_ascii(folded_query: str) -> bool:
    """Can an ASCII-only ``LIKE`` stand in for the fold on ASCII-only text?

    True when the folded query is ASCII. Then on text whose characters are all
    ASCII, ``casefold`` is ``lower`` and SQLite's ``LIKE`` (case-insensitive
    for ASCII only) gives the same answer. Text with any other character
    (``ſ`` and ``K`` fold *to* ASCII) still goes through the fold itself.
    """
    return folded_query.isascii()
