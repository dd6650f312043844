"""The overview at /: health, activity charts, targets, tools and principals from the rollups."""

from __future__ import annotations

import re
from random import Random
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import resolve

from sessions_admin.ourdata import sync
from tests import rollupdata as R
from tests.conftest import STORE_DB


@pytest.fixture
def synced(store, settings, tmp_path, monkeypatch):
    """A store full of calls, synced by the runner, with "now" just after its last message."""
    settings.VAR_DIR = tmp_path / "var"
    R.fill_store(store, Random(13), sessions=12)
    sync.sync_once()
    last = store.execute("SELECT max(ts) FROM session_messages")[0][0]
    monkeypatch.setattr("sessions_admin.views.figures.now_ms", lambda: last + 1000)
    monkeypatch.setattr("sessions_admin.views.overview.now_ms", lambda: last + 1000)
    monkeypatch.setattr("sessions_admin.views.tools.now_ms", lambda: last + 1000)
    return store


@STORE_DB
def test_it_shows_every_section_with_figures_as_of_the_sync(synced, staff_client):
    response = staff_client.get("/?window=all")
    assert response.status_code == 200
    html = response.content.decode()
    for heading in (
        "Health and size",
        "Activity",
        "By target and profile",
        "Tools",
        "Busiest principals",
    ):
        assert heading in html
    assert "Figures as of" in html
    (messages,) = synced.execute("SELECT count(*) FROM session_messages")[0]
    assert f"12 sessions · {messages:,} messages" in html
    assert html.count("<svg") >= 4 and "<title>" in html
    assert 'class="visually-hidden"' in html  # the charts' tables for screen readers


@STORE_DB
def test_its_target_bars_link_to_the_filtered_list(synced, staff_client):
    html = staff_client.get("/?window=7d").content.decode()
    links = [part.split('"')[0] for part in html.split('href="')[1:]]
    targeted = [link.replace("&amp;", "&") for link in links if "target=" in link]
    assert targeted
    for link in targeted:
        parts = urlsplit(link)
        assert resolve(parts.path).url_name == "sessions"
        query = parse_qs(parts.query)
        assert query["active"] == ["7d"]
        assert query["target"][0] in {t for t, _ in R.TARGETS}
        response = staff_client.get(link)
        assert response.status_code == 200


@STORE_DB
def test_its_tool_rows_link_to_the_tools_page(synced, staff_client):
    html = staff_client.get("/?window=all").content.decode()
    for tool in R.TOOLS:
        assert f'href="/tools/{tool}/"' in html
        assert staff_client.get(f"/tools/{tool}/").status_code == 200


@STORE_DB
def test_a_windows_tool_links_start_the_tools_page_at_the_windows_start(synced, staff_client):
    html = staff_client.get("/?window=7d").content.decode()
    links = [h.replace("&amp;", "&") for h in re.findall(r'href="(/tools/[^"]+/\?[^"]*)"', html)]
    assert links
    for link in links:
        since = parse_qs(urlsplit(link).query)["since"][0]
        assert since.endswith("T00:00Z")  # a 7-day window starts at a UTC midnight
        response = staff_client.get(link)
        assert response.status_code == 200 and f'value="{since}"' in response.content.decode()


@STORE_DB
def test_the_old_list_links_at_the_root_still_land_on_the_list(synced, staff_client):
    response = staff_client.get("/?target=ops.pager&sort=-turn_count")
    assert response.status_code == 302
    assert response["Location"] == "/sessions/?target=ops.pager&sort=-turn_count"


@STORE_DB
def test_it_counts_store_rows_after_the_page(synced, staff_client):
    response = staff_client.get("/?part=counts", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "12 sessions" in response.content.decode()


@STORE_DB
def test_without_javascript_the_count_link_reloads_the_page_with_the_counts(synced, staff_client):
    html = staff_client.get("/?part=counts").content.decode()
    assert "<html" in html and "12 sessions" in html and "By target and profile" in html


@STORE_DB
def test_it_says_how_to_compute_figures_before_the_first_sync(
    store, settings, tmp_path, staff_client
):
    settings.VAR_DIR = tmp_path / "empty"
    response = staff_client.get("/")
    assert response.status_code == 200
    assert "sync_index" in response.content.decode()


@STORE_DB
@pytest.mark.parametrize("window", ["1y", "<script>", "24h' OR 1"])
def test_it_rejects_an_unknown_window_with_a_sentence(synced, staff_client, window):
    response = staff_client.get("/", {"window": window})
    assert response.status_code == 400
    assert "Unknown window" in response.content.decode()


@STORE_DB
def test_it_rejects_post(synced, staff_client):
    assert staff_client.post("/").status_code == 405


@STORE_DB
def test_it_is_for_staff_only(synced, client, nonstaff_client):
    assert client.get("/").status_code == 302
    assert nonstaff_client.get("/").status_code == 403
