#!/usr/bin/env python
"""Benchmark the review features (issue 20) on the 500,000-session store.

Through the Django test client (server time), with Django's own database in
``var/bench-review`` (never the shared bench folder's):

* a session page with 50 notes on its messages against the same page without
  (target: within 10%);
* ``/sessions/?label=`` with 10,000 labelled sessions (target: under 20 ms),
  saying which path served it: our copies of the sort values (``label copies``,
  what staff get once a ``sync_index`` pass ran: the bench runs the pass's review
  step first, as cron would) or the store's primary-key lookups (``among``).
  It is timed twice: just after the pass, and with the copies' mark moved back
  ``--behind`` messages (the sessions the runtime touched since, read from the
  store: what a page between two passes pays). No side index is used;
* ``POST /reviews/<id>/next/`` on a 10,000-item queue whose first 9,000 are
  reviewed, a new reviewer each time so every call claims (target: under 50 ms);
  the reviewers are staff with "Can annotate", not superusers, so their
  permissions are read as a reviewer's are;
* ``POST /reviews/`` making a 10,000-session queue from ``/sessions/``, which
  walks the list's order once (target: under 3 s).

Usage::

    SESSIONS_ADMIN_BENCH_DIR=/work/benchdata .venv/bin/python bench/bench_review.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402  (path set above)
    bench_home,
    print_table,
    setup_django,
    staff_client,
    timed,
)

LABELLED = 10_000


def _labelled_ids(count: int) -> list[str]:
    from sessions_admin.store.connection import run_sql

    return [r[0] for r in run_sql(f"SELECT id FROM sessions ORDER BY random() LIMIT {count}")]


def _label(ids: list[str]):
    from sessions_admin.models import Label, SessionLabel

    label, created = Label.objects.get_or_create(name="bench")
    if created or SessionLabel.objects.filter(label=label).count() != len(ids):
        SessionLabel.objects.filter(label=label).delete()
        SessionLabel.objects.bulk_create(
            [SessionLabel(session_id=sid, label=label) for sid in ids], batch_size=2000
        )
    return label


def _interleaved(fn_a, fn_b, repeat: int, setup_a=None, setup_b=None):
    """Time ``fn_a`` and ``fn_b`` in turns, so the shared machine's drift hits both alike;
    each one's setup runs before it, untimed. Returns both samples (ms) in turn order:
    ``a[i]`` and ``b[i]`` ran one after the other."""
    a, b = [], []
    turns = ((setup_a, fn_a, a), (setup_b, fn_b, b))
    for _ in range(3):
        for setup, fn, _samples in turns:
            if setup is not None:
                setup()
            fn()
    for _ in range(repeat):
        for setup, fn, samples in turns:
            if setup is not None:
                setup()
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1000)
    return a, b


def bench_notes(client, repeat: int) -> list[list[object]]:
    from sessions_admin.ids import session_url
    from sessions_admin.models import Note
    from sessions_admin.ourdata.storename import current_store
    from sessions_admin.store.connection import run_sql

    (sid,) = run_sql(
        "SELECT session_id FROM session_messages GROUP BY session_id HAVING count(*) "
        "BETWEEN 20 AND 60 LIMIT 1"
    )[0]
    message_ids = [
        r[0] for r in run_sql("SELECT id FROM session_messages WHERE session_id = ?", [sid])
    ]
    url = session_url(sid)
    Note.objects.filter(session_id=sid).delete()
    Note.objects.bulk_create(
        Note(
            session_id=sid,
            message_id=message_ids[n % len(message_ids)],
            text=f"note {n}: see https://example.com/{n}\nsecond line",
            author_name="bench",
        )
        for n in range(50)
    )
    notes = Note.objects.filter(session_id=sid)

    def page() -> None:
        client.get(url)

    # Only the page is timed: the notes are moved to another store's name (not shown)
    # and back before each turn, untimed.
    a, b = _interleaved(
        page,
        page,
        repeat,
        setup_a=lambda: notes.update(store_name="bench-elsewhere"),
        setup_b=lambda: notes.update(store_name=current_store()),
    )
    notes.delete()
    # Two readings of the same ratio: of the two medians, and the median of each turn's
    # own ratio (its two pages ran a few milliseconds apart, so the machine's drift
    # between turns, as large as the notes' cost on this 2-core machine, cancels out).
    ratio = statistics.median(b) / statistics.median(a)
    paired = statistics.median(with_ / without for without, with_ in zip(a, b, strict=True))
    a, b = sorted(a), sorted(b)
    return [
        ["session page, no notes", statistics.median(a), a[int(0.95 * (len(a) - 1))], ""],
        [
            "session page, 50 notes",
            statistics.median(b),
            b[int(0.95 * (len(b) - 1))],
            f"×{ratio:.2f}, turn by turn ×{paired:.2f} (goal ≤ ×1.10)",
        ],
    ]


def bench_label(client, repeat: int, behind: int) -> list[list[object]]:
    from sessions_admin.lists.labelled import labelled_page
    from sessions_admin.models import Label, LabelCopiesMark
    from sessions_admin.ourdata.review import labels
    from sessions_admin.ourdata.review.forget import forget_gone
    from sessions_admin.store import feed
    from sessions_admin.store.queries import SessionFilter

    label = Label.objects.get(name="bench")
    started = time.perf_counter()
    forget_gone()  # the review step of a sync_index pass: copies refreshed, mark set
    pass_ms = (time.perf_counter() - started) * 1000
    rows = [["sync pass's review step (10,000 labels)", pass_ms, pass_ms, ""]]
    mark = labels.copies_mark()
    for lag in (0, behind):
        LabelCopiesMark.objects.update(message_id=mark - lag)
        touched = feed.sessions_touched_after(mark - lag, 10**9) or set()
        strategy = labelled_page(label, SessionFilter(), "-last_active", None).strategy
        page = timed(lambda: client.get("/sessions/?label=bench"), repeat=repeat)
        rows.append(
            [
                f"/sessions/?label= ({strategy}, {lag:,} messages behind, "
                f"{len(touched):,} sessions)",
                page["median"],
                page["p95"],
                "goal < 20 ms",
            ]
        )
    LabelCopiesMark.objects.update(message_id=mark)
    ids = timed(lambda: labels.session_ids_with(label), repeat=repeat)
    exact = timed(
        lambda: labelled_page(label, SessionFilter(), "-last_active", None, exact=True),
        repeat=max(3, repeat // 4),
    )
    rows += [
        ["  the exact way (every labelled session read)", exact["median"], exact["p95"], ""],
        ["  of which: the label's 10,000 ids", ids["median"], ids["p95"], ""],
    ]
    return rows


def bench_queue(client, ids: list[str], repeat: int) -> list[list[object]]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.test import Client

    from sessions_admin.models import ReviewItem, ReviewQueue
    from sessions_admin.ourdata.review import queues

    ReviewQueue.objects.filter(name__startswith="bench").delete()
    started = time.perf_counter()
    response = client.post("/reviews/", {"name": "bench list", "source": "/sessions/"})
    make_ms = (time.perf_counter() - started) * 1000
    assert response.status_code == 303, response.content[:300]
    made = ReviewQueue.objects.get(name="bench list")
    queue = queues.make_queue("bench next", "/sessions/", ids, capped=False, user=None)
    first = ReviewItem.objects.filter(queue=queue, position__lt=9_000)
    first.update(verdict="pass")
    users = get_user_model()
    # Reviewers as staff are: permissions from the database, not a superuser's shortcut.
    allowed = Permission.objects.filter(codename__in=["view_session", "annotate"])
    clients = []
    for n in range(2 * repeat + 3):
        user, created = users.objects.get_or_create(
            username=f"bench-staff-r{n}", defaults={"is_staff": True}
        )
        if created:
            user.user_permissions.add(*allowed)
        reviewer = Client()
        reviewer.force_login(user)
        clients.append(reviewer)
    pool = iter(clients)
    claim = timed(lambda: next(pool).post(f"/reviews/{queue.pk}/next/"), repeat=repeat, warmup=3)
    people = iter(users.objects.filter(username__startswith="bench-staff-r").order_by("-pk"))
    alone = timed(lambda: queues.claim_next(queue, next(people)), repeat=repeat, warmup=0)
    page = timed(lambda: client.get("/reviews/"), repeat=repeat)
    return [
        [f"POST /reviews/ ({made.total:,} sessions)", make_ms, make_ms, "goal < 3 s"],
        ["POST next (10,000 items, 9,000 done)", claim["median"], claim["p95"], "goal < 50 ms"],
        ["  of which: claim_next()", alone["median"], alone["p95"], ""],
        ["GET /reviews/ (its queues' 20,000 items tallied)", page["median"], page["p95"], ""],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument(
        "--notes-repeat",
        type=int,
        default=200,
        help="turns of the 50-notes comparison (its ratio is read from two medians)",
    )
    parser.add_argument(
        "--behind",
        type=int,
        default=5000,
        help="messages since the last pass for the second ?label= timing",
    )
    args = parser.parse_args()
    os.environ.setdefault("SESSIONS_ADMIN_VAR_DIR", str(ROOT / "var" / "bench-review"))
    Path(os.environ["SESSIONS_ADMIN_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    setup_django(bench_home())
    client = staff_client()
    ids = _labelled_ids(LABELLED)
    _label(ids)
    rows = bench_notes(client, args.notes_repeat)
    rows += bench_label(client, args.repeat, args.behind)
    rows += bench_queue(client, ids, args.repeat)
    print_table("review (ms)", ["what", "median", "p95", "note"], rows)


if __name__ == "__main__":
    main()
