"""What "contains the query" means, in one place: the index, its checks and the snippets.

A message matches when ``fold(query)`` is a substring of ``fold(field)`` for
one of its searchable fields (content, tool name, tool arguments, tool
result). :func:`fold` is Python's full Unicode case folding, so ``résumé``
finds ``RÉSUMÉ``, ``STRASSE`` finds ``straße`` and scripts without case
(``東京都``) match as written. Nothing in the query is syntax: ``%``, ``_``,
quotes and FTS5 operators are plain characters.

The index stores folded text, cut into trigrams by FTS5's ``trigram``
tokenizer with ``case_sensitive 1`` (the folding is already done, the same
way for the text and the query). It keeps no positions (``detail=none``), so
a trigram query finds *candidates* holding every trigram of the query;
:func:`contains` on the store's row decides.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sessions_admin.folding import fold

#: Between a message's fields in the indexed document: no query trigram spans it.
FIELD_SEPARATOR = "\x1f"
#: Shorter folded queries have no trigram: they are answered by a scan.
MIN_INDEXED_CHARS = 3


__all__ = ["fold"]  # the one folding, from sessions_admin.folding (its rule is written there)


def document(fields: Iterable[str | None]) -> str:
    """The folded text indexed for one message or session.

    A field already contained in an earlier one (the runtime repeats a tool's
    result in the message's content) adds nothing a query could find, so it
    is left out: the index stays smaller. Folding maps each character on its
    own, so a field inside another stays inside it once both are folded: the
    cheap test on the raw text is enough.
    """
    kept: list[str] = []
    for value in fields:
        if not value or any(value in earlier for earlier in kept):
            continue
        kept.append(value)
    return fold(FIELD_SEPARATOR.join(kept))


def trigrams(folded_query: str) -> list[str]:
    return list(dict.fromkeys(folded_query[i : i + 3] for i in range(len(folded_query) - 2)))


def fts_query(folded_query: str) -> str:
    """An FTS5 MATCH string: every trigram of the query, each a quoted literal.

    Quoting makes every character plain (a quote is doubled), so no query can
    be FTS5 syntax. FTS5 ANDs the strings; ``detail=none`` cannot check their
    order, which :func:`contains` does on the store's row.
    """
    return " ".join('"' + gram.replace('"', '""') + '"' for gram in trigrams(folded_query))


def is_indexable(folded_query: str) -> bool:
    return len(folded_query) >= MIN_INDEXED_CHARS


def contains(folded_query: str, values: Iterable[object]) -> bool:
    """Does any text value hold the folded query? (Anything but a str holds nothing.)"""
    return any(isinstance(value, str) and folded_query in fold(value) for value in values)


@dataclass(frozen=True)
class Snippet:
    """A window of a field's text around the first match; the template escapes it."""

    field: str
    before: str
    match: str
    after: str
    clipped_start: bool
    clipped_end: bool
    #: The field's whole text and the window's place in it (masking looks around it).
    text: str = field(default="", repr=False, compare=False)
    left: int = 0
    right: int = 0


def _locate(text: str, folded_query: str) -> tuple[int, int] | None:
    """Where the match is in ``text`` itself (start, end), folding only as far as needed."""
    folded = fold(text)
    at = folded.find(folded_query)
    if at < 0:
        return None
    if len(folded) == len(text):
        # No character changed length when folded (the usual case): positions agree.
        return at, at + len(folded_query)
    # Some character folded to several (ß -> ss): walk to map folded positions back.
    position = 0
    start = end = None
    for index, char in enumerate(text):
        if start is None and position + len(fold(char)) > at:
            start = index
        position += len(fold(char))
        if start is not None and position >= at + len(folded_query):
            end = index + 1
            break
    if start is None:
        return None
    return start, end if end is not None else len(text)


def snippet(
    fields: Iterable[tuple[str, str | None]], folded_query: str, *, context: int = 70
) -> Snippet | None:
    """The first field (name, text) that contains the query, cut around the match."""
    for name, text in fields:
        if not text:
            continue
        found = _locate(text, folded_query)
        if found is None:
            continue
        start, end = found
        left = max(start - context, 0)
        right = min(end + context, len(text))
        return Snippet(
            field=name,
            before=text[left:start],
            match=text[start:end],
            after=text[end:right],
            clipped_start=left > 0,
            clipped_end=right < len(text),
            text=text,
            left=left,
            right=right,
        )
    return None
