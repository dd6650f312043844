from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_admin", "0007_erasure_principal_key"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewqueue",
            name="skipped",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
