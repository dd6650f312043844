"""Shared by the delete commands: who the actor is, and how results are printed."""

from __future__ import annotations

import getpass

from sessions_admin.deletion import Actor, DeletionResult


def command_actor(name: str) -> Actor:
    try:
        who = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        who = "unknown"
    return Actor(name=f"manage.py {name} (os user {who})")


def result_lines(result: DeletionResult) -> list[str]:
    counts = result.counts
    verb = "Would delete" if result.dry_run else "Deleted"
    lines = [
        f"{verb} {counts.sessions:,} sessions, {counts.messages:,} messages, "
        f"{counts.state:,} state rows."
    ]
    if result.frames is not None:
        frames = result.frames
        lines.append(
            f"Frames: {frames.dirs_removed:,} directories removed ({frames.bytes_removed:,} bytes)."
        )
        for session_id, reason in frames.refused[:20]:
            lines.append(f"Frames NOT removed for {session_id!r}: {reason}")
        if len(frames.refused) > 20:
            lines.append(f"… and {len(frames.refused) - 20} more refusals (see the audit record).")
    if result.skipped:
        lines.append(
            f"{result.skipped:,} sessions stopped matching during the run and were left whole."
        )
    if result.audit_id is not None:
        lines.append(f"Audit record #{result.audit_id}.")
    return lines
