"""What the overview and the tool pages share: the side database, windows, links and charts."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from django.urls import reverse

from sessions_admin.charts import Point, bar_chart, sparkline
from sessions_admin.ids import session_url
from sessions_admin.ourdata.rollups import calls
from sessions_admin.ourdata.rollups.figures import (
    WINDOWS,
    SideConnection,
    ToolRow,
    Window,
    bucket_ms,
    last_sync,
)
from sessions_admin.ourdata.sync import last_run
from sessions_admin.views.progress import build_sentence

#: The session list's last-active preset that matches each window.
LIST_PRESET = {"24h": "24h", "7d": "7d", "30d": "30d", "all": None}


def list_url(**params: str | None) -> str:
    """The session list filtered by ``params`` (empty ones left out)."""
    kept = {k: v for k, v in params.items() if v}
    return reverse("sessions") + ("?" + urlencode(kept) if kept else "")


#: Longer tool paths go by key: gunicorn refuses a request line over 4,094 bytes (414).
MAX_TOOL_PATH = 200


def tool_url(tool: str, **params: str | None) -> str:
    """A tool's page: by name, or by :func:`calls.tool_key` when the name, percent-
    encoded, is too long for a URL or could be read as a key itself (``~/…``)."""
    kept = {k: v for k, v in params.items() if v}
    path = reverse("tool", args=[tool])
    if len(path) > MAX_TOOL_PATH or tool.startswith(calls.KEYED_PREFIX):
        path = reverse("tool", args=[calls.KEYED_PREFIX + calls.tool_key(tool)])
    return path + ("?" + urlencode(kept) if kept else "")


def window_since(window: Window) -> str | None:
    """The window's start as an absolute ``since=`` for a tool's page (None for all time)."""
    return None if window.start_ms is None else iso_utc(window.start_ms)


def link_tools(rows: list[ToolRow], window: Window, **kept: str | None) -> None:
    """Each row's links to its calls and its failed calls, within the window and filters."""
    since = window_since(window)
    for row in rows:
        row.url = tool_url(row.tool, since=since, **kept)
        row.errors_url = tool_url(row.tool, errors="1", since=since, **kept)


def sync_context(side: SideConnection) -> dict:
    """``sync`` for the pages' empty states; ``not_computed`` until a sync pass has finished;
    ``sync_run`` says whether the latest pass failed, and why (shown above any figures);
    ``build`` how far the first build is ("indexing: 42%, about 6 min left") until then."""
    state = last_sync(side)
    not_computed = state.synced_at_ms is None
    return {
        "sync": state,
        "not_computed": not_computed,
        "sync_run": last_run(side),
        "build": build_sentence(side) if not_computed else None,
    }


def permalink(session_id: str, message_id: int) -> str:
    """The transcript opened at one message."""
    return session_url(session_id, at=str(message_id)) + f"#message-{message_id}"


def window_links(window: Window, base: dict[str, str]) -> list[dict]:
    """One link per window, keeping the other filters: shareable, stable URLs."""
    return [
        {
            "key": key,
            "label": label,
            "current": key == window.key,
            "query": "?" + urlencode({**base, "window": key}),
        }
        for key, (label, _, _) in WINDOWS.items()
    ]


def iso_utc(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%MZ")


def bucket_label(bucket: int, grain: str) -> str:
    moment = datetime.fromtimestamp(bucket_ms(bucket, grain) / 1000, tz=UTC)
    return moment.strftime("%H:%M") if grain == "hour" else moment.strftime("%d %b")


def activity_charts(hourly: list[tuple], daily: list[tuple]) -> list:
    """Messages written and sessions created, per hour (last day) and per day (90 days)."""
    charts = []
    for series, grain, span in ((hourly, "hour", "last 24 hours"), (daily, "day", "last 90 days")):
        for index, what in ((1, "messages"), (2, "sessions created")):
            points = [Point(bucket_label(row[0], grain), row[index]) for row in series]
            charts.append(
                bar_chart(
                    f"{what.capitalize()} per {grain}, {span} (UTC)",
                    f"{what.split()[0]} per {grain}",
                    points,
                )
            )
    return charts


def tool_sparkline(series: list[tuple[int, int, int]], grain: str):
    return sparkline([(bucket_label(b, grain), calls, errors) for b, calls, errors in series])
