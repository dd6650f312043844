"""Template helpers: session links, times, durations, sizes, ids.

The ``<time>`` tags are built here from our own values (ISO and strftime output) and
pass through :mod:`sessions_admin.markup`; store values reach templates as text,
never markup.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import datetime, timedelta, tzinfo
from urllib.parse import quote

from django import template
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.urls import get_script_prefix, reverse
from django.utils import timezone
from django.utils.safestring import SafeString

from sessions_admin.humanize import duration, exact_time, file_size
from sessions_admin.ids import fleet_principal_url, principal_url
from sessions_admin.ids import session_url as build_session_url
from sessions_admin.markup import esc, linked_text, safe_html
from sessions_admin.masking import masked_html, masker
from sessions_admin.store.timeutil import from_epoch_ms, in_zone
from sessions_admin.store.values import OddValue, Undecodable

register = template.Library()

#: How a missing principal looks on every page (the session list set it).
NO_PRINCIPAL_HTML = '<span class="muted">—</span>'


def principal_html(value: object) -> str:
    """A principal escaped, an odd one marked, a missing one as :data:`NO_PRINCIPAL_HTML`."""
    if isinstance(value, OddValue):
        return odd_html(value)
    if value is None or value == "":
        return NO_PRINCIPAL_HTML
    return esc(value)


@register.filter
def principal(value: object) -> SafeString:
    return safe_html(principal_html(value))  # escaped in principal_html


def principal_link_html(value: object) -> str:
    """A principal linking to its page; an odd or missing one shown as
    :func:`principal_html` does, unlinked (no URL names a BLOB or undecodable text)."""
    if isinstance(value, OddValue) or not isinstance(value, str) or value == "":
        return principal_html(value)
    return f'<a class="principal-link" href="{esc(principal_url(value))}">{esc(value)}</a>'


@register.filter
def principal_link(value: object) -> SafeString:
    return safe_html(principal_link_html(value))  # escaped in principal_link_html


@register.simple_tag
def session_url(session_id: str, subpage: str = "", **query: str) -> str:
    return build_session_url(session_id, subpage, **query)


@register.simple_tag
def page_url(name: str) -> str:
    """``{% url name %}`` for a page whose URL takes no argument, made once per process.

    Every page's header names a dozen such URLs; ``reverse`` costs 15 to 40 µs
    each time, this a dictionary lookup. The script prefix is part of the key
    (an instance mounted under a path), and Django's signal that clears its
    own URL caches when the URL map changes clears this one too.
    """
    return _page_url(get_script_prefix(), name)


@functools.lru_cache(maxsize=256)
def _page_url(prefix: str, name: str) -> str:
    return reverse(name)


@receiver(setting_changed)
def _forget_page_urls(*, setting: str, **kwargs: object) -> None:
    if setting == "ROOT_URLCONF":
        _page_url.cache_clear()


@register.simple_tag
def options(choices: Iterable[object], selected: object = None) -> SafeString:
    """``<option>`` elements of a ``<select>``: ``choices`` are values (shown as they
    are) or (value, label) pairs; the one equal to ``selected`` is selected.

    A list page's filter menus hold a few dozen options: a template loop with a
    comparison per option cost about 15 µs each, this under one.
    """
    parts: list[str] = []
    for choice in choices:
        value, label = choice if isinstance(choice, tuple) else (choice, choice)
        mark = " selected" if selected is not None and value == selected else ""
        parts.append(f'<option value="{esc(value)}"{mark}>{esc(label)}</option>')
    return safe_html("".join(parts))


@register.filter
def short_id(value: str | None, keep: int = 8) -> str:
    """``sess_9f…c21``: the start and end of a long id; ``(empty id)`` for the empty
    one and ``(blank id: 2 characters)`` for one of white space alone (the store
    allows both), so a link to it still has a name."""
    if value is None:
        return ""
    text = str(value)
    if not text:
        return "(empty id)"
    if not text.strip():
        return f"(blank id: {len(text)} character{'s' if len(text) != 1 else ''})"
    if len(text) <= 2 * keep + 1:
        return text
    return f"{text[:keep]}…{text[-keep // 2 - 1 :]}"


def _relative(moment: datetime, now: datetime) -> str:
    seconds = (now - moment).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 45:
        text = "just now" if not future else "in a few seconds"
        return text
    for unit, size in (
        ("year", 365 * 86400),
        ("month", 30 * 86400),
        ("day", 86400),
        ("h", 3600),
        ("min", 60),
    ):
        if seconds >= size:
            count = int(seconds // size)
            label = unit if unit in ("h", "min") else f"{unit}{'s' if count != 1 else ''}"
            amount = f"{count} {label}"
            return f"in {amount}" if future else f"{amount} ago"
    return "just now"


def relative_time_html(
    value: int | datetime | None,
    now: datetime | None = None,
    tz: tzinfo | None = None,
) -> str:
    """``<time>`` markup for :func:`reltime`, as a plain string.

    Every part is made here (ISO and strftime output, our labels), none comes
    from the store, so nothing needs escaping; an odd value's description is
    escaped in :func:`odd_html`. Callers rendering many rows pass
    ``now`` and ``tz`` once instead of looking them up per cell.
    """
    if isinstance(value, OddValue):
        return odd_html(value)
    moment = value if isinstance(value, datetime) else from_epoch_ms(value)
    if moment is None:
        return '<span class="muted">—</span>'
    iso = moment.isoformat()
    zone = tz or timezone.get_current_timezone()
    if _is_utc(zone) and moment.year >= 1000:
        # The hover text is the ISO text's date and time (a list page shows 100 times).
        exact = f"{iso[:10]} {iso[11:19]}.{moment.microsecond // 1000:03d} UTC"
    else:
        exact = exact_time(in_zone(moment, zone))
    label = _relative(moment, now or timezone.now())
    return f'<time datetime="{iso}" title="{exact}">{label}</time>'


@functools.lru_cache(maxsize=16)
def _is_utc(zone: tzinfo) -> bool:
    """The zone is UTC itself (named so, never offset): times in it read as stored."""
    probes = (datetime(2000, 1, 1), datetime(2000, 7, 1))
    return all(zone.utcoffset(p) == timedelta(0) and zone.tzname(p) == "UTC" for p in probes)


def odd_html(value: OddValue) -> str:
    """A value shown as what it is ("binary value, 12 bytes"), marked as odd.

    Text that is not valid UTF-8 is shown as read (U+FFFD for the bad bytes)
    and marked so.
    """
    if isinstance(value, Undecodable):
        return (
            f'<span class="odd">{esc(value)}</span> '
            f'<span class="mark mark-broken">{Undecodable.MARK}</span>'
        )
    return f'<span class="odd">{esc(value)}</span>'


@register.filter
def odd(value: object) -> SafeString | object:
    """A store value as it is; an :class:`OddValue` gets the odd-value marking."""
    if isinstance(value, OddValue):
        return safe_html(odd_html(value))  # escaped in odd_html
    return value


@register.filter
def fleet_principal_href(value: object) -> str:
    """The fleet's page of a principal (as the directory shows it)."""
    return fleet_principal_url(str(value))


