import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_admin", "0005_jobs"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="EarlierVerdict",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "verdict",
                    models.CharField(
                        choices=[("pass", "pass"), ("fail", "fail"), ("skip", "skip")], max_length=8
                    ),
                ),
                ("text", models.TextField(blank=True, max_length=10000)),
                ("reviewer_name", models.CharField(blank=True, max_length=150)),
                ("reviewed_at", models.DateTimeField(blank=True, null=True)),
                ("by_manager", models.BooleanField(default=False)),
                ("replaced_at", models.DateTimeField()),
            ],
            options={
                "ordering": ["item", "replaced_at", "id"],
                "default_permissions": (),
            },
        ),
        migrations.AddField(
            model_name="reviewitem",
            name="by_manager",
            field=models.BooleanField(default=False),
        ),
        migrations.AddConstraint(
            model_name="reviewitem",
            constraint=models.CheckConstraint(
                condition=models.Q(("verdict__in", ["", "pass", "fail", "skip"])),
                name="review_item_verdict",
            ),
        ),
        migrations.AddField(
            model_name="earlierverdict",
            name="item",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="earlier_verdicts",
                to="sessions_admin.reviewitem",
            ),
        ),
        migrations.AddField(
            model_name="earlierverdict",
            name="reviewer",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddConstraint(
            model_name="earlierverdict",
            constraint=models.CheckConstraint(
                condition=models.Q(("verdict__in", ["pass", "fail", "skip"])),
                name="earlier_verdict_verdict",
            ),
        ),
    ]
