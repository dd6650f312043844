"""What the frames screens share: parameters, problem pages, request URLs.

Query parameters are read into a :class:`FrameQuery` through :mod:`sessions_admin.params`
(a bad one raises :class:`~sessions_admin.params.BadParameter`, which the middleware turns
into the 400 page like on every other screen). Whatever :mod:`sessions_admin.store.frames`
refuses, a missing file or an unreadable directory becomes a page saying why (for htmx, a
banner in ``#flash``), never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions_admin import params
from sessions_admin.ids import session_url
from sessions_admin.store import frames
from sessions_admin.views.responses import render_banner

REQUEST_TEMPLATE = "sessions_admin/frames_request.html"
MAX_PARAM_CHARS = 1000


# --- Problems: refused, missing, unreadable ---------------------------------------------


def problem_page(
    request: HttpRequest, status: int, title: str, message: str, back: tuple[str, str] | None = None
) -> HttpResponse:
    """A page (or, for htmx, a banner in ``#flash``) that says what went wrong.

    ``back`` is a ``(url, label)`` link to the nearest page that does exist, so a
    stale request link leads back to the session's requests, not the top.
    """
    if getattr(request, "htmx", False):
        banner = {"error": {"message": title, "hint": message}}
        return render_banner(request, "sessions_admin/error.html#banner", banner, status=status)
    context = {"status": status, "title": title, "message": message}
    if back:
        context["back_url"], context["back_label"] = back
    return render(request, "sessions_admin/http_error.html", context, status=status)


def frames_problem(
    request: HttpRequest, exc: Exception, back: tuple[str, str] | None = None
) -> HttpResponse:
    """The page for what the frames store refused or could not read."""
    if isinstance(exc, frames.FramesRefused):
        return problem_page(
            request,
            400,
            "Refused",
            f"{exc} Only files inside the frames root are ever opened.",
            back,
        )
    if isinstance(exc, frames.FramesNotFound):
        return problem_page(request, 404, "Not found", str(exc), back)
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return problem_page(
            request, 503, "Cannot read the frames", f"The frames could not be read: {reason}.", back
        )
    return problem_page(request, 400, "Refused", str(exc), back)


FRAMES_ERRORS = (frames.FramesError, OSError)


# --- Parameters ---------------------------------------------------------------------------


def text_param(request: HttpRequest, name: str) -> str | None:
    """A free-text parameter, stripped (None when empty), refused when too long."""
    return params.text(request.GET, name, max_chars=MAX_PARAM_CHARS)


def whole_param(request: HttpRequest, name: str, what: str) -> int | None:
    """A whole-number parameter (None when absent), refused with a 400 naming it."""
    return params.whole(request.GET, name, what=what)


def hint_param(request: HttpRequest, name: str) -> int | None:
    """A whole number the page only uses as a hint: None for anything else."""
    return params.whole_or_none(request.GET, name)


def seconds_param(request: HttpRequest, name: str) -> float | None:
    """A float parameter (seconds), or None for anything that is not a sane number."""
    raw = request.GET.get(name, "").strip()
    try:
        value = float(raw) if raw and len(raw) < 32 else None
    except ValueError:
        value = None
    return value if value is not None and value == value and abs(value) < 1e12 else None


@dataclass(frozen=True)
class FrameQuery:
    kind: str | None = None
    q: str | None = None
    trace: str | None = None
    span: str | None = None

    @classmethod
    def from_request(cls, request: HttpRequest) -> FrameQuery:
        return cls(
            kind=text_param(request, "kind"),
            q=text_param(request, "q"),
            trace=text_param(request, "trace"),
            span=text_param(request, "span"),
        )

    @property
    def active(self) -> bool:
        return bool(self.kind or self.q or self.trace or self.span)

    @property
    def store_q(self) -> str | None:
        """What the store scans for: an id is far more selective than free text."""
        return self.trace or self.span or self.q

    def keeps(self, frame: frames.FrameLine) -> bool:
        """Checks the store's substring scan cannot make. Damaged lines that matched the
        scan stay: they may well belong to the trace, and hiding damage misleads."""
        if frame.error is not None:
            return True
        if self.trace and frame.trace_id != self.trace:
            return False
        if self.span and self.span not in (frame.span_id, frame.parent_span_id):
            return False
        if self.q and self.q != self.store_q:
            return self.q.casefold() in frame.raw.casefold()
        return True

    def as_query(self) -> dict[str, str]:
        pairs = (("kind", self.kind), ("q", self.q), ("trace", self.trace), ("span", self.span))
        return {k: v for k, v in pairs if v}


# --- URLs ---------------------------------------------------------------------------------


def request_url(session_id: str, request_id: str, **query: Any) -> str:
    """The URL of one request's frames page."""
    return session_url(session_id, f"frames/{quote(request_id, safe='')}", **query)
