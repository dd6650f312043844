"""What the session list shows and filters by: the row, the filter, the sort orders, and
parsing them from a request's parameters."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sessions_admin.folding import fold
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.health import REQUIRED_COLUMNS
from sessions_admin.store.textmatch import contains_folded_sql
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import (
    OddValue,
    as_id,
    as_int,
    as_text,
    as_time,
)

PAGE_SIZE = 50

#: Above this many distinct targets the merge stops paying off.
MAX_MERGED_TARGETS = 200

#: The list's sort orders: ``?sort=`` value, column, descending, the menu's label.
SORT_ORDERS: tuple[tuple[str, str, bool, str], ...] = (
    ("-last_active", "last_active", True, "last active, newest first"),
    ("last_active", "last_active", False, "last active, oldest first"),
    ("-created_at", "created_at", True, "created, newest first"),
    ("created_at", "created_at", False, "created, oldest first"),
    ("-turn_count", "turn_count", True, "most turns first"),
    ("turn_count", "turn_count", False, "fewest turns first"),
)

SORTS: dict[str, tuple[str, bool]] = {key: (col, desc) for key, col, desc, _ in SORT_ORDERS}

SORT_LABELS: dict[str, str] = {key: label for key, _, _, label in SORT_ORDERS}

DEFAULT_SORT = "-last_active"

ACTIVE_PRESETS: dict[str, tuple[str, timedelta]] = {
    "1h": ("last hour", timedelta(hours=1)),
    "24h": ("last day", timedelta(days=1)),
    "7d": ("last week", timedelta(days=7)),
    "30d": ("last 30 days", timedelta(days=30)),
    "90d": ("last 90 days", timedelta(days=90)),
}

SESSION_COLUMNS = REQUIRED_COLUMNS["sessions"]  # in SessionRow's field order

ID_INDEX = SESSION_COLUMNS.index("id")

_LAST_ACTIVE = SESSION_COLUMNS.index("last_active")

#: Session text columns read clipped in SQLite (store.cliptext), here and in the admin;
#: the id never is: it is what every link and delete is keyed on.
CLIPPED_SESSION_COLUMNS = ("title", "target_key", "profile_key", "principal_id")

SELECT_COLUMNS = (
    "SELECT "
    + ", ".join(
        clipped_sql(column) if column in CLIPPED_SESSION_COLUMNS else column
        for column in SESSION_COLUMNS
    )
    + " FROM sessions"
)


@dataclass(frozen=True)
class SessionRow:
    """A session as pages show it: declared types, or an :class:`OddValue` saying
    what the store holds instead (see :mod:`sessions_admin.store.values`)."""

    id: str
    target_key: str
    profile_key: str
    principal_id: str | None
    title: str | None
    turn_count: int | None
    created_at: int
    last_active: int

    @classmethod
    def from_db(cls, row: tuple) -> SessionRow:
        session_id, target, profile, principal, title, turns, created, last = row
        return cls(
            as_id(session_id),
            as_text(target),  # type: ignore[arg-type]
            as_text(profile),  # type: ignore[arg-type]
            as_text(principal),
            as_text(title),
            as_int(turns),  # type: ignore[arg-type]
            as_time(created),  # type: ignore[arg-type]
            as_time(last),  # type: ignore[arg-type]
        )

    @property
    def linkable(self) -> bool:
        """False for a NULL or BLOB id: no URL can name it."""
        return not isinstance(self.id, OddValue)

    @property
    def created(self) -> datetime | None:
        return from_epoch_ms(self.created_at)

    @property
    def last_active_at(self) -> datetime | None:
        return from_epoch_ms(self.last_active)


@dataclass(frozen=True)
class SessionFilter:
    target: str | None = None
    profile: str | None = None
    principal: str | None = None
    q: str | None = None
    active_after_ms: int | None = None
    active_before_ms: int | None = None

    def is_empty(self) -> bool:
        return all(value in (None, "") for value in self.__dict__.values())

    def where(self, *, include_target: bool = True) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if include_target and self.target:
            clauses.append("target_key = ?")
            params.append(self.target)
        if self.profile:
            clauses.append("profile_key = ?")
            params.append(self.profile)
        if self.principal:
            clauses.append("principal_id = ?")
            params.append(self.principal)
        if self.q:
            # The one folding (sessions_admin.folding), as the side index answers it.
            folded = fold(self.q)
            title, title_params = contains_folded_sql("title", folded)
            session_id, id_params = contains_folded_sql("id", folded)
            clauses.append(f"({title} OR {session_id})")
            params += [*title_params, *id_params]
        if self.active_after_ms is not None:
            clauses.append("last_active >= ?")
            params.append(self.active_after_ms)
        if self.active_before_ms is not None:
            clauses.append("last_active < ?")
            params.append(self.active_before_ms)
        return clauses, params

    def count_is_cheap(self) -> bool:
        """Can a capped count be served by an index (no filter, or a target)?"""
        unindexed = self.principal or self.q or self.active_after_ms or self.active_before_ms
        if unindexed:
            return False
        return bool(self.target) or not self.profile

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


def filter_with(session_filter: SessionFilter, **changes: Any) -> SessionFilter:
    return replace(session_filter, **changes)
