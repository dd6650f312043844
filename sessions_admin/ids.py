"""Session ids in URLs: any id the store can hold, as a link a browser keeps.

Canonical form: ``/sessions/<id>/<subpage>`` with the id percent-encoded,
every reserved character included (``/`` → ``%2F``, ``?`` → ``%3F``,
``#`` → ``%23``, space → ``%20``, ``%`` → ``%25``).

Two kinds of id cannot survive as a path segment: the empty id, and ids made
only of dots (``.``, ``..``), which a browser collapses as dot-segments even
when written ``%2E%2E``. They use ``/sessions/~/<subpage>?id=<id>`` instead.

Principals (``sessions.principal_id``) use the same rule under
``/principals/`` (:func:`principal_url`), and the query form also for an id
that would read as another page there (``~``, or starting ``erasures/``).

The server sees the path already percent-decoded, so ``a%2Fframes`` and
``a/frames`` look alike; :func:`split_session_path` lists every reading of a
path and the router picks the first whose session exists, the whole path as
an id first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

SESSIONS_PREFIX = "/sessions/"
QUERY_FORM_MARKER = "~"


#: The runtime's own id shape (``sess_`` and hex); text like it is meant as an id.
_SESSION_ID_SHAPE = re.compile(r"sess_[0-9A-Za-z_-]+")


def looks_like_session_id(text: str) -> bool:
    """Whether ``text`` reads as a session id (``sess_…``, no spaces), not as words."""
    return _SESSION_ID_SHAPE.fullmatch(text) is not None


def needs_query_form(session_id: str) -> bool:
    return session_id == "" or set(session_id) == {"."}


def quote_segment(value: str) -> str:
    return quote(value, safe="")


def session_url(session_id: str, subpage: str = "", **query: str | int | None) -> str:
    """The URL of a session page (or ``subpage``, e.g. ``frames/<req>``)."""
    sub = f"{subpage.strip('/')}/" if subpage else ""
    params = {k: v for k, v in query.items() if v not in (None, "")}
    if needs_query_form(session_id):
        params = {"id": session_id, **params}
        return f"{SESSIONS_PREFIX}{QUERY_FORM_MARKER}/{sub}?{urlencode(params)}"
    url = f"{SESSIONS_PREFIX}{quote_segment(session_id)}/{sub}"
    return f"{url}?{urlencode(params)}" if params else url


PRINCIPALS_PREFIX = "/principals/"
#: ``/principals/erasures/<receipt>/``: the receipts, beside the principals' pages.
RECEIPTS_SEGMENT = "erasures"


def principal_needs_query_form(principal: str) -> bool:
    return (
        needs_query_form(principal)
        or principal == QUERY_FORM_MARKER
        or principal.startswith(f"{RECEIPTS_SEGMENT}/")
    )


def principal_url(principal: str, subpage: str = "", *, prefix: str = PRINCIPALS_PREFIX) -> str:
    """The URL of a principal's page (or ``subpage``: ``erase``)."""
    sub = f"{subpage.strip('/')}/" if subpage else ""
    if principal_needs_query_form(principal):
        return f"{prefix}{QUERY_FORM_MARKER}/{sub}?{urlencode({'id': principal})}"
    return f"{prefix}{quote_segment(principal)}/{sub}"


FLEET_PRINCIPALS_PREFIX = "/fleet/principals/"


def fleet_principal_url(principal: str, subpage: str = "") -> str:
    """The URL of a principal's page over the whole fleet (or ``subpage``: ``erase``)."""
    return principal_url(principal, subpage, prefix=FLEET_PRINCIPALS_PREFIX)


@dataclass(frozen=True)
class PathReading:
    session_id: str
    page: str  # "" for the session page, else a subpage's name
    kwargs: dict[str, str] = field(default_factory=dict)


SubpagePatterns = Mapping[str, re.Pattern[str]]


def compile_subpages(subpages: Mapping[str, str]) -> dict[str, re.Pattern[str]]:
    """``{name: regex of what follows "<id>/"}`` as patterns that also capture the id."""
    # DOTALL: an id may hold a newline, which "." would not match.
    return {
        name: re.compile(rf"(?P<session_id>.*)/{rx}", re.DOTALL) for name, rx in subpages.items()
    }


def split_session_path(
    rest: str, query_id: str | None, subpages: SubpagePatterns
) -> list[PathReading]:
    """Every way to read ``rest`` (the decoded path after /sessions/, no
    trailing slash) against ``subpages`` (from :func:`compile_subpages`), most
    literal first."""
    if query_id is not None and (rest == QUERY_FORM_MARKER or rest.startswith("~/")):
        inner = rest[len(QUERY_FORM_MARKER) :]
        readings = [PathReading(query_id, "")] if inner == "" else []
        for name, regex in subpages.items():
            match = regex.fullmatch(inner)
            if match and match.group("session_id") == "":
                kwargs = {k: v for k, v in match.groupdict().items() if k != "session_id"}
                readings.append(PathReading(query_id, name, kwargs))
        return readings
    readings = [PathReading(rest, "")]
    for name, regex in subpages.items():
        match = regex.fullmatch(rest)
        if match:
            kwargs = {k: v for k, v in match.groupdict().items() if k != "session_id"}
            readings.append(PathReading(match.group("session_id"), name, kwargs))
    return readings
