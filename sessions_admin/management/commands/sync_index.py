"""``manage.py sync_index``: build the side index and keep it current.

    sync_index                 one pass (from cron: every minute is fine)
    sync_index --follow        a pass every --interval seconds until stopped
    sync_index --rebuild       forget everything, then build from the first message
    sync_index --verify        compare the index and rollups with the store; exit 1 on drift

Each pass forgets the sessions the store no longer holds (in the side index,
and in our notes, labels and review queues: :func:`review.forget.forget_gone`),
then takes in the messages after the last indexed id, in batches that each commit on their own:
Ctrl-C (or SIGTERM) stops after the current batch, and the next run resumes
there. On a terminal a first build shows a progress bar with rate and ETA.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from sessions_admin.deletion.fleet import carry_out_parts
from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.ourdata.fleet.publish import publish_after_pass
from sessions_admin.ourdata.review import forget as review_forget
from sessions_admin.sqlhelpers import BEFORE_FIRST_ID
from sessions_admin.store.connection import StoreError, describe_database_error


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def progress_line(progress: sync.Progress, width: int = 30) -> str:
    """``[#####-----]  45%  4,500,000/10,012,038 messages  42,311/s  ETA 2m10s``"""
    share = progress.done / progress.total if progress.total else 1.0
    filled = int(width * min(share, 1.0))
    return (
        f"[{'#' * filled}{'-' * (width - filled)}] {share:4.0%}  "
        f"{progress.done:,}/{progress.total:,} messages  {progress.rate:,.0f}/s  "
        f"ETA {_duration(progress.eta_s)}"
    )


class Command(BaseCommand):
    help = "Build and update the search index (and every other side-data consumer)."
    # It reads the store and writes only the side database: Django's own
    # database and the system checks are irrelevant (and cron runs it often).
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser) -> None:
        parser.add_argument("--rebuild", action="store_true", help="start over from scratch")
        parser.add_argument("--follow", action="store_true", help="keep syncing in a loop")
        parser.add_argument(
            "--interval", type=float, default=10.0, help="seconds between --follow passes"
        )
        parser.add_argument(
            "--batch-size", type=int, default=sync.BATCH_SIZE, help="messages per transaction"
        )
        parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="compare the index and the rollups with the store; exit 1 on any drift",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch_size"] < 1 or options["interval"] <= 0:
            raise CommandError("--batch-size and --interval must be positive.")
        try:
            sidedb.driver()
            sidedb.side_path()
        except sidedb.SideDatabaseUnavailable as exc:
            raise CommandError(str(exc)) from None
        if options["verify"]:
            self._verify(options)
            return
        self.stopping = False
        previous = signal.signal(signal.SIGTERM, self._stop)
        try:
            if options["rebuild"]:
                sync.rebuild()
                self._say(options, f"Forgot the index in {sidedb.side_path()}; building anew.")
            while True:
                self._pass(options)
                if not options["follow"] or self.stopping:
                    break
                deadline = time.monotonic() + options["interval"]
                while time.monotonic() < deadline and not self.stopping:
                    time.sleep(min(0.5, options["interval"]))
                if self.stopping:
                    break
        except KeyboardInterrupt:
            self._say(options, "\nStopped; the next sync_index resumes after the last batch.")
        finally:
            signal.signal(signal.SIGTERM, previous)

    def _verify(self, options: dict[str, Any]) -> None:
        try:
            verdict = verify.verify()
        except sidedb.PassRunning as exc:
            raise CommandError(str(exc)) from None
        except StoreError as exc:
            raise CommandError(exc.message) from None
        for line in verdict.lines():
            self.stdout.write(line)
        self._say(
            options,
            f"Checked {verdict.sessions:,} sessions and {verdict.calls:,} tool calls up to "
            f"{_message(verdict.last_id)}; {verdict.pending:,} session rows changed since the "
            "last pass (the next pass takes them in).",
        )
        if not verdict.ok:
            raise CommandError(
                f"The side index drifted from the store ({sum(verdict.counts.values()):,} "
                "differences above): run sync_index --rebuild."
            )
        self._say(options, "No drift: the index and the rollups equal the store.")

    def _forget_reviews(self, options: dict[str, Any]) -> None:
        """The runtime's deletes reach our review records here (the dashboard's own
        deletes forget them at once, in ``deletion.cascade``)."""
        try:
            forgotten, gone = review_forget.forget_gone()
        except StoreError as exc:
            raise CommandError(exc.message) from None
        except Exception as exc:
            if not type(exc).__module__.startswith("django.db"):
                raise
            # Django's database down is no reason to stop indexing: the next pass retries.
            self.stderr.write(f"Review records not checked this pass: {exc}")
            return
        if forgotten.any:
            self._say(
                options,
                f"{gone:,} annotated sessions are gone from the store: deleted "
                f"{forgotten.notes:,} notes and {forgotten.labels:,} labels, marked "
                f"{forgotten.items:,} queue items.",
            )

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True

    def _say(self, options: dict[str, Any], text: str) -> None:
        if not options["quiet"]:
            self.stdout.write(text)

    def _pass(self, options: dict[str, Any]) -> None:
        tty = sys.stdout.isatty() and not options["quiet"]
        shown = [0.0]

        def on_progress(progress: sync.Progress) -> None:
            now = time.monotonic()
            if tty and (now - shown[0] > 0.2 or progress.done >= progress.total):
                shown[0] = now
                self.stdout.write("\r" + progress_line(progress), ending="")
                self.stdout.flush()

        try:
            report = sync.sync_once(
                batch_size=options["batch_size"],
                on_progress=on_progress,
                should_stop=lambda: self.stopping,
            )
        except sidedb.PassRunning as exc:
            # Cron beside --follow, or two cron lines: the running pass does the
            # work, this one has nothing to add. Not an error.
            self._say(options, str(exc))
            return
        except StoreError as exc:
            raise CommandError(exc.message) from None
        except sync.SideLayoutChanged as exc:
            raise CommandError(str(exc)) from None
        except Exception as exc:
            if type(exc).__module__.startswith(("sqlite3", "pysqlite3", "django.db")):
                raise CommandError(describe_database_error(exc).message) from None
            raise
        self._forget_reviews(options)
        self._publish(options, report)
        if tty and report.batches:
            self.stdout.write("")
        state = "stopped early; run again to resume" if report.interrupted else "up to date"
        if report.messages or report.sessions_forgotten or not options["follow"]:
            rate = report.messages / report.seconds if report.seconds else 0
            self._say(
                options,
                f"Indexed {report.messages:,} new messages ({rate:,.0f}/s), forgot "
                f"{report.sessions_forgotten:,} deleted sessions, up to "
                f"{_message(report.last_id)} in {report.seconds:.1f} s: {state}.",
            )

    def _publish(self, options: dict[str, Any], report: sync.SyncReport) -> None:
        """This host's share of the fleet's directory (when it publishes to one)."""
        if report.interrupted:
            return
        published = publish_after_pass()
        if published is None:
            return
        if not published.error and (taken := carry_out_parts()):
            self._say(
                options,
                f"Fleet erasures: {taken} part{'s' if taken != 1 else ''} of this host moved on.",
            )
        if published.error:
            self._say(
                options,
                f"The fleet's directory could not be written ({published.error}); this "
                "host's index is current, and the next pass publishes what waits.",
            )
        elif published.written or published.removed or not options["follow"]:
            self._say(
                options,
                f"Published {published.written:,} sessions to the fleet's directory, "
                f"removed {published.removed + published.swept:,}, in "
                f"{published.seconds:.1f} s.",
            )


def _message(last_id: int) -> str:
    """The sync's mark as a sentence says it."""
    return "no message yet" if last_id == BEFORE_FIRST_ID else f"message #{last_id:,}"
