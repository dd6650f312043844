"""``manage.py clear_sessions``: bulk deletes for automation and cron.

    clear_sessions --all [--wipe-frames] [--yes]
    clear_sessions --principal P | --target T | --older-than 90d  (combinable)
    clear_sessions --orphans            messages/state whose session row is missing
    … [--dry-run]                       print what would go, delete nothing

Deletes run in short batches of whole sessions (see ``sessions_admin.deletion``), so the
runtime keeps writing meanwhile. Without ``--yes`` it asks on a terminal and
refuses otherwise. Exits non-zero with a sentence on refusal.
"""

from __future__ import annotations

import re
import sys
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from sessions_admin import deletion
from sessions_admin.management.deleting import command_actor, result_lines
from sessions_admin.store.connection import StoreError
from sessions_admin.store.queries import SessionFilter

_AGE = re.compile(r"^\s*(\d+)\s*([dhwm]?)\s*$")
_UNITS = {"": "days", "d": "days", "h": "hours", "w": "weeks", "m": "minutes"}


def parse_age(text: str) -> timedelta:
    match = _AGE.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise CommandError(
            f"--older-than must be a positive age such as 90d, 12h or 2w; got {text!r}."
        )
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


class Command(BaseCommand):
    help = "Delete many sessions (all, one principal's, one target's, or idle ones)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--all", action="store_true", help="every session in the store")
        parser.add_argument("--principal", help="sessions of this principal (exact)")
        parser.add_argument("--target", help="sessions of this target (exact)")
        parser.add_argument(
            "--older-than", dest="older_than", help="sessions idle longer than this (90d, 12h, 2w)"
        )
        parser.add_argument(
            "--orphans", action="store_true", help="messages and state whose session row is missing"
        )
        parser.add_argument("--dry-run", action="store_true", help="print counts only")
        parser.add_argument(
            "--wipe-frames",
            action="store_true",
            help="also remove each deleted session's frames directory",
        )
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    def handle(self, *args, **options) -> None:
        chosen = [name for name in ("all", "orphans") if options[name]]
        narrowing = any(options[name] for name in ("principal", "target", "older_than"))
        if len(chosen) + (1 if narrowing else 0) != 1:
            raise CommandError(
                "Choose exactly one of --all, --orphans, or a filter "
                "(--principal / --target / --older-than)."
            )
        try:
            if options["orphans"]:
                self._orphans(options)
            else:
                self._sessions(options)
        except StoreError as exc:
            raise CommandError(exc.message) from exc

    def _confirm(self, question: str, options: dict) -> None:
        if options["yes"]:
            return
        if not sys.stdin.isatty():
            raise CommandError("Refusing to delete without confirmation: pass --yes.")
        answer = input(f"{question} Type 'yes' to go on: ")
        if answer.strip().lower() != "yes":
            raise CommandError("Cancelled; nothing was deleted.")

    def _sessions(self, options: dict) -> None:
        actor = command_actor("clear_sessions")
        age = parse_age(options["older_than"]) if options["older_than"] else None
        if options["all"]:
            description = "every session"
            run = lambda dry: deletion.clear_all(  # noqa: E731
                actor=actor,
                dry_run=dry,
                wipe_frames=options["wipe_frames"],
                on_batch=self._progress,
            )
        elif age and not (options["principal"] or options["target"]):
            description = f"sessions idle longer than {options['older_than']}"
            run = lambda dry: deletion.delete_older_than(  # noqa: E731
                age,
                actor=actor,
                dry_run=dry,
                wipe_frames=options["wipe_frames"],
                on_batch=self._progress,
            )
        else:
            cutoff = deletion.retention_filter(age).active_before_ms if age else None
            session_filter = SessionFilter(
                principal=options["principal"], target=options["target"], active_before_ms=cutoff
            )
            description = f"sessions matching {session_filter.describe()}"
            run = lambda dry: deletion.delete_filtered(  # noqa: E731
                session_filter,
                actor=actor,
                dry_run=dry,
                wipe_frames=options["wipe_frames"],
                on_batch=self._progress,
            )
        preview = run(True)
        for line in result_lines(preview):
            self.stdout.write(line)
        if options["dry_run"] or preview.counts.sessions == 0:
            return
        self._confirm(f"Delete {description}?", options)
        result = run(False)
        for line in result_lines(result):
            self.stdout.write(line)
        if result.frames is not None and result.frames.refused:
            raise CommandError(
                "Some frames directories were not removed (listed above).", returncode=3
            )

    def _orphans(self, options: dict) -> None:
        found = deletion.find_orphaned_children()
        self.stdout.write(
            f"Orphaned children: {found.messages:,} messages and {found.state:,} "
            f"state rows under {len(found.session_ids):,} missing session ids."
        )
        for session_id in found.session_ids[:20]:
            self.stdout.write(f"  {session_id!r}")
        if options["dry_run"] or not found.session_ids:
            return
        self._confirm("Delete these orphaned messages and state rows?", options)
        result = deletion.remove_orphaned_children(actor=command_actor("clear_sessions"))
        for line in result_lines(result):
            self.stdout.write(line)

    def _progress(self, counts: deletion.Counts, batches: int) -> None:
        if batches % 50 == 0:
            self.stderr.write(
                f"  … {counts.sessions:,} sessions deleted so far ({batches} batches)"
            )
