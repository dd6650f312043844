"""A receipt references its audit row (one-to-one, protected) instead of keeping its number."""

import django.db.models.deletion
from django.db import migrations, models


def carry_the_numbers_over(apps, schema_editor):
    db = schema_editor.connection.alias
    Erasure = apps.get_model("sessions_admin", "Erasure")
    DeletionAudit = apps.get_model("sessions_admin", "DeletionAudit")
    known = set(DeletionAudit.objects.using(db).values_list("pk", flat=True))
    for receipt in Erasure.objects.using(db).exclude(old_audit_id=None):
        if receipt.old_audit_id in known:  # a number naming no row stays unlinked
            receipt.audit_id = receipt.old_audit_id
            receipt.save(update_fields=["audit"])


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_admin", "0010_review_rules"),
    ]

    operations = [
        migrations.RenameField("erasure", "audit_id", "old_audit_id"),
        migrations.AddField(
            model_name="erasure",
            name="audit",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="receipt",
                to="sessions_admin.deletionaudit",
            ),
        ),
        migrations.RunPython(carry_the_numbers_over, migrations.RunPython.noop),
        migrations.RemoveField("erasure", "old_audit_id"),
    ]
