"""The tags that stand in for template loops and ``{% url %}`` on every page: what they
write is what the template wrote (escaped, the chosen option selected), and a URL
made once still follows the script prefix and the URL map."""

from __future__ import annotations

import html

from django.template import Context, Template
from django.urls import clear_url_caches, reverse, set_script_prefix
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions_admin.templatetags.sessions_admin import options, page_url

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(TEXT, max_size=6, unique=True), pick=st.integers(0, 6))
def test_options_write_what_the_template_loop_wrote(values, pick):
    selected = values[pick] if pick < len(values) else None
    loop = Template(
        '{% for v in values %}<option value="{{ v }}"{% if v == selected %} selected'
        "{% endif %}>{{ v }}</option>{% endfor %}"
    ).render(Context({"values": values, "selected": selected}))
    assert options(values, selected) == loop


def test_options_take_value_and_label_pairs_and_escape_both():
    written = options([('a"<', "x > y"), ("b", "&")], 'a"<')
    assert written == (
        '<option value="a&quot;&lt;" selected>x &gt; y</option><option value="b">&amp;</option>'
    )
    assert html.unescape(written).count("selected") == 1


def test_a_page_url_follows_the_script_prefix():
    try:
        set_script_prefix("/admin-tools/")
        assert page_url("sessions") == reverse("sessions") == "/admin-tools/sessions/"
        set_script_prefix("/")
        assert page_url("sessions") == "/sessions/"
    finally:
        set_script_prefix("/")


def test_a_page_url_follows_a_new_url_map(settings):
    assert page_url("sessions") == "/sessions/"
    settings.ROOT_URLCONF = "tests.urls_moved"
    clear_url_caches()
    try:
        assert page_url("sessions") == "/moved/sessions/"
    finally:
        settings.ROOT_URLCONF = "sessions_admin.urls"
        clear_url_caches()
    assert page_url("sessions") == "/sessions/"


def _time_html_as_it_was(value: int, now, zone) -> str:
    """relative_time_html before its UTC shortcut: the hover text through exact_time."""
    from sessions_admin.humanize import exact_time
    from sessions_admin.store.timeutil import from_epoch_ms, in_zone
    from sessions_admin.templatetags.sessions_admin import _relative

    moment = from_epoch_ms(value)
    exact = exact_time(in_zone(moment, zone))
    return f'<time datetime="{moment.isoformat()}" title="{exact}">{_relative(moment, now)}</time>'


@settings(max_examples=200, deadline=None)
@given(
    # From year 1 to 9999, and around now (where most stored times are).
    value=st.integers(-62_135_596_800_000, 253_402_300_799_000)
    | st.integers(1_700_000_000_000, 1_800_000_000_000),
    zone_name=st.sampled_from(["UTC", "Etc/UTC", "Europe/Paris", "Asia/Kolkata", "fixed"]),
)
def test_a_time_reads_as_it_did_before_the_utc_shortcut(value, zone_name):
    from datetime import UTC, datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    from sessions_admin.templatetags.sessions_admin import relative_time_html

    zone = timezone(timedelta(0)) if zone_name == "fixed" else ZoneInfo(zone_name)
    now = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    for tz in (zone, UTC):
        assert relative_time_html(value, now, tz) == _time_html_as_it_was(value, now, tz)


def test_a_stored_time_past_what_the_zone_can_read_is_shown_in_utc(settings):
    """Year 9999 in Asia/Kolkata (+5:30) is past datetime's range: shown in UTC, not a 500."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from sessions_admin.templatetags.sessions_admin import abstime, relative_time_html

    late = 253_402_281_000_000  # 9999-12-31 18:30 UTC
    now = datetime(2026, 12, 4, tzinfo=UTC)
    assert "9999-12-31 18:30:00.000 UTC" in relative_time_html(late, now, ZoneInfo("Asia/Kolkata"))
    settings.TIME_ZONE = "Asia/Kolkata"
    assert 'title="9999-12-31 18:30:00.000 UTC">9999-12-31 18:30:00<' in str(abstime(late))
