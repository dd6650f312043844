"""A tool's calls as table rows (``/tools/<name>/``), built in Python: the template's
loop over 50 rows was half the ``?errors=1`` page's time (about 8,000 variable
lookups), and a page of "More" is the same rows again.

Every value from the store or the rollups goes through :func:`~sessions_admin.markup.esc`
(or a helper that escapes) before it is placed; ``tests/test_html_builders.py`` holds
the shape of a row the same for any text in it.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from django.utils import timezone
from django.utils.safestring import SafeString

from sessions_admin.humanize import duration
from sessions_admin.markup import esc, safe_html
from sessions_admin.masking import Masker, masked_html, masker
from sessions_admin.ourdata.rollups.calls import CallRow
from sessions_admin.ourdata.rollups.schema import HEAD_CHARS, HEAD_READ_CHARS
from sessions_admin.templatetags.sessions_admin import (
    principal_link_html,
    relative_time_html,
    short_id,
)

_DASH = "–"


def _row(
    row: CallRow, url: str, slow_ms: int, now: datetime, tz: tzinfo, active: Masker | None
) -> str:
    classes = []
    if row.failed:
        classes.append("call-error")
    if isinstance(row.duration_ms, int) and row.duration_ms >= slow_ms:
        classes.append("call-slow")
    when = "time unknown" if row.ts < 0 else relative_time_html(row.ts, now, tz)
    link = esc(url)
    failed = ' <span class="status status-error">✗&nbsp;error</span>' if row.failed else ""
    return (
        f'<tr class="{" ".join(classes)}">'
        f'<td class="time"><a href="{link}">{when}</a></td>'
        f'<td><a href="{link}" class="id" title="{esc(row.session_id)}">'
        f"<code>{esc(short_id(row.session_id))}</code></a></td>"
        f"<td>{esc(row.target or '(no session row)')} · {esc(row.profile)}</td>"
        f'<td class="principal">{principal_link_html(row.principal)}</td>'
        f'<td class="num duration">{esc(duration(row.duration_ms))}{failed}</td>'
        f'<td class="heads"><code>{_head(row.args_head, active)}</code> → '
        f"<code>{_head(row.result_head, active)}</code></td>"
        "</tr>"
    )


def _head(text: str | None, active: Masker | None) -> str:
    """A call's arguments or result in short: masked as read, then cut to HEAD_CHARS
    (a head of HEAD_CHARS exactly is the rollups' own, cut before it was masked)."""
    if not text:
        return _DASH
    clipped = len(text) >= HEAD_READ_CHARS or len(text) == HEAD_CHARS
    return masked_html(text, active, HEAD_CHARS, clipped=clipped)


def render_call_rows(rows: list[tuple[CallRow, str]], slow_ms: int) -> SafeString:
    """The rows, each (call, its permalink) as the view pairs them."""
    now, tz, active = timezone.now(), timezone.get_current_timezone(), masker()
    return safe_html("".join(_row(row, url, slow_ms, now, tz, active) for row, url in rows))
