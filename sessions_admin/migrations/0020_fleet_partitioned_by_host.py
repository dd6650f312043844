"""On PostgreSQL, the fleet's directory partitioned by host (``PARTITION BY LIST (host_id)``).

Each host gets a partition of its own when it first publishes
(:func:`sessions_admin.ourdata.fleet.publish.partition_for`); rows of a host without
one (none, once this has run) go to the default partition. A host's republish and
sweep then touch only its partition, and a host taken out of the fleet is one
``DROP TABLE``. PostgreSQL asks that every unique constraint of a partitioned table
hold its partition key, so the primary key here is ``(id, host_id)``; ``id`` stays
unique by its sequence, and Django goes on using it as the primary key. Django's
migrations make no partitioned table: this one rebuilds the table by hand, keeping
every name Django gave its constraints and indexes. SQLite keeps the plain table.
"""

from django.db import migrations

TABLE = "sessions_admin_fleetsession"
#: The plain table's identity keeps its own sequence's name until it is dropped.
SEQUENCE = f"{TABLE}_partitioned_id_seq"
COLUMNS = (
    "id, host_id, key, session_id, target, profile, principal, principal_key, title, "
    "created_at, last_active, newest, messages, tool_calls, failed_calls"
)


def partition(apps, schema_editor) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {TABLE}_plain")
        for name in ("fleet_session_newest", "fleet_session_host_newest",
                     "fleet_session_principal", "fleet_session_target",
                     "fleet_session_title_trgm", f"{TABLE}_host_id_e544345f"):  # fmt: skip
            cursor.execute(f"ALTER INDEX IF EXISTS {name} RENAME TO {name}_plain")
        cursor.execute(
            f"ALTER TABLE {TABLE}_plain RENAME CONSTRAINT fleet_session_once_per_host "
            "TO fleet_session_once_per_host_plain"
        )
        cursor.execute(
            f"ALTER TABLE {TABLE}_plain RENAME CONSTRAINT fleet_session_counts_add_up "
            "TO fleet_session_counts_add_up_plain"
        )
        cursor.execute(f"ALTER TABLE {TABLE}_plain RENAME CONSTRAINT {TABLE}_pkey TO {TABLE}_pkey_plain")
        cursor.execute(f"CREATE SEQUENCE {SEQUENCE}")
        cursor.execute(
            f"CREATE TABLE {TABLE} ("
            f"id bigint NOT NULL DEFAULT nextval('{SEQUENCE}'), "
            "host_id bigint NOT NULL, key varchar(64) NOT NULL, session_id text NOT NULL, "
            "target varchar(300) NOT NULL, profile varchar(300) NOT NULL, "
            "principal varchar(300) NOT NULL, principal_key varchar(64) NOT NULL, "
            "title varchar(300) NOT NULL, created_at bigint NULL, last_active bigint NULL, "
            "newest bigint NOT NULL, messages bigint NOT NULL, tool_calls bigint NOT NULL, "
            "failed_calls bigint NOT NULL, "
            f"CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, host_id), "
            "CONSTRAINT fleet_session_once_per_host UNIQUE (host_id, key), "
            "CONSTRAINT fleet_session_counts_add_up CHECK (messages >= 0 AND tool_calls >= 0 "
            "AND failed_calls >= 0 AND failed_calls <= tool_calls)"
            ") PARTITION BY LIST (host_id)"
        )
        cursor.execute(f"ALTER SEQUENCE {SEQUENCE} OWNED BY {TABLE}.id")
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")
        cursor.execute("SELECT id FROM sessions_admin_fleethost")
        for (host,) in cursor.fetchall():
            cursor.execute(
                f"CREATE TABLE {TABLE}_h{int(host)} PARTITION OF {TABLE} FOR VALUES IN ({int(host)})"
            )
        cursor.execute(f"INSERT INTO {TABLE} ({COLUMNS}) SELECT {COLUMNS} FROM {TABLE}_plain")
        cursor.execute(
            f"SELECT setval('{SEQUENCE}', coalesce((SELECT max(id) FROM {TABLE}), 0) + 1, false)"
        )
        cursor.execute(f"DROP TABLE {TABLE}_plain")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT sessions_admin_fleet_host_id_e544345f_fk_sessions_ "
            "FOREIGN KEY (host_id) REFERENCES sessions_admin_fleethost (id) "
            "DEFERRABLE INITIALLY DEFERRED"
        )
        cursor.execute(f"CREATE INDEX sessions_admin_fleetsession_host_id_e544345f ON {TABLE} (host_id)")
        cursor.execute(f"CREATE INDEX fleet_session_newest ON {TABLE} (newest DESC, id DESC)")
        cursor.execute(
            f"CREATE INDEX fleet_session_host_newest ON {TABLE} (host_id, newest DESC, id DESC)"
        )
        cursor.execute(
            f"CREATE INDEX fleet_session_principal ON {TABLE} (principal_key, newest DESC, id DESC)"
        )
        cursor.execute(f"CREATE INDEX fleet_session_target ON {TABLE} (target, newest DESC, id DESC)")
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone():
            cursor.execute(
                f"CREATE INDEX fleet_session_title_trgm ON {TABLE} "
                "USING gin ((UPPER(title::text)) gin_trgm_ops)"
            )


class Migration(migrations.Migration):
    dependencies = [("sessions_admin", "0019_fleet_title_trigrams")]

    # Not reversible: going back would need the plain table rebuilt the same way.
    operations = [migrations.RunPython(partition, migrations.RunPython.noop)]