@register.filter
def masked(value: object) -> SafeString | object:
    """A store text for a page, its hidden values masked (a value that is not text is
    marked as :func:`odd` does)."""
    if isinstance(value, Undecodable):
        return safe_html(
            f'<span class="odd">{masked_html(value, masker())}</span> '
            f'<span class="mark mark-broken">{Undecodable.MARK}</span>'
        )
    if isinstance(value, OddValue):
        return safe_html(odd_html(value))
    if not isinstance(value, str):
        return value
    return safe_html(masked_html(value, masker()))


@register.filter
def masked_clipped(value: object, clipped: bool) -> SafeString | object:
    """:func:`masked` for the head of a longer text (when ``clipped``): what ends it
    may be the start of a hidden value cut in two, and is left out."""
    if clipped and type(value) is str:
        return safe_html(masked_html(value, masker(), clipped=True))
    return masked(value)


@register.filter
def masked_short(value: object, limit: int) -> SafeString | object:
    """:func:`masked`, cut to ``limit`` characters after masking (no part of a value
    shows)."""
    if isinstance(value, str) and not isinstance(value, OddValue):
        return safe_html(masked_html(value, masker(), int(limit)))
    return masked(value)


@register.filter
def masked_text(value: object) -> object:
    """The same for plain text (a page's ``<title>``): tags without their markup."""
    active = masker()
    return active.text(value) if active is not None and isinstance(value, str) else value


@register.simple_tag
def reltime(epoch_ms: int | datetime | None) -> SafeString:
    """``<time>`` with a relative label and the exact time and zone on hover.

    Takes the store's epoch milliseconds or an aware datetime (a value already
    aggregated in Python, such as a target's latest activity).
    """
    return safe_html(relative_time_html(epoch_ms))  # no store text inside


@register.simple_tag
def abstime(epoch_ms: int | None, with_date: bool = True) -> SafeString | str:
    if isinstance(epoch_ms, OddValue):
        return safe_html(odd_html(epoch_ms))  # escaped in odd_html
    moment = from_epoch_ms(epoch_ms)
    if moment is None:
        # A constant: format_html() with no arguments is refused by Django 6.
        return safe_html('<span class="muted">—</span>')
    local = in_zone(moment, timezone.get_current_timezone())
    fmt = "%Y-%m-%d %H:%M:%S" if with_date else "%H:%M:%S"
    return safe_html(
        f'<time datetime="{esc(moment.isoformat())}" title="{esc(exact_time(local))}">'
        f"{esc(local.strftime(fmt))}</time>"
    )


@register.filter
def duration_ms(value: int | float | None) -> str:
    """``120 ms``, ``1.2 s``, ``3 min 4 s``."""
    return duration(value)


@register.filter
def filesize(value: int | None) -> str:
    return file_size(value)


@register.filter
def intcomma(value: int | None) -> str:
    if value is None:
        return "—"
    return value if isinstance(value, str) else f"{value:,}"


@register.inclusion_tag("sessions_admin/_copy_id.html")
def copy_id(value: str, shorten: bool = True) -> dict:
    # Whole or shortened, the empty id reads "(empty id)" (short_id's rule).
    return {"value": value, "short": short_id(value) if shorten or value == "" else value}


@register.filter
def percent(value: float | None) -> str:
    """A share as "8.1 %" ("0.04 %" for small non-zero shares, so they never read as 0)."""
    if value is None:
        return "–"
    share = value * 100
    if 0 < share < 0.1:
        return f"{share:.2f} %"
    return f"{share:.1f} %"


def fill_url_template(template: str, **values: str | None) -> str:
    """``{name}`` placeholders replaced by percent-encoded values (every reserved character)."""
    url = template
    for name, value in values.items():
        url = url.replace("{" + name + "}", quote(value or "", safe=""))
    return url


@register.simple_tag
def resume_url(session: object) -> str:
    """Where the runtime's Director Chat resumes this session ("" when not configured)."""
    template = settings.RESUME_URL_TEMPLATE
    if not template:
        return ""
    return fill_url_template(
        template,
        session_id=getattr(session, "id", ""),
        target_key=getattr(session, "target_key", ""),
        profile_key=getattr(session, "profile_key", ""),
    )


@register.filter
def note_text(value: str) -> SafeString:
    """A reviewer's note: escaped, http(s) addresses linked (:func:`markup.linked_text`)."""
    return linked_text(str(value))
