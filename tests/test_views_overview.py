"""The overview at /: health, activity charts, targets, tools and principals from the rollups."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import resolve

from tests import rollupdata as R
from tests.conftest import STORE_DB


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
        # The form's date-time field shows it in the dashboard's zone (UTC in the tests).
        shown = f'name="since" value="{since.removesuffix("Z")}"'
        assert response.status_code == 200 and shown in response.content.decode()


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


@STORE_DB
def test_without_javascript_the_count_links_keep_the_window(synced, staff_client):
    page = staff_client.get("/?window=7d").content.decode().replace("&amp;", "&")
    assert 'href="?window=7d&part=counts"' in page
    counted = staff_client.get("/?window=7d&part=counts").content.decode().replace("&amp;", "&")
    assert 'href="?window=7d&part=counts&fresh=1"' in counted
    assert '<strong aria-current="true">last 7 days</strong>' in counted


@STORE_DB
def test_it_shows_the_highest_message_id_as_an_id_not_as_a_count(synced, staff_client):
    with synced.connect() as conn:
        conn.execute(
            "INSERT INTO session_messages (id, session_id, role, content, ts) "
            "SELECT 4611686018427387904, id, 'user', 'hi', 0 FROM sessions LIMIT 1"
        )
    html = staff_client.get("/?part=counts", headers={"HX-Request": "true"}).content.decode()
    assert "newest message id 4,611,686,018,427,387,904" in html
    assert "messages written" not in html


def fills_by_profile(html: str) -> dict[str, set[str]]:
    fills: dict[str, set[str]] = {}
    for fill, profile in re.findall(r'fill="([^"]+)"><title>[^<·]+ · ([^:]+):', html):
        fills.setdefault(profile, set()).add(fill)
    return fills


@STORE_DB
def test_each_profile_has_one_colour_on_every_target_bar_and_a_legend(synced, staff_client):
    html = staff_client.get("/?window=all").content.decode()
    fills = fills_by_profile(html)
    assert set(fills) == {p for _, p in R.TARGETS}
    assert all(len(colours) == 1 for colours in fills.values())
    assert len({c for colours in fills.values() for c in colours}) == len(fills)
    legend = html[html.index('class="legend"') : html.index('<table class="target-bars"')]
    for profile, (colour,) in fills.items():
        assert f'fill="{colour}"></rect></svg>{profile}</span>' in legend


@STORE_DB
def test_it_says_as_of_when_once_near_the_top_not_in_every_heading(synced, staff_client):
    html = staff_client.get("/?window=all").content.decode()
    assert html.count("Figures as of") == 1
    assert "(as of" not in html
    assert html.index("Figures as of") < html.index('id="activity-h"')


@STORE_DB
def test_a_missing_principal_looks_as_it_does_on_the_session_list(synced, staff_client):
    html = staff_client.get("/?window=all").content.decode()
    assert "(no principal)" not in html
    row = re.search(r'<tr><th scope="row"><span class="muted">—</span></th>', html)
    assert row, "the principals table shows the list's muted dash for no principal"


@STORE_DB
@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])
def test_the_busiest_principals_say_they_count_from_a_utc_midnight(
    synced, staff_client, settings, zone
):
    from sessions_admin import clock

    settings.TIME_ZONE = zone
    now = clock.now_ms()
    html = staff_client.get("/?window=24h").content.decode()
    # A day's rollup: the table starts at midnight UTC of the day the window's first
    # hour (the current UTC hour and the 23 before it) is in.
    hour_ms = 3600 * 1000
    start_day = datetime.fromtimestamp((now // hour_ms - 23) * hour_ms / 1000, UTC).date()
    heading = re.search(r'<h2 id="principals-h">(.*?)</h2>', html).group(1)
    assert f">{start_day.isoformat()} 00:00 UTC</time>" in heading
    assert f'datetime="{start_day.isoformat()}T00:00:00+00:00"' in heading
    assert "Counted in whole UTC days" in html
    assert "Counted in whole UTC days" not in staff_client.get("/?window=all").content.decode()


@STORE_DB
def test_its_counts_are_counted_again_after_a_delete_of_ours_in_any_process(
    synced, staff_client, store
):
    from sessions_admin.store.cascade import delete_rows
    from sessions_admin.store.connection import note_store_deleted

    assert "12 sessions" in staff_client.get("/?part=counts").content.decode()
    with store.connect() as conn:  # another process's delete: the worker's clear-all
        gone = [row[0] for row in conn.execute("SELECT id FROM sessions LIMIT 2")]
        for table, column in (("session_messages", "session_id"), ("session_state", "session_id")):
            conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(g,) for g in gone])
        conn.executemany("DELETE FROM sessions WHERE id = ?", [(g,) for g in gone])
    assert "12 sessions" in staff_client.get("/?part=counts").content.decode()  # kept 5 min
    note_store_deleted()  # what the cascade says after it commits, in whichever process
    assert "10 sessions" in staff_client.get("/?part=counts").content.decode()
    (third,) = store.execute("SELECT id FROM sessions LIMIT 1")[0]
    delete_rows([third])  # the dashboard's own cascade says so itself
    assert "9 sessions" in staff_client.get("/?part=counts").content.decode()
