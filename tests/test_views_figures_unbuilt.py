"""The figure pages (/, /tools/, /tools/<name>/) before a sync pass has finished, and after.

An empty figure must not blame the window or the filters when the side index
was never built, or its first build never finished: the page says so.
"""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from tests.conftest import STORE_DB

PAGES = ["/", "/tools/", "/tools/sql.query/", "/tools/sql.query/?errors=1"]
NOT_BUILT = "The side index has not been built yet"


@pytest.fixture
def side_dir(store, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


@STORE_DB
@pytest.mark.parametrize("page", PAGES)
def test_before_any_sync_the_pages_say_the_index_is_not_built(side_dir, staff_client, page):
    html = staff_client.get(page).content.decode()
    assert NOT_BUILT in html and "manage.py sync_index" in html
    assert "No sync has run yet" in html
    assert "Widen the window" not in html and "No call of" not in html


@STORE_DB
@pytest.mark.parametrize("page", PAGES)
def test_a_first_build_that_never_finished_is_not_blamed_on_the_filters(
    side_dir, store, staff_client, page
):
    store.add_session("sess_one", title="t")
    side = sidedb.connect()
    try:
        # What a first pass leaves when it stops on a bad value: tables, a start, no finish.
        sync.prepare(side)
        side.execute("INSERT INTO sync_state (key, value) VALUES ('started_at_ms', 1)")
    finally:
        side.close()
    html = staff_client.get(page).content.decode()
    assert NOT_BUILT in html and "no pass has finished since" in html
    assert "Widen the window" not in html and "No call of" not in html


@STORE_DB
@pytest.mark.parametrize("page", ["/", "/tools/"])
def test_after_a_sync_an_empty_window_says_when_the_index_was_synced(
    side_dir, store, staff_client, page
):
    store.add_session("sess_one", title="t")
    sync.sync_once()
    html = staff_client.get(page).content.decode()
    assert NOT_BUILT not in html
    assert "No tool calls in the last 24 hours (side index last synced <time" in html


@STORE_DB
@pytest.mark.parametrize("page", PAGES)
def test_a_failed_last_pass_is_named_above_the_figures_it_left(
    side_dir, store, staff_client, page, monkeypatch
):
    store.add_message(store.add_session("sess_one", title="t"), "user", "hello")
    sync.sync_once()
    assert "last <code>sync_index</code> pass failed" not in staff_client.get(page).content.decode()
    store.add_message("sess_one", "user", "again")

    def broken(side, batch):
        raise ValueError("a <b>bad</b> row")

    monkeypatch.setattr(SEARCH_INDEX, "add_messages", broken)
    with pytest.raises(ValueError):
        sync.sync_once()
    html = staff_client.get(page).content.decode()
    assert "last <code>sync_index</code> pass failed" in html
    assert "ValueError: a &lt;b&gt;bad&lt;/b&gt; row" in html
    assert NOT_BUILT not in html  # the figures of the pass that finished still show
