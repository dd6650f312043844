"""Our records belong to their store: a copy of the store never reaches the real one's rows.

The loss this guards against: with the same data folder pointed at a copy of
the store, a clear-all on the copy wiped the real store's notes and marked its
queue items "session deleted", because both went by the host's name.
"""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from sessions_admin import deletion
from sessions_admin.models import Note
from sessions_admin.ourdata import storename
from sessions_admin.ourdata.storename import current_store, identity_problem, read_identity
from sessions_admin.store.connection import StoreError
from tests.conftest import STORE_DB, point_store_at
from tests.deletion_rows import ACTOR, annotate, fill


@pytest.fixture
def checked(settings, var_dir):
    """The identity check on, with a data folder of this test's own."""
    settings.STORE_IDENTITY_CHECK = True
    settings.STORE_NAME = None
    storename._cache.clear()
    yield var_dir
    storename._cache.clear()


def copy_of(store, tmp_path):
    """A copy of the store's file in another host home, as staff make one to try something."""
    copy = tmp_path / "copy-home" / "data" / "agents" / "store.db"
    copy.parent.mkdir(parents=True)
    shutil.copy(store.path, copy)
    return copy


@STORE_DB
def test_a_clear_all_on_a_copy_never_touches_the_real_stores_notes(store, tmp_path, checked):
    ids = fill(store, 3)
    items = [annotate(sid) for sid in ids]
    real_name = current_store()
    point_store_at(copy_of(store, tmp_path))
    with pytest.raises(StoreError, match="was made for the store"):
        deletion.clear_all(actor=ACTOR)
    # The copy goes by a name of its own, so even a delete that got through could not
    # reach the real store's rows.
    assert current_store() != real_name
    point_store_at(store.path)
    assert Note.objects.filter(store_name=real_name).count() == 6
    for item in items:
        item.refresh_from_db()
        assert not item.session_deleted and item.text == "broke the deploy"
    assert store.count("sessions") == 3


@STORE_DB
def test_the_pages_and_the_check_refuse_a_store_the_folder_was_not_made_for(
    store, tmp_path, checked, staff_client
):
    fill(store, 1)
    assert identity_problem() == ""
    point_store_at(copy_of(store, tmp_path))
    page = staff_client.get("/sessions/")
    assert page.status_code == 503
    assert "adopt_store" in page.content.decode()
    with pytest.raises(SystemCheckError, match="was made for the store"):
        call_command("check")


@STORE_DB
def test_adopt_store_lets_a_moved_store_keep_its_rows(store, tmp_path, checked):
    (sid,) = fill(store, 1)
    annotate(sid)
    name = current_store()
    moved = tmp_path / "moved.db"
    shutil.move(store.path, moved)
    point_store_at(moved)
    assert "was made for the store" in identity_problem()
    call_command("adopt_store", stdout=io.StringIO())
    assert identity_problem() == ""
    assert current_store() == name
    assert Note.objects.filter(store_name=current_store(), session_id=sid).count() == 2
    assert read_identity().store == str(moved.resolve())


@STORE_DB
def test_two_stores_on_one_host_go_by_different_names(store, tmp_path, checked, settings):
    first = current_store()
    settings.VAR_DIR = tmp_path / "other-var"
    settings.VAR_DIR.mkdir()
    copy = copy_of(store, tmp_path)
    point_store_at(copy)
    assert current_store() != first
    # host:/path/to/the/copy, or host:sha256:… when the path is too long for the column.
    assert current_store() == storename.default_name(storename.store_file())
    assert storename.store_file().endswith("copy-home/data/agents/store.db")


@STORE_DB
def test_a_folder_from_before_identities_keeps_the_host_name(store, checked):
    Note.objects.create(store_name=storename.host_name(), session_id="s", text="t", author_name="a")
    assert current_store() == storename.host_name()
    assert read_identity().name == storename.host_name()
