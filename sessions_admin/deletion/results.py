"""What a delete takes and gives back.

Who deletes (:class:`Actor`), what it removed (:class:`Counts`,
:class:`FramesReport`, :class:`DeletionResult`), what it would remove
(:class:`SessionPreview`, :class:`OrphanedChildren`), and the error for an
id the store does not have (:class:`SessionNotFound`). Plain data: no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sessions_admin.humanize import file_size
from sessions_admin.store.connection import StoreError


class SessionNotFound(StoreError):
    status_code = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session with id {session_id!r} in the store; nothing was deleted.")


# --- Results ------------------------------------------------------------------------


@dataclass
class Counts:
    sessions: int = 0
    messages: int = 0
    state: int = 0

    def add(self, other: Counts) -> None:
        self.sessions += other.sessions
        self.messages += other.messages
        self.state += other.state

    @property
    def rows(self) -> int:
        return self.sessions + self.messages + self.state

    def describe(self) -> str:
        return (
            f"{self.sessions:,} session{'s' if self.sessions != 1 else ''}, "
            f"{self.messages:,} message{'s' if self.messages != 1 else ''}, "
            f"{self.state:,} state row{'s' if self.state != 1 else ''}"
        )


@dataclass
class FramesReport:
    dirs_removed: int = 0
    bytes_removed: int = 0
    files_removed: int = 0
    missing: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (session id, reason)
    #: What the removed directories held besides regular files, by kind.
    others_removed: dict[str, int] = field(default_factory=dict)

    def describe_others(self) -> str:
        """``2 symlinks, 1 FIFO`` (unlinked, never followed); empty when none."""
        kinds = sorted(self.others_removed.items())
        return ", ".join(f"{n:,} {kind}{'s' if n != 1 else ''}" for kind, n in kinds)

    def describe(self) -> str:
        parts = []
        if self.dirs_removed:
            others = self.describe_others()
            parts.append(
                f"frames removed ({self.dirs_removed:,} "
                f"director{'ies' if self.dirs_removed != 1 else 'y'}, "
                f"{file_size(self.bytes_removed)}" + (f", also {others}" if others else "") + ")"
            )
        elif not self.refused:
            parts.append("no frames directory")
        if self.refused:
            parts.append(
                f"frames NOT removed for {len(self.refused):,} session"
                f"{'s' if len(self.refused) != 1 else ''}: {self.refused[0][1]}"
            )
        return "; ".join(parts)


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


@dataclass(frozen=True)
class SessionPreview:
    """What deleting one session would remove (for the confirmation dialog)."""

    session_id: str
    messages: int
    state: int
    frames_bytes: int | None  # None: no directory
    frames_files: int | None
    frames_refusal: str | None = None


@dataclass
class OrphanedChildren:
    session_ids: list[str]
    messages: int
    state: int
