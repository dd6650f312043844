"""One line of a frame file, interpreted as a :class:`FrameLine`.

The frame shape is not documented, so any JSON object is accepted and the well-known
keys are picked out when present: timestamps (epoch s, ms, µs or ns by magnitude, or
ISO 8601), kind, trace/span/parent ids, name and duration; plus a one-line summary and
a capped pretty-printed form for display. A damaged line (not UTF-8, not JSON, not an
object, too long) becomes a FrameLine with a short ``error`` instead of raising.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from dataclasses import dataclass

# --- Tunables ------------------------------------------------------------------------

RAW_PREVIEW_BYTES = 8 * 1024
PRETTY_MAX_CHARS = 32 * 1024
SUMMARY_MAX_CHARS = 160


# --- Data ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrameLine:
    """One line of a frame file, parsed or explaining why it could not be.

    ``offset`` (byte offset of the line start) is the stable identity of a line.
    ``number`` is the 1-based line number when known (see :func:`read_page`), else None.
    ``length`` counts the line's bytes without its terminating ``\\n``.
    """

    offset: int
    length: int
    number: int | None
    data: dict | None
    error: str | None  # None, or a short reason such as "not valid JSON"
    raw: str  # decoded with errors="replace", at most RAW_PREVIEW_BYTES of the line
    truncated: bool  # raw is a prefix of the line
    ts_ms: int | None = None
    kind: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str | None = None
    duration_ms: float | None = None
    summary: str = ""
    pretty: str = ""
    pretty_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def end_offset(self) -> int:
        """Offset of the next line (just past this line's ``\\n``)."""
        return self.offset + self.length + 1


# --- Frame interpretation ------------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_ONE_MS = _dt.timedelta(milliseconds=1)
# Limits of datetime, so any ts_ms we return can be formatted by the UI.
_MIN_TS_MS = -62_135_596_800_000
_MAX_TS_MS = 253_402_300_799_999
_NUMERIC_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$", re.ASCII)

_TS_KEYS = ("ts", "timestamp", "time")
_KIND_KEYS = ("kind", "type", "event")
_TRACE_KEYS = ("traceId", "trace_id")
_SPAN_KEYS = ("spanId", "span_id")
_PARENT_KEYS = ("parentSpanId", "parent_span_id")
_DURATION_KEYS = ("durationMs", "duration_ms", "duration")
_WELL_KNOWN = frozenset(
    _TS_KEYS + _KIND_KEYS + _TRACE_KEYS + _SPAN_KEYS + _PARENT_KEYS + _DURATION_KEYS + ("name",)
)
# Keys that usually say what a frame is about, in the order they make a good summary.
_SUMMARY_TEXT_KEYS = ("message", "msg", "text", "content")
_SUMMARY_LABEL_KEYS = ("tool", "toolName", "tool_name", "status", "error")


def _number_to_ms(value: float) -> int | None:
    """Interpret an epoch number by magnitude: s (< 1e11), ms, µs (>= 1e14), ns (>= 1e17).

    1e11 s is the year 5138 and 1e11 ms is 1973, so the ranges do not overlap for any
    real timestamp; µs and ns show up in OpenTelemetry-style frames.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    magnitude = abs(value)
    if isinstance(value, int):
        if magnitude < 100_000_000_000:
            ms = value * 1000
        elif magnitude < 100_000_000_000_000:
            ms = value
        elif magnitude < 100_000_000_000_000_000:
            ms = value // 1000
        else:
            ms = value // 1_000_000
    else:
        if magnitude < 1e11:
            scaled = value * 1000
        elif magnitude < 1e14:
            scaled = value
        elif magnitude < 1e17:
            scaled = value / 1e3
        else:
            scaled = value / 1e6
        ms = round(scaled)
    return ms if _MIN_TS_MS <= ms <= _MAX_TS_MS else None


def _parse_ts(value: object) -> int | None:
    """Epoch milliseconds from a number or a string (numeric or ISO 8601), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _number_to_ms(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if _NUMERIC_RE.match(text):
        try:
            number = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            return None
        return _number_to_ms(number)
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:  # a bare ISO time from a server is taken as UTC
        moment = moment.replace(tzinfo=_dt.UTC)
    try:
        ms = (moment - _EPOCH) // _ONE_MS
    except OverflowError:
        return None
    return ms if _MIN_TS_MS <= ms <= _MAX_TS_MS else None


def first_ts(data: dict) -> int | None:
    """The frame's time in epoch ms, from the first well-known time key that parses."""
    for key in _TS_KEYS:
        if key in data:
            ms = _parse_ts(data[key])
            if ms is not None:
                return ms
    return None


def _first_str(data: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _first_id(data: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _first_number(data: dict, keys: tuple[str, ...]) -> float | None:
    """First finite number; ``duration`` has no documented unit and is taken as ms."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float) and math.isfinite(value):
            return float(value)
    return None


def _scalar_text(value: object, cap: int = 80) -> str | None:
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | str):
        text = str(value)
    else:
        return None
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _one_line(text: str, cap: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _summary(data: dict, name: str | None, kind: str | None) -> str:
    """Name, then message-like text and tool/status/error, then the first scalar keys."""
    parts: list[str] = []
    used = set(_WELL_KNOWN)
    if name:
        parts.append(_one_line(name, 80))
    for key in _SUMMARY_TEXT_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(_one_line(value, 120))
            used.add(key)
            break
    for key in _SUMMARY_LABEL_KEYS:
        if key not in data:
            continue
        value = data[key]
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            value = value["message"]  # {"error": {"message": ...}} is common
        text = _scalar_text(value)
        if text is not None and text != "":
            parts.append(f"{key}={text}")
            used.add(key)
    for key, value in data.items():
        if len(parts) >= 4:
            break
        if key in used:
            continue
        text = _scalar_text(value, 40)
        if text is not None:
            parts.append(f"{key}={text}")
    if not parts:
        if kind:
            return _one_line(kind, SUMMARY_MAX_CHARS)
        return f"{{{len(data)} keys}}" if data else "{}"
    return _one_line(" · ".join(parts), SUMMARY_MAX_CHARS)


def _pretty(data: dict) -> tuple[str, bool]:
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        # The indenting encoder is recursive Python; very deep frames fall back to compact.
        try:
            text = json.dumps(data, ensure_ascii=False)
        except (ValueError, RecursionError):
            return "(too deeply nested to display)", True
    if len(text) > PRETTY_MAX_CHARS:
        return text[:PRETTY_MAX_CHARS] + "\n…", True
    return text, False


def decode_preview(content: bytes, limit: int = RAW_PREVIEW_BYTES) -> tuple[str, bool]:
    """The head of a line as text (bad UTF-8 replaced), and whether it was cut."""
    return content[:limit].decode("utf-8", "replace"), len(content) > limit


def parse_frame(content: bytes, offset: int, length: int, number: int | None) -> FrameLine:
    """Interpret one complete line (without its ``\\n``; ``length`` is the full length)."""
    if content.endswith(b"\r"):  # tolerate CRLF writers
        content = content[:-1]
    raw, truncated = decode_preview(content)

    def damaged(reason: str) -> FrameLine:
        return FrameLine(
            offset=offset,
            length=length,
            number=number,
            data=None,
            error=reason,
            raw=raw,
            truncated=truncated,
            summary=reason,
        )

    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return damaged("not valid UTF-8")
    text = text.removeprefix("\ufeff")  # a BOM from an editor or a Windows tool
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: pathologically nested JSON
        return damaged("not valid JSON")
    if not isinstance(data, dict):
        return damaged("not a JSON object")
    name = data.get("name") if isinstance(data.get("name"), str) else None
    kind = _first_str(data, _KIND_KEYS)
    pretty, pretty_truncated = _pretty(data)
    return FrameLine(
        offset=offset,
        length=length,
        number=number,
        data=data,
        error=None,
        raw=raw,
        truncated=truncated,
        ts_ms=first_ts(data),
        kind=kind,
        trace_id=_first_id(data, _TRACE_KEYS),
        span_id=_first_id(data, _SPAN_KEYS),
        parent_span_id=_first_id(data, _PARENT_KEYS),
        name=name,
        duration_ms=_first_number(data, _DURATION_KEYS),
        summary=_summary(data, name, kind),
        pretty=pretty,
        pretty_truncated=pretty_truncated,
    )


def too_long_frame(head: bytes, offset: int, length: int, number: int | None) -> FrameLine:
    """A line over the read limit: shown damaged, with only its head."""
    raw, _ = decode_preview(head)
    return FrameLine(
        offset=offset,
        length=length,
        number=number,
        data=None,
        error="line too long",
        raw=raw,
        truncated=True,
        summary=f"line too long ({length:,} bytes)",
    )
