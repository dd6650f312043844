"""On PostgreSQL, a trigram index for the fleet's title filter (``?q=``).

``title__icontains`` reads ``UPPER(title::text) LIKE UPPER('%…%')``: without an index
PostgreSQL walks the newest sessions testing each title, 75 ms for a title's word on
ten hosts of 500,000 sessions (``bench/bench_fleet.py``). pg_trgm is a trusted
extension (PostgreSQL 13+): the database's owner may create it. Where it cannot be
created the index is left out and the filter still answers, only slower. SQLite (one
machine's demo) has no such index.
"""

from django.db import migrations, transaction

INDEX = "fleet_session_title_trgm"


def add_index(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except Exception:  # no right to create it: the filter works without the index
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON sessions_admin_fleetsession "
            "USING gin ((UPPER(title::text)) gin_trgm_ops)"
        )


def drop_index(apps, schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("sessions_admin", "0018_fleet_erasure")]

    operations = [migrations.RunPython(add_index, drop_index)]
