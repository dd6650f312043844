"""End to end: ``sync_index`` keeps the rollups equal to the store through appends and deletes."""

from __future__ import annotations

from random import Random

import pytest
from django.core.management import call_command

from sessions_admin.ourdata import sidedb, sync
from tests import rollupdata as R
from tests.conftest import STORE_DB
from tests.rollupdata import assert_rollups_match


@pytest.fixture
def var(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


def _side():
    return sidedb.connect(create=False)


@STORE_DB
def test_sync_index_builds_the_rollups(store, var):
    R.fill_store(store, Random(31), sessions=8)
    call_command("sync_index", verbosity=0)
    side = _side()
    assert_rollups_match(side, store)
    side.close()


@STORE_DB
def test_rollups_follow_new_messages_and_runtime_deletes_after_a_sync(store, var):
    rng = Random(32)
    R.fill_store(store, rng, sessions=6)
    sync.sync_once(batch_size=13)
    R.fill_store(store, rng, sessions=3)
    # The runtime's own cascade, behind the dashboard's back.
    victim = store.execute("SELECT id FROM sessions ORDER BY id LIMIT 1")[0][0]
    with store.connect() as conn:
        conn.execute("DELETE FROM session_messages WHERE session_id = ?", (victim,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (victim,))
    report = sync.sync_once(batch_size=13)
    assert report.sessions_forgotten == 1
    side = _side()
    assert_rollups_match(side, store)
    side.close()


@STORE_DB
def test_a_dashboard_delete_is_subtracted_at_once(store, var):
    from sessions_admin import deletion

    R.fill_store(store, Random(33), sessions=5)
    sync.sync_once()
    victim = store.execute("SELECT id FROM sessions ORDER BY id DESC LIMIT 1")[0][0]
    deletion.delete_session(victim, actor=deletion.Actor.command("test"))
    side = _side()
    assert_rollups_match(side, store)
    side.close()
