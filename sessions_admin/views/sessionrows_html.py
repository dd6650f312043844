"""Session-list rows rendered to HTML in Python.

Why not the template: the list must answer in under 10 ms on a 500,000-row
store, and the template engine alone took longer than that for a page of 50
rows; this renders a row in microseconds (``bench/bench_list.py``).
The rule that makes it safe (:mod:`sessions_admin.markup`): every value
from the store goes through :func:`~sessions_admin.markup.esc` before it is
joined with our tags; only the joined string is marked safe.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any
from urllib.parse import quote, quote_plus

from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from sessions_admin.ids import needs_query_form, session_url
from sessions_admin.markup import esc, safe_html
from sessions_admin.masking import ELLIPSIS, Masker, masked_html, masker
from sessions_admin.store.queries import SessionRow
from sessions_admin.store.values import OddValue
from sessions_admin.templatetags.sessions_admin import (
    odd_html,
    principal_html,
    principal_link_html,
    relative_time_html,
    short_id,
)

TITLE_CHARS = 80
_MUTED_DASH = '<span class="muted">—</span>'


def _title(title: str | None, shared: _Shared) -> str:
    if not title:
        return '<span class="muted">(untitled)</span>'
    if isinstance(title, OddValue):
        return odd_html(title)
    if shared.quiet_titles and not title.endswith(ELLIPSIS):
        return masked_html(title, None, TITLE_CHARS)  # nothing in it to mask
    return masked_html(title, shared.mask, TITLE_CHARS)


def _unlinkable_row(row: SessionRow, now: datetime, tz: tzinfo) -> str:
    """A row whose id is NULL or a BLOB: shown, but no URL can open or delete it."""
    return (
        f'<tr><td colspan="2">{odd_html(row.id)}</td>'  # type: ignore[arg-type]
        f"<td>{_shown(row.target_key)}</td><td>{_shown(row.profile_key)}</td>"
        f'<td class="principal">{principal_html(row.principal_id)}</td>'
        f'<td class="num">{_turns(row.turn_count)}</td>'
        f'<td class="when created">{relative_time_html(row.created_at, now, tz)}</td>'
        f'<td class="when">{relative_time_html(row.last_active, now, tz)}</td><td></td></tr>'
    )


def _shown(text: str) -> str:
    """Escaped text; an odd value (a BLOB where text was declared) marked as such."""
    return odd_html(text) if isinstance(text, OddValue) else esc(text)


def _target(target: str, list_url: str) -> str:
    if isinstance(target, OddValue):  # no filter can name a BLOB target
        return odd_html(target)
    if target == "":  # nor an empty one: an empty parameter is no filter
        return '<span class="mark">(empty)</span>'
    return f'<a href="{list_url}?target={esc(quote(target, safe=""))}">{esc(target)}</a>'


def _turns(turns: int | str | None) -> str:
    if turns is None:
        return _MUTED_DASH
    if isinstance(turns, OddValue):
        return odd_html(turns)
    return str(turns)


def _delete_url(session_id: str, page: str) -> str:
    """``session_url(session_id, "delete", from="list")``, built on the session's own URL
    ``page`` when the id is in its path (a list row builds several links per session)."""
    if needs_query_form(session_id):
        return session_url(session_id, "delete", **{"from": "list"})
    return f"{page}delete/?from=list"


def _actions(row: SessionRow, url: str, can_delete: bool, compare_url: str) -> str:
    """The row's menu: open the session (``url``), compare it, and (with the permission)
    delete it."""
    short = esc(short_id(row.id))
    compare = esc(f"{compare_url}?a={quote_plus(row.id)}")
    delete = ""
    if can_delete:
        delete_url = esc(_delete_url(row.id, url))
        # The dialog lands at the end of this cell, outside the menu (which closes),
        # so its form can still target "closest tr".
        delete = (
            f'<a class="danger-item" href="{delete_url}" hx-get="{delete_url}" '
            'hx-target="closest td" '
            f'hx-swap="beforeend">Delete</a>'
        )
    return (
        '<details class="menu row-menu"><summary class="button small" '
        f'aria-label="Actions for session {short}" title="Actions">⋯</summary>'
        f'<div class="menu-items"><a href="{esc(url)}">Open</a>'
        f'<a href="{compare}">Compare with…</a>{delete}</div></details>'
    )


def _failed(failed: int) -> str:
    if not failed:
        return ""
    calls = "call" if failed == 1 else "calls"
    return (
        ' <span class="failed-calls" title="tool calls that reported a failure">'
        f"{failed:,} failed {calls}</span>"
    )


def _frames_mark(session_id: str) -> str:
    url = esc(session_url(session_id, "frames"))
    return f' <a class="frames-mark" href="{url}" title="its activity frames on disk">frames</a>'


def _review_marks(mark: Any) -> str:
    """A row's labels (coloured by the page's label style sheet), a pen when it has
    notes, and its latest verdict (``views.review_labels.RowMarks``)."""
    if mark is None:
        return ""
    parts = [
        f'<span class="label-chip label-{int(label.pk)}">{esc(label.name)}</span>'
        for label in mark.labels
    ]
    if mark.noted:
        parts.append('<span class="review-mark" title="has notes">✎ notes</span>')
    if mark.verdict:
        verdict = esc(mark.verdict)
        parts.append(
            f'<span class="review-mark verdict-{verdict}" title="reviewed: {verdict}">'
            f"{verdict}</span>"
        )
    return " " + "".join(parts) if parts else ""


@dataclass(frozen=True)
class _Shared:
    """What every row of one page shares (URLs reversed once, not once a row)."""

    list_url: str
    compare_url: str
    can_delete: bool
    now: datetime
    tz: tzinfo
    mask: Masker | None
    #: The page's titles hold nothing to mask (one test of them all).
    quiet_titles: bool


def _row(
    row: SessionRow,
    shared: _Shared,
    failed: int = 0,
    mark: Any = None,
    has_frames: bool = False,
) -> str:
    now, tz = shared.now, shared.tz
    if not row.linkable:
        return _unlinkable_row(row, now, tz)
    url = session_url(row.id)
    page = esc(url)
    session_id = esc(row.id)
    actions = _actions(row, url, shared.can_delete, shared.compare_url)
    turns = _turns(row.turn_count)
    principal = principal_link_html(row.principal_id)
    return (
        f'<tr data-session-id="{session_id}">'
        f'<td><span class="id"><code title="{session_id}">{esc(short_id(row.id))}</code>'
        f'<button type="button" class="copy" data-copy="{session_id}" '
        f'aria-label="Copy id {session_id}">copy</button></span></td>'
        f'<td class="title"><a href="{page}">{_title(row.title, shared)}</a>'
        f"{_failed(failed)}{_frames_mark(row.id) if has_frames else ''}{_review_marks(mark)}</td>"
        f"<td>{_target(row.target_key, shared.list_url)}</td>"
        f"<td>{_shown(row.profile_key)}</td>"
        f'<td class="principal">{principal}</td>'
        f'<td class="num">{turns}</td>'
        f'<td class="when created">{relative_time_html(row.created_at, now, tz)}</td>'
        f'<td class="when">{relative_time_html(row.last_active, now, tz)}</td>'
        f'<td class="row-actions">{actions}</td>'
        "</tr>"
    )


def render_session_rows(
    rows: list[SessionRow],
    *,
    can_delete: bool,
    failed: dict[str, int] | None = None,
    marks: Mapping[str, Any] | None = None,
    frames: Container[str] = (),
) -> SafeString:
    """The rows; ``failed`` holds the failed tool calls of the sessions that had any,
    ``marks`` (by session id) each row's labels, notes and verdict, ``frames`` the
    sessions with activity frames on disk."""
    active = masker()
    titles = [row.title for row in rows if type(row.title) is str]
    shared = _Shared(
        reverse("sessions"),
        reverse("compare"),
        can_delete,
        timezone.now(),
        timezone.get_current_timezone(),
        active,
        active is None or active.quiet_texts(titles),
    )
    failed, marks = failed or {}, marks or {}
    return safe_html(
        "".join(
            _row(
                row,
                shared,
                failed.get(row.id, 0),
                marks.get(row.id) if row.linkable else None,
                row.linkable and row.id in frames,
            )
            for row in rows
        )
    )
