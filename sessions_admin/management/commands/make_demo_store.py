"""``manage.py make_demo_store HOME``: generate a demo agent host home.

Writes ``HOME/data/agents/store.db`` and ``HOME/sessions/`` with
:func:`sessions_admin.demo.build_demo_home`. It never overwrites an
existing store: the home might be a real one.
"""

from __future__ import annotations

import time
from argparse import ArgumentParser, ArgumentTypeError
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from sessions_admin.demo import build_demo_home
from sessions_admin.demo.hostile import plant_hostile

# Progress lines only for builds long enough to want them.
_PROGRESS_EVERY = 1_000_000


def _count(text: str) -> int:
    """A non-negative integer; underscores allowed (``--sessions 500_000``)."""
    try:
        value = int(text)
    except ValueError:
        raise ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise ArgumentTypeError(f"must be between 0 and 1: {value}")
    return value


class Command(BaseCommand):
    help = (
        "Generate a demo agent host home: HOME/data/agents/store.db and activity frames "
        "in HOME/sessions/. Refuses to overwrite an existing store."
    )
    # Only writes files under HOME; Django's own database and checks are irrelevant.
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("home", type=Path, help="host home directory to create or fill")
        parser.add_argument("--sessions", type=_count, default=2000, help="default: 2000")
        parser.add_argument(
            "--messages-per-session",
            type=_count,
            default=20,
            help="average messages per session, varied by +-50%% (default: 20)",
        )
        parser.add_argument("--seed", type=int, default=1, help="default: 1")
        parser.add_argument(
            "--big-session",
            type=_count,
            default=0,
            metavar="N",
            help="also add a session 'sess_big' with N messages (for benchmarks)",
        )
        parser.add_argument(
            "--frames-fraction",
            type=_fraction,
            default=0.3,
            help="share of sessions that get activity-frame files (default: 0.3)",
        )
        parser.add_argument(
            "--hostile",
            action="store_true",
            help=(
                "also plant rows and files a buggy runtime could leave (every storage class "
                "in every column, deep and huge JSON, empty/binary/CRLF/NUL frame files, a "
                "FIFO and a directory named like frame files, names that are not UTF-8), "
                "to see how each page shows them"
            ),
        )
        parser.add_argument(
            "--now-ms",
            type=int,
            default=None,
            help="epoch ms the data ends at (default: now); fix it for reproducible output",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        home: Path = options["home"]
        verbosity: int = options["verbosity"]
        started = time.perf_counter()
        next_report = _PROGRESS_EVERY

        def progress(done: int) -> None:
            nonlocal next_report
            if verbosity >= 1 and done >= next_report:
                rate = done / max(time.perf_counter() - started, 1e-9)
                self.stderr.write(f"  {done:,} messages ({rate:,.0f}/s)")
                next_report = (done // _PROGRESS_EVERY + 1) * _PROGRESS_EVERY

        try:
            summary = build_demo_home(
                home,
                sessions=options["sessions"],
                messages_per_session=options["messages_per_session"],
                seed=options["seed"],
                big_session_messages=options["big_session"],
                frames_fraction=options["frames_fraction"],
                now_ms=options["now_ms"],
                progress=progress,
            )
        except FileExistsError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo store {summary.store_path}: {summary.sessions:,} sessions, "
                f"{summary.messages:,} messages, {summary.state_rows:,} state rows."
            )
        )
        self.stdout.write(
            f"Activity frames in {summary.frames_root}: {summary.frame_files:,} files.\n"
            f"Built in {summary.seconds:.1f} s "
            f"({summary.messages_per_second:,.0f} messages/s)."
        )
        if options["hostile"]:
            planted = plant_hostile(summary.store_path, summary.frames_root)
            self.stdout.write(
                f"Hostile cases planted: {planted.sessions} sessions, {planted.messages} "
                f"messages, {planted.state_rows} state rows, {planted.frame_entries} frame "
                "entries (start with the sessions named hostile-*)."
            )
