"""One filter language: the same time control, target menu and refusals on the session
list, search and a tool's calls; "to" keeps the whole day, hour, minute or second it names."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.ourdata import sync
from sessions_admin.params import BadParameter
from sessions_admin.views import listparams
from tests.conftest import STORE_DB

HX = {"HX-Request": "true"}
FORMATS = {
    "day": ("%Y-%m-%d", timedelta(days=1)),
    "hour": ("%Y-%m-%dT%H", timedelta(hours=1)),
    "minute": ("%Y-%m-%dT%H:%M", timedelta(minutes=1)),
    "second": ("%Y-%m-%dT%H:%M:%S", timedelta(seconds=1)),
}


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@given(
    moment=st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9000, 1, 1)),
    unit=st.sampled_from(sorted(FORMATS)),
)
def test_the_end_of_a_range_keeps_the_whole_unit_it_names(moment, unit):
    pattern, length = FORMATS[unit]
    raw = moment.strftime(pattern)
    start = datetime.fromisoformat(raw).replace(tzinfo=UTC)
    end = listparams.parse_end_param("until", raw)
    assert end == ms(start + length)
    # A moment inside the named unit is kept (ts < end), the next unit's first is not.
    assert ms(moment.replace(tzinfo=UTC)) < end <= ms(start + length)


def test_a_fraction_of_a_second_ends_after_that_millisecond():
    assert listparams.parse_end_param("until", "2026-11-28T14:05:30.250") == (
        ms(datetime(2026, 11, 28, 14, 5, 30, 250_000, tzinfo=UTC)) + 1
    )


def test_a_range_must_end_after_it_starts_and_says_so_naming_the_end():
    with pytest.raises(BadParameter) as refused:
        listparams.time_range(
            {"since": "2026-11-28T15:00", "until": "2026-11-28T14:00"},
            start="since",
            end="until",
            preset="within",
        )
    assert refused.value.name == "until" and "after its start" in str(refused.value)
    # The same minute at both ends is that whole minute.
    after, before = listparams.time_range(
        {"since": "2026-11-28T14:00", "until": "2026-11-28T14:00"},
        start="since",
        end="until",
        preset="within",
    )
    assert before - after == 60_000


def test_a_preset_and_a_start_keep_the_later_of_the_two():
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    query = {"within": "24h", "since": "2026-11-28T06:00"}
    after, _ = listparams.time_range(query, start="since", end="until", preset="within", now=now)
    assert after == ms(datetime(2026, 11, 28, 6, tzinfo=UTC))
    with pytest.raises(BadParameter) as refused:
        listparams.time_range({"within": "2d"}, start="a", end="b", preset="within")
    assert refused.value.name == "within"


@pytest.mark.parametrize(
    ("raw", "end", "shown"),
    [
        ("2026-11-28", False, "2026-11-28T00:00"),
        ("2026-11-28", True, "2026-11-28T23:59"),
        ("2026-11-28T14:05", True, "2026-11-28T14:05"),
        ("2026-11-28T14:05:30", False, "2026-11-28T14:05:30"),
        ("2026-11-28T14:05:00+02:00", False, "2026-11-28T12:05"),
        ("yesterday", False, ""),
        ("", False, ""),
        (None, False, ""),
    ],
)
def test_a_moment_is_shown_as_the_date_time_field_reads_it(raw, end, shown):
    assert listparams.datetime_local(raw, end=end) == shown


def test_a_date_shown_at_the_end_means_what_the_date_did():
    shown = listparams.datetime_local("2026-11-28", end=True)
    assert listparams.parse_end_param("until", shown) == listparams.parse_end_param(
        "until", "2026-11-28"
    )


def _controls(html: str) -> list[tuple[str, str]]:
    """The time control's and the target menu's fields, as (kind, attribute) pairs."""
    fields = re.findall(
        r'<input type="datetime-local" name="[^"]+" value="[^"]*" (data-range-\w+)', html
    )
    menus = re.findall(
        r'<select name="(target|profile)">\s*<option value="">([^<]+)</option>', html
    )
    return [("field", f) for f in fields] + [("menu", f"{n}:{label}") for n, label in menus]


@pytest.fixture
def three_pages(store, var_dir):
    sid = store.add_session("sess_t", target="system.registry", last_active=1_764_000_000_000)
    store.add_message(sid, "user", "look at the wombat")
    store.add_message(sid, "tool", "boom", tool_name="sql.query", tool_result={"error": "boom"})
    sync.sync_once()
    return ["/sessions/", "/search/?q=wombat", "/tools/sql.query/"]


@STORE_DB
def test_the_list_search_and_a_tools_calls_draw_the_same_controls(three_pages, staff_client):
    drawn = [_controls(staff_client.get(page).content.decode()) for page in three_pages]
    assert drawn[0] == drawn[1] == drawn[2]
    assert ("field", "data-range-start") in drawn[0] and ("menu", "target:all targets") in drawn[0]
    # A target no menu lists (a hand-made URL) stays selected.
    body = staff_client.get("/search/?q=wombat&target=elsewhere").content.decode()
    assert '<option value="elsewhere" selected>' in body


@STORE_DB
def test_the_same_to_date_keeps_the_same_day_on_every_page(store, var_dir, staff_client):
    noon = ms(datetime(2026, 11, 28, 12, tzinfo=UTC))
    sid = store.add_session("sess_noon", last_active=noon, created_at=noon)
    store.add_message(sid, "user", "the wombat at noon", ts=noon)
    sync.sync_once()
    for to, kept in (("2026-11-28", True), ("2026-11-27", False), ("2026-11-28T11:59", False)):
        listed = staff_client.get(f"/sessions/?active_before={to}").content.decode()
        found = staff_client.get(f"/search/?q=wombat&until={to}").content.decode()
        assert ("sess_noon" in listed) is kept, to
        assert ("the <mark>wombat</mark> at noon" in found) is kept, to


@STORE_DB
@pytest.mark.parametrize(
    ("page", "field"),
    [
        (
            "/sessions/?active_after=2026-11-28T15:00&active_before=2026-11-28T14:00",
            "active_before",
        ),
        ("/search/?q=wombat&since=2026-11-28T15:00&until=2026-11-28T14:00", "until"),
        ("/tools/sql.query/?since=2026-11-28T15:00&until=2026-11-28T14:00", "until"),
        ("/search/?q=wombat&within=forever", "within"),
    ],
)
def test_a_refused_value_names_its_field_for_the_form_and_links_back_by_hand(
    three_pages, staff_client, page, field
):
    from_form = staff_client.get(page, headers=HX)
    assert from_form.status_code == 400
    assert f'data-field="{field}"' in from_form.content.decode()
    assert from_form["HX-Reselect"] == ".banner"  # a form that swaps part of the page
    by_hand = staff_client.get(page)
    assert by_hand.status_code == 400
    assert f"This page without “{field}”" in by_hand.content.decode()
