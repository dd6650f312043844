"""``manage.py run_jobs``: the worker that carries out erasures and clear-alls.

``scripts/serve-with-sync`` starts it beside the server, as it starts
``sync_index --follow``. SIGTERM or Ctrl-C stops it after the step under way
(recorded, so the next start goes on from there); ``kill -9`` loses nothing
either: the next start takes the job over at once. ``--once`` carries out the
jobs waiting now and exits.
"""

from __future__ import annotations

import signal

from django.core.management.base import BaseCommand

from sessions_admin.deletion.worker import work


class Command(BaseCommand):
    help = "Carry out this store's erasures and clear-alls (a worker beside the server)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--once", action="store_true", help="run what waits now, then exit")
        parser.add_argument(
            "--poll", type=float, default=1.0, help="seconds between looks when idle (default 1)"
        )

    stopping = False

    def _stop(self, signum: int, frame: object) -> None:
        # A plain flag, as sync_index keeps: a handler must take no lock. With a
        # threading.Event, Ctrl-C to the group and serve-with-sync's SIGTERM right
        # after it interrupted the first handler inside Event.set, and the second
        # waited for the lock the first held: the worker hung for good.
        self.stopping = True

    def handle(self, *args, once: bool, poll: float, **options) -> None:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        done = work(lambda: self.stopping, poll_s=max(0.05, poll), once=once)
        if options["verbosity"] > 0:
            self.stdout.write(f"run_jobs: {done} job{'s' if done != 1 else ''} finished")
