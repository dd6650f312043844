"""Numbers and times as people read them ("6.9 KB", "1.2 s", "14:02:11.123"), shared by
templates, Python-built rows and messages: each rule is written once, here."""

from __future__ import annotations

from datetime import datetime


def file_size(value: int | None) -> str:
    """``512 B``, ``6.9 KB``, ``1.3 MB``, ``4.2 GB``; ``—`` for unknown."""
    if value is None:
        return "—"
    size = float(value)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def clock_ms(local: datetime) -> str:
    """``14:02:11.123``: a time of day to the millisecond (the store's resolution)."""
    return f"{local:%H:%M:%S}.{local.microsecond // 1000:03d}"


def exact_time(local: datetime) -> str:
    """``2026-11-28 14:02:11.123 UTC``: the hover text of every shown time."""
    return shown_and_exact_time(local)[1]


def shown_and_exact_time(local: datetime) -> tuple[str, str]:
    """``2026-11-28 14:02:11 UTC`` and its hover text :func:`exact_time`, formatted once.

    ``isoformat`` is a few times quicker than ``strftime``, which a transcript
    page would call hundreds of times.
    """
    zone = local.tzname() or ""
    if local.year < 1000:  # strftime writes such a year unpadded ("349-09-08"), as elsewhere
        seconds = f"{local:%Y-%m-%d %H:%M:%S}"
    else:  # "2026-11-28 14:02:11": the wall time, its offset left to the zone's name
        seconds = local.replace(tzinfo=None, microsecond=0).isoformat(" ")
    exact = f"{seconds}.{local.microsecond // 1000:03d} {zone}".rstrip()
    return f"{seconds} {zone}".rstrip(), exact


#: Longer than any span a session or a tool call can honestly take (ten years):
#: such a figure comes from a bad time or duration in the store, and reads as that.
MAX_DURATION_MS = 10 * 366 * 24 * 3600 * 1000


def duration(value: int | float | None) -> str:
    """``120 ms``, ``1.2 s``, ``3 min 4 s``, ``443 h 16 min``; ``—`` for unknown.

    A span past :data:`MAX_DURATION_MS` (or not finite) is described, "out of
    range (1e+308 ms)", rather than printed as hundreds of digits of hours.
    """
    if value is None:
        return "—"
    if isinstance(value, str):  # the store held no number: its description (OddValue)
        return value
    ms = float(value)
    if not abs(ms) <= MAX_DURATION_MS:
        return f"out of range ({ms:.3g} ms)"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms / 1000, 60)
    if minutes < 60:
        return f"{minutes:.0f} min {seconds:.0f} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours:.0f} h {minutes:.0f} min"


def signed_duration(ms: float) -> str:
    """Like :func:`duration` for offsets that may be negative ("-3 min 4 s")."""
    return ("-" if ms < 0 else "") + duration(abs(ms))
