"""``/compare/?a=<id>&b=<id>``: two sessions side by side, turn by turn, their tool
calls paired and what differs marked (:mod:`sessions_admin.store.transcript.compare`).

With one id or none the page asks for the other; ``a_after`` / ``b_after`` go on
to each side's next messages.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from sessions_admin import params
from sessions_admin.access import staff_view
from sessions_admin.ids import session_url
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import queries
from sessions_admin.store.transcript import UnknownMessage
from sessions_admin.store.transcript.compare import SHOWN_CHARS, compare_sessions
from sessions_admin.views.figures import permalink

TEMPLATE = "sessions_admin/compare.html"


def _cursor(request: HttpRequest, name: str) -> int | None:
    return params.whole(request.GET, name, minimum=-MAX_SQLITE_INT - 1, what="a message id")


def _session(request: HttpRequest, name: str) -> queries.SessionRow | None:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return None
    if "\x00" in raw:
        raise BadParameter(f"{name}: not a session id this store could hold.", name=name)
    session = queries.get_session(raw)
    if session is None:
        raise Http404(f"{name}: no session with id {raw!r} in the store.")
    return session


@require_safe
@staff_view()
def compare(request: HttpRequest) -> HttpResponse:
    a, b = _session(request, "a"), _session(request, "b")
    context: dict[str, Any] = {"a": a, "b": b, "shown_chars": SHOWN_CHARS}
    if a is not None and b is not None:
        a_after, b_after = _cursor(request, "a_after"), _cursor(request, "b_after")
        try:
            found = compare_sessions(a.id, b.id, a_after=a_after, b_after=b_after)
        except UnknownMessage as exc:
            raise BadParameter(f"a_after / b_after: {exc}", name="a_after") from None
        _link_sides(found, a.id, b.id)
        context.update(
            comparison=found,
            a_url=session_url(a.id),
            b_url=session_url(b.id),
            swap_url="?" + urlencode({"a": b.id, "b": a.id}),
            next_url=(
                "?"
                + urlencode(
                    {
                        "a": a.id,
                        "b": b.id,
                        **({"a_after": found.a_after} if found.a_after is not None else {}),
                        **({"b_after": found.b_after} if found.b_after is not None else {}),
                    }
                )
                if found.a_after is not None or found.b_after is not None
                else ""
            ),
            continued=a_after is not None or b_after is not None,
        )
    return render(request, TEMPLATE, context)


def _link_sides(found, a_id: str, b_id: str) -> None:
    """Each pair's two sides as the template shows them: the message and its permalink
    (None where a side has no counterpart), and whether its call failed."""
    for turn in found.turns:
        for pair in turn.pairs:
            pair.sides = [
                (
                    None if row is None else {"row": row, "url": permalink(sid, row.id)},
                    failed,
                )
                for row, sid, failed in (
                    (pair.a, a_id, pair.a_failed),
                    (pair.b, b_id, pair.b_failed),
                )
            ]
