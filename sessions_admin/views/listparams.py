"""A request's parameters for the session list and the transcript, parsed into the store's
filters: each value bounded, or a :class:`~sessions_admin.params.BadParameter` naming it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils import timezone

from sessions_admin import params
from sessions_admin.lists.sessions import FailedUnknown, failed_session_ids, failed_synced_at
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.params import BadParameter
from sessions_admin.params import text as text_param
from sessions_admin.store.queries import ACTIVE_PRESETS, DEFAULT_SORT, SORTS, SessionFilter
from sessions_admin.store.timeutil import to_epoch_ms
from sessions_admin.store.transcript import MessageFilter


def parse_datetime_param(name: str, raw: str) -> int:
    moment = params.iso_datetime({name: raw}, name, timezone.get_default_timezone())
    assert moment is not None  # raw is not empty: the caller checked
    return to_epoch_ms(moment)


def parse_filter(query: Any, *, now: datetime | None = None) -> SessionFilter:
    """Build a filter from query parameters; unknown parameters are ignored."""

    def text(name: str) -> str | None:
        return params.text(query, name)

    after = before = None
    active = params.choice(query, "active", ACTIVE_PRESETS)
    if active:
        now = now or timezone.now()
        after = to_epoch_ms(now - ACTIVE_PRESETS[active][1])
    if raw := text("active_after"):
        after = max(after or 0, parse_datetime_param("active_after", raw))
    if raw := text("active_before"):
        before = parse_datetime_param("active_before", raw)
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
