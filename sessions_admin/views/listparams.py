"""A request's parameters for the session list, search, a tool's calls and the transcript,
parsed into their filters: each value bounded, or a
:class:`~sessions_admin.params.BadParameter` naming it.

The three lists share one time control (:func:`time_range`, :func:`time_control`): a
preset ("last day") and a from/to range, where "to" includes the whole day, hour,
minute or second it names, so the same URL means the same moments on every page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from sessions_admin import params
from sessions_admin.lists.sessions import FailedUnknown, failed_session_ids, failed_synced_at
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.params import BadParameter
from sessions_admin.params import text as text_param
from sessions_admin.store.cliptext import SHORT_TEXT_CHARS
from sessions_admin.store.queries import ACTIVE_PRESETS, DEFAULT_SORT, SORTS, SessionFilter
from sessions_admin.store.timeutil import to_epoch_ms
from sessions_admin.store.transcript import MessageFilter


def parse_datetime_param(name: str, raw: str) -> int:
    moment = params.iso_datetime({name: raw}, name, timezone.get_default_timezone())
    assert moment is not None  # raw is not empty: the caller checked
    return to_epoch_ms(moment)


#: The precision an ISO moment was written to: its date, then each part of its time.
_PRECISION = re.compile(
    r"\s*\d{4}-?\d{2}-?\d{2}(?:[T ](\d{2})(?::?(\d{2}))?(?::?(\d{2}))?([.,]\d+)?)?"
)
_UNITS = (timedelta(days=1), timedelta(hours=1), timedelta(minutes=1), timedelta(seconds=1))


def parse_end_param(name: str, raw: str) -> int:
    """The end of a range as an exclusive bound: the moment after the whole day, hour,
    minute or second ``raw`` names (``to=2026-11-28`` keeps all of that day)."""
    start = parse_datetime_param(name, raw)
    match = _PRECISION.match(raw)
    if match is None or match.group(4):  # fractions of a second: that millisecond
        return start + 1
    given = sum(1 for part in match.groups()[:3] if part is not None)
    return start + int(_UNITS[given].total_seconds() * 1000)


def time_range(
    query: Any, *, start: str, end: str, preset: str, now: datetime | None = None
) -> tuple[int | None, int | None]:
    """``(from_ms, to_ms)`` from a preset and a from/to pair, ``to`` exclusive; a range
    whose end is not after its start is refused, naming the end."""
    after = before = None
    chosen = params.choice(query, preset, ACTIVE_PRESETS)
    if chosen:
        now = now or timezone.now()
        after = to_epoch_ms(now - ACTIVE_PRESETS[chosen][1])
    if raw := params.text(query, start):
        after = max(after if after is not None else -(2**62), parse_datetime_param(start, raw))
    if raw := params.text(query, end):
        before = parse_end_param(end, raw)
    if after is not None and before is not None and before <= after:
        raise BadParameter(f"{end}: the end of the time range must come after its start.", name=end)
    return after, before


def datetime_local(raw: Any, *, end: bool = False) -> str:
    """A parameter's moment as a ``datetime-local`` field shows it (``YYYY-MM-DDThh:mm``):
    a date alone reads as its first minute, or its last for the range's end."""
    if not isinstance(raw, str) or not raw.strip():
        return ""
    raw = raw.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        return raw + ("T23:59" if end else "T00:00")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", raw):
        return raw
    zone = timezone.get_default_timezone()
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        local = timezone.localtime(moment if moment.tzinfo else moment.replace(tzinfo=zone), zone)
    except (ValueError, OverflowError, OSError):
        return ""  # the request is refused, naming it; the field starts empty
    return local.strftime("%Y-%m-%dT%H:%M" + (":%S" if local.second else ""))


def time_control(query: Any, legend: str, *, start: str, end: str, preset: str) -> dict:
    """What ``_time_range.html`` draws: the same preset menu and from/to fields on
    every list, named after the page's own parameters."""
    return {
        "legend": legend,
        "preset": {"name": preset, "value": query.get(preset, "")},
        "choices": [(key, label) for key, (label, _) in ACTIVE_PRESETS.items()],
        "start": {"name": start, "value": datetime_local(query.get(start))},
        "end": {"name": end, "value": datetime_local(query.get(end), end=True)},
        "open": bool(query.get(start) or query.get(end)),
    }


def menu_targets(targets: list) -> list[str]:
    """The targets a filter's menu lists: a target longer than any real one stays
    filterable by URL, not listed; a BLOB target is left out, as no value could name it."""
    return [t for t in targets if isinstance(t, str) and len(t) <= SHORT_TEXT_CHARS]


def parse_filter(query: Any, *, now: datetime | None = None) -> SessionFilter:
    """Build a filter from query parameters; unknown parameters are ignored."""

    def text(name: str) -> str | None:
        return params.text(query, name)

    after, before = time_range(
        query, start="active_after", end="active_before", preset="active", now=now
    )
    return SessionFilter(
        target=text("target"),
        profile=text("profile"),
        principal=text("principal"),
        q=text("q"),
        active_after_ms=after,
        active_before_ms=before,
    )


def parse_sort(raw: str | None) -> str:
    return params.choice({"sort": raw or ""}, "sort", SORTS, DEFAULT_SORT)  # type: ignore[return-value]


def parse_message_filter(query: Any) -> MessageFilter:
    """The filter from query parameters; each is free text, refused past 1,000 characters."""
    names = ("role", "tool", "q", "trace", "span")
    return MessageFilter(**{name: text_param(query, name) for name in names})


@dataclass
class FailedFilter:
    """``?failed=1``: the sessions with a failed call as of the rollups' last pass
    (``synced_at_ms``), a label's among them when one is picked too."""

    synced_at_ms: int | None
    label: Label | None = None

    def ids(self) -> list[str]:
        """Every session kept, read from the rollups (a label's: intersected)."""
        ids = failed_session_ids()
        if self.label is not None:
            labelled = set(labels.session_ids_with(self.label))
            ids = [sid for sid in ids if sid in labelled]
        return ids


def failed_filter(query: Any, label: Label | None = None) -> FailedFilter | None:
    """``?failed=1``: the sessions to keep, or None when the switch is off."""
    if not params.flag(query, "failed"):
        return None
    try:
        return FailedFilter(failed_synced_at(), label)
    except FailedUnknown:
        raise BadParameter(
            "failed: which sessions have failed calls is known once the side index has "
            "been built (sync_index); try again when it has.",
            name="failed",
        ) from None
