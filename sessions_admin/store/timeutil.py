"""Epoch-millisecond columns as aware datetimes, and back."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo


def from_epoch_ms(value: int | float | None) -> datetime | None:
    """An aware UTC datetime, or None for a null or out-of-range value."""
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def in_zone(moment: datetime, zone: tzinfo) -> datetime:
    """``moment`` in ``zone``; as it is (UTC) where the zone's reading would fall past
    year 9999 or before year 1, which a stored time near either end can."""
    try:
        return moment.astimezone(zone)
    except OverflowError:
        return moment


def to_epoch_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)
