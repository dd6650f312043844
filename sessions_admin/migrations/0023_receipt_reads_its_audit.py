"""A receipt reads who, when and what from its audit row instead of copying them
(0022 carried its values there)."""

from django.db import migrations, models
import django.db.models.deletion


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_admin", "0022_receipt_counts_to_audit"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="erasure",
            options={
                "default_permissions": ("view",),
                "ordering": ["-id"],
                "permissions": [("erase_principal", "Can erase a principal's data")],
            },
        ),
        *[
            migrations.RemoveField(model_name="erasure", name=name)
            for name in (
                "started_at",
                "finished_at",
                "user",
                "actor",
                "sessions",
                "messages",
                "state_rows",
                "frame_bytes",
                "notes",
                "labels",
                "review_items",
            )
        ],
        migrations.AlterField(
            model_name="erasure",
            name="audit",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="receipt",
                to="sessions_admin.deletionaudit",
            ),
        ),
    ]
