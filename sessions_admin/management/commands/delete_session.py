"""``manage.py delete_session ID [--wipe-frames]``: the runtime's delete for one session.

Prints the counts; exits non-zero with a sentence when it refuses (read-only
mode, no such session). Every run leaves an audit record.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from sessions_admin import deletion
from sessions_admin.management.deleting import command_actor, result_lines
from sessions_admin.store.connection import StoreError


class Command(BaseCommand):
    help = "Delete one session with its messages and state (optionally its frames directory)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("session_id", help="the exact session id")
        parser.add_argument(
            "--wipe-frames",
            action="store_true",
            help="also remove <frames root>/<id>/ after the rows are deleted",
        )

    def handle(self, *args, session_id: str, wipe_frames: bool, **options) -> None:
        try:
            result = deletion.delete_session(
                session_id, actor=command_actor("delete_session"), wipe_frames=wipe_frames
            )
        except StoreError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Session {session_id!r}:")
        for line in result_lines(result):
            self.stdout.write(line)
        if result.frames is not None and result.frames.refused:
            raise CommandError(
                "The rows were deleted, but the frames directory was not removed.", returncode=3
            )
