"""Every screen of the dashboard, as a person opens it, over a demo host home.

One list for the accessibility test (``test_axe.py``), the narrow-window test
and ``scripts/screens.py`` (``make screens``), so the three cannot drift. The
sample ids are read from the demo store (tests may read it directly) so each
screen shows real content: the session with the most tool calls, a session
with a request file, the most used tool, a word from a user message,
the busiest principal.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sessions_admin.ids import fleet_principal_url, principal_url, session_url

#: The two widths every screen is checked and pictured at (a laptop, a phone).
WIDTHS = {1440: 900, 390: 844}


@dataclass(frozen=True)
class Screen:
    name: str
    path: str
    #: Opened without logging in (the login page).
    anonymous: bool = False
    #: The status it answers with (the page for a missing session is a 404).
    status: int = 200


@dataclass(frozen=True)
class Samples:
    """Ids on the demo store that make each screen show something."""

    session_id: str
    frames_session_id: str
    request_id: str
    tool: str
    word: str
    principal: str


def demo_samples(store_path: Path, frames_root: Path) -> Samples:
    """Pick the sample ids from a store ``build_demo_home`` wrote (read-only)."""
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as conn:
        (session_id,) = conn.execute(
            "SELECT session_id FROM session_messages "
            "WHERE session_id LIKE 'sess^_%' ESCAPE '^' AND tool_name > '' "
            "GROUP BY session_id ORDER BY count(*) DESC, session_id LIMIT 1"
        ).fetchone()
        (tool,) = conn.execute(
            "SELECT tool_name FROM session_messages WHERE tool_name > '' "
            "GROUP BY tool_name ORDER BY count(*) DESC, tool_name LIMIT 1"
        ).fetchone()
        (content,) = conn.execute(
            "SELECT content FROM session_messages WHERE role = 'user' "
            "AND session_id = ? AND content > '' LIMIT 1",
            (session_id,),
        ).fetchone()
        (principal,) = conn.execute(
            "SELECT principal_id FROM sessions WHERE principal_id > '' "
            "GROUP BY principal_id ORDER BY count(*) DESC, principal_id LIMIT 1"
        ).fetchone()
        known = {row[0] for row in conn.execute("SELECT id FROM sessions")}
    requests = sorted(
        (path.stat().st_size, path.parent.name, path.name)
        for path in frames_root.glob("sess_*/activity-*.jsonl")
        if path.parent.name in known
    )
    _, frames_session_id, filename = requests[-1]
    request_id = filename.removeprefix("activity-").removesuffix(".jsonl")
    word = max(re.findall(r"[A-Za-z]{5,}", content), key=len)
    return Samples(session_id, frames_session_id, request_id, tool, word, principal)


def all_screens(s: Samples) -> list[Screen]:
    """Every page a person reaches, the admin's included. (``stats/`` without htmx
    is the session page itself, so it is not listed twice.)"""
    admin = "/admin/sessions_admin"
    return [
        Screen("login", "/login/", anonymous=True),
        Screen("overview", "/"),
        Screen("sessions", "/sessions/"),
        Screen("session", session_url(s.session_id)),
        Screen("session-state", session_url(s.session_id, "state")),
        Screen("session-delete", session_url(s.session_id, "delete")),
        Screen("session-frames", session_url(s.frames_session_id, "frames")),
        Screen("frames-request", session_url(s.frames_session_id, f"frames/{s.request_id}")),
        Screen("search", f"/search/?q={quote(s.word)}"),
        Screen("targets", "/targets/"),
        Screen("principals", "/principals/"),
        Screen("principal", principal_url(s.principal)),
        Screen("tools", "/tools/"),
        Screen("failures", "/failures/?window=all"),
        Screen("sessions-failed", "/sessions/?failed=1"),
        Screen(
            "compare",
            f"/compare/?a={quote(s.session_id, safe='')}&b={quote(s.frames_session_id, safe='')}",
        ),
        Screen("tool", f"/tools/{quote(s.tool)}/"),
        Screen("tool-errors", f"/tools/{quote(s.tool)}/?errors=1"),
        Screen("frames-orphans", "/frames/orphans/"),
        Screen("fleet", "/fleet/"),
        Screen("fleet-sessions", "/fleet/sessions/"),
        Screen("fleet-principal", fleet_principal_url(s.principal)),
        Screen("not-found", "/sessions/no-such-session/", status=404),
        Screen("admin", "/admin/"),
        Screen("admin-sessions", f"{admin}/session/"),
        Screen("admin-session", f"{admin}/session/{quote(s.session_id)}/change/"),
        Screen("admin-messages", f"{admin}/message/"),
        Screen("admin-clear-all", f"{admin}/session/clear-all/"),
        Screen("admin-audit", f"{admin}/deletionaudit/"),
        Screen("admin-erasures", f"{admin}/erasure/"),
    ]
