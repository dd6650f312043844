"""A receipt's copies of its audit's columns go to the audit row (0023 drops them).

Each receipt's own values go to its audit row first (the receipt is what staff
attached to a ticket: its figures must read the same after the migration); a
receipt without an audit row (one from before receipts referenced theirs, whose
number pointed nowhere) gets one made from its own columns.
"""

from django.db import migrations

#: Receipt column -> audit column, for the columns the receipt stops keeping.
CARRIED = {
    "started_at": "started_at",
    "finished_at": "finished_at",
    "user_id": "user_id",
    "actor": "actor",
    "sessions": "sessions_deleted",
    "messages": "messages_deleted",
    "state_rows": "state_deleted",
    "frame_bytes": "frame_bytes_removed",
    "notes": "notes_deleted",
    "labels": "labels_removed",
    "review_items": "review_items_marked",
}
OUTCOME = {"queued": "running", "running": "running", "ok": "ok", "partial": "partial",
           "refused": "refused"}  # fmt: skip


def carry_into_audits(apps, schema_editor):
    Erasure = apps.get_model("sessions_admin", "Erasure")
    DeletionAudit = apps.get_model("sessions_admin", "DeletionAudit")
    for receipt in Erasure.objects.all().iterator():
        values = {audit: getattr(receipt, column) for column, audit in CARRIED.items()}
        if receipt.audit_id is None:
            audit = DeletionAudit.objects.create(
                store_name=receipt.store_name,
                operation="erase_principal",
                target={"principal": receipt.principal},
                outcome=OUTCOME.get(receipt.status, "partial"),
                detail=f"receipt {receipt.pk}: {receipt.detail}".rstrip(": "),
                frame_dirs_removed=receipt.frame_dirs,
                actor=receipt.actor,
            )
            Erasure.objects.filter(pk=receipt.pk).update(audit_id=audit.pk)
            receipt.audit_id = audit.pk
        # An update: started_at is auto_now_add, which save() would not take.
        DeletionAudit.objects.filter(pk=receipt.audit_id).update(**values)


def carry_back(apps, schema_editor):
    Erasure = apps.get_model("sessions_admin", "Erasure")
    for receipt in Erasure.objects.select_related("audit").iterator():
        values = {column: getattr(receipt.audit, audit) for column, audit in CARRIED.items()}
        Erasure.objects.filter(pk=receipt.pk).update(**values)


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_admin", "0021_job_compacting"),
    ]

    # Its own migration (one transaction on PostgreSQL): the tables are altered in the
    # next, as PostgreSQL refuses an ALTER TABLE with this one's row triggers pending.
    operations = [migrations.RunPython(carry_into_audits, carry_back)]
