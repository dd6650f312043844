"""What a delete takes and gives back.

Who deletes (:class:`Actor`), what an operation did (:class:`DeletionResult`,
built from the store's :class:`~sessions_admin.store.cascade.Counts` and
:class:`~sessions_admin.store.cascade.FramesReport`), and the error for an id the
store does not have (:class:`SessionNotFound`). Plain data: no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions_admin.humanize import file_size
from sessions_admin.store.cascade import Counts, FramesReport
from sessions_admin.store.connection import StoreError


class SessionNotFound(StoreError):
    status_code = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session with id {session_id!r} in the store; nothing was deleted.")


# --- Results ------------------------------------------------------------------------


@dataclass
class DeletionResult:
    counts: Counts
    frames: FramesReport | None = None
    audit_id: int | None = None
    dry_run: bool = False
    done: bool = True
    batches: int = 0
    longest_batch_ms: float = 0.0
    skipped: int = 0  # sessions that stopped matching and were left whole
    #: Bytes of a frames directory left on disk (not asked to remove); None: none there.
    frames_kept_bytes: int | None = None

    def describe(self) -> str:
        """``87 messages, 2 state rows, frames removed``: what the flash message says."""
        counts = self.counts
        text = (
            f"{counts.messages:,} message{'s' if counts.messages != 1 else ''}, "
            f"{counts.state:,} state row{'s' if counts.state != 1 else ''}"
        )
        if counts.sessions != 1:
            text = f"{counts.sessions:,} sessions, {text}"
        if self.frames is not None:
            text += f", {self.frames.describe()}"
        elif self.frames_kept_bytes is not None:
            text += (
                f"; its frames ({file_size(self.frames_kept_bytes)}) stay on disk "
                "and show as orphans"
            )
        return text


@dataclass(frozen=True)
class Actor:
    """Who deletes: a signed-in user, or a command (``manage.py clear_sessions``)."""

    name: str
    user: Any = None

    @classmethod
    def of(cls, user: Any) -> Actor:
        return cls(name=user.get_username(), user=user)

    @classmethod
    def command(cls, name: str) -> Actor:
        return cls(name=f"manage.py {name}")
