"""Migrations carry our rows over, on SQLite and on PostgreSQL (``ourdb``).

Each test goes back to the migration before a change, writes rows as the
older code could, goes forward again and reads them as the new code does.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from sessions_admin.ourdata.review.models import EarlierVerdict, Note, ReviewItem

pytestmark = pytest.mark.django_db(transaction=True)

APP = "sessions_admin"


def migrate(target: str):
    """Migrate Django's database to ``target``; returns the app registry as it was there."""
    executor = MigrationExecutor(connection)
    executor.migrate([(APP, target)])
    executor.loader.build_graph()
    return executor.loader.project_state([(APP, target)]).apps


def latest() -> str:
    executor = MigrationExecutor(connection)
    return max(name for app, name in executor.loader.graph.leaf_nodes() if app == APP)


def test_rows_that_break_the_review_rules_are_settled_and_the_rules_then_hold():
    old = migrate("0009_store_ids_exact")
    user = old.get_model("auth", "User").objects.create(username="r")
    queue = old.get_model(APP, "ReviewQueue").objects.create(name="q", source="/sessions/")
    item = old.get_model(APP, "ReviewItem")
    now = timezone.now()
    stray = item.objects.create(
        queue=queue, session_id="a\x00b", position=0, reviewed_at=now
    )  # a time, no verdict
    held = item.objects.create(queue=queue, session_id="s2", position=1, claimed_by=user)
    judged = item.objects.create(
        queue=queue, session_id="s3", position=2, verdict="pass", reviewed_at=now
    )
    old.get_model(APP, "EarlierVerdict").objects.create(
        item=judged, verdict="fail", reviewed_at=now, replaced_at=now - timedelta(hours=1)
    )
    note = old.get_model(APP, "Note").objects.create(session_id="s3", text="", author_name="r")
    old.get_model(APP, "Note").objects.filter(pk=note.pk).update(
        edited_at=note.created_at - timedelta(minutes=5)
    )

    migrate(latest())

    stray_now = ReviewItem.objects.get(pk=stray.pk)
    assert stray_now.reviewed_at is None and stray_now.session_id == "a\x00b"
    assert ReviewItem.objects.get(pk=held.pk).claimed_at is not None
    assert ReviewItem.objects.get(pk=judged.pk).verdict == "pass"
    earlier = EarlierVerdict.objects.get()
    assert earlier.replaced_at >= earlier.reviewed_at
    kept = Note.objects.get(pk=note.pk)
    assert kept.text == "(empty note)" and kept.edited_at >= kept.created_at


def test_the_review_rules_refuse_what_they_forbid():
    from django.db import IntegrityError, transaction

    from sessions_admin.ourdata.review.models import ReviewQueue

    queue = ReviewQueue.objects.create(name="q", source="/sessions/")
    for bad in ({"reviewed_at": timezone.now()}, {"verdict": "maybe"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            ReviewItem.objects.create(queue=queue, session_id="s", **{"position": 0, **bad})
    with pytest.raises(IntegrityError), transaction.atomic():
        Note.objects.create(session_id="s", text="", author_name="r")


def test_a_receipts_audit_number_becomes_a_reference_and_a_dangling_one_stays_unlinked():
    old = migrate("0010_review_rules")
    audit = old.get_model(APP, "DeletionAudit").objects.create(
        actor="t", operation="erase_principal", target={"principal": "p\x00q"}
    )
    erasure = old.get_model(APP, "Erasure")
    now = timezone.now()
    linked = erasure.objects.create(principal="p␀q", actor="t", started_at=now, audit_id=audit.pk)
    dangling = erasure.objects.create(principal="x", actor="t", started_at=now, audit_id=10**9)

    migrate(latest())

    from django.db.models import ProtectedError

    from sessions_admin.ourdata.audit import DeletionAudit
    from sessions_admin.ourdata.erasures import Erasure

    assert Erasure.objects.get(pk=linked.pk).audit == DeletionAudit.objects.get(pk=audit.pk)
    assert DeletionAudit.objects.get(pk=audit.pk).receipt.pk == linked.pk
    # Since 0022 every receipt has an audit row: the dangling one got its own.
    made = Erasure.objects.get(pk=dangling.pk).audit
    assert made.pk != audit.pk and made.operation == "erase_principal" and made.actor == "t"
    with pytest.raises(ProtectedError):
        DeletionAudit.objects.get(pk=audit.pk).delete()  # a receipt keeps its audit


def test_the_ids_an_audit_lists_become_rows_found_by_an_index():
    old = migrate("0011_erasure_audit_reference")
    audit = old.get_model(APP, "DeletionAudit").objects.create(
        actor="t", operation="delete_filtered", target={"session_ids": ["a\x00b", "s2", "s2"]}
    )
    other = old.get_model(APP, "DeletionAudit").objects.create(
        actor="t", operation="clear_all", target={"filter": {}}
    )

    migrate(latest())

    from sessions_admin.ourdata.audit import AuditSession, audits_naming, forget_session_ids

    assert sorted(
        AuditSession.objects.filter(audit_id=audit.pk).values_list("session_id", flat=True)
    ) == ["a\x00b", "s2"]
    assert not AuditSession.objects.filter(audit_id=other.pk).exists()
    assert audits_naming(["a\x00b"]) == 1 and audits_naming(["nope"]) == 0
    assert forget_session_ids(["a\x00b"], "erasure 1") == 1
    assert audits_naming(["a\x00b"]) == 0 and audits_naming(["s2"]) == 1


def test_a_receipts_counts_move_to_its_audit_row_and_read_the_same():
    old = migrate("0021_job_compacting")
    user = old.get_model("auth", "User").objects.create(username="dpo")
    audits, erasure = old.get_model(APP, "DeletionAudit"), old.get_model(APP, "Erasure")
    earlier = timezone.now() - timedelta(days=3)
    audit = audits.objects.create(actor="job", operation="erase_principal", sessions_deleted=1)
    figures = dict(sessions=7, messages=70, state_rows=3, frame_bytes=4096, notes=2, labels=1,
                   review_items=5)  # fmt: skip
    linked = erasure.objects.create(
        principal="user:a\u2400b", principal_key="x:757365723a610062", actor="dpo", user=user,
        started_at=earlier, finished_at=earlier + timedelta(minutes=1), status="ok",
        frame_dirs=4, audit=audit, **figures,
    )  # fmt: skip
    alone = erasure.objects.create(
        principal="user:c", actor="cli", started_at=earlier, status="partial", detail="left: 1",
        sessions=9, frame_dirs=2,
    )  # fmt: skip

    migrate(latest())

    from sessions_admin.ourdata.erasures import Erasure

    now_linked = Erasure.objects.get(pk=linked.pk)
    assert now_linked.audit.pk == audit.pk
    for name, value in figures.items():
        assert getattr(now_linked, name) == value, name
    assert (now_linked.actor, now_linked.user.username) == ("dpo", "dpo")
    assert now_linked.started_at == earlier and now_linked.frame_dirs == 4
    assert now_linked.finished_at == earlier + timedelta(minutes=1)
    now_alone = Erasure.objects.get(pk=alone.pk)
    assert (now_alone.sessions, now_alone.actor, now_alone.started_at) == (9, "cli", earlier)
    assert now_alone.audit.outcome == "partial" and now_alone.frame_dirs == 2
    assert now_alone.as_json()["erased"]["sessions"] == 9
