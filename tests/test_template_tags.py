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
