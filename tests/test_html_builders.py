"""Every markup builder in Python (``views/*_html.py``): store text never changes the markup.

For each builder, any text in the values it places (hostile markup included)
leaves the document's shape (its tags and attribute names) the same as a
harmless text does, and reads back as itself from the parsed document. The
transcript's messages have the same test in ``tests/test_transcript_html.py``.
"""

from __future__ import annotations

import html
import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessions_admin.ids import session_url
from sessions_admin.store.queries import SessionRow
from sessions_admin.views import json_html
from sessions_admin.views.notes_html import NoteLinks, ShownNote, jump_html, notes_beside_messages
from sessions_admin.views.outline_html import OutlineBar, render_outline_rows
from sessions_admin.views.sessionrows_html import render_session_rows
from tests.htmlshape import HOSTILE, parsed
from tests.strategies import ANY_TEXT

TEXT = (ANY_TEXT | HOSTILE).filter(lambda t: t.strip() and "\x00" not in t)
PLAIN = "plain"


def same_shape_and_text(build, text: str) -> None:
    hostile, harmless = parsed(build(text)), parsed(build(PLAIN))
    assert hostile.shape == harmless.shape
    assert any(text.strip() in piece for piece in hostile.texts)


@settings(max_examples=60, deadline=None)
@given(TEXT)
@example("prefix")  # the builder's escaping cache once shared its keys with its settings
@example("prefix_html")
def test_an_outline_row_keeps_its_shape_whatever_the_tool_name(text):
    def build(name: str) -> str:
        bar = OutlineBar(
            id="1", name=name, href="#message-1", duration="12 ms", classes="outline-call",
            x="0", width="10", drawn=True, failed=True,
        )  # fmt: skip
        return str(render_outline_rows([bar]))

    same_shape_and_text(build, text)


@settings(max_examples=60, deadline=None)
@given(TEXT)
def test_a_note_keeps_its_shape_whatever_its_text_and_author(text):
    from sessions_admin.markup import esc

    links = NoteLinks(
        edit="?edit=", delete="/sessions/s", delete_tail="", at="?", at_tail="", at_html="?",
        at_tail_html="", edit_open='<a href="?edit=', delete_open="<button formaction=\"",
        delete_close='">delete</button>',
    )  # fmt: skip

    def build(value: str) -> str:
        note = ShownNote(
            pk=1, author=value, author_html=esc(value), created_iso="2026-12-03T10:00:00+00:00",
            edited=False, text=value, message_id=7, may_edit=True, may_delete=True, links=links,
        )  # fmt: skip
        return notes_beside_messages([note], None)[7] + str(jump_html([note]))

    same_shape_and_text(build, text)


@settings(max_examples=60, deadline=None)
@given(TEXT)
def test_json_keeps_its_shape_whatever_its_keys_and_strings(text):
    def document(value: str) -> dict:
        return {value: [value, {"k": value}]}

    for render in (json_html.highlight, json_html.tree):
        hostile = parsed(str(render(document(text))))
        assert hostile.shape == parsed(str(render(document(PLAIN)))).shape
    # What the highlighted document reads as, once its markup is gone, is the JSON itself.
    markup = str(json_html.highlight(document(text)))
    assert json.loads(html.unescape(re.sub(r"<[^>]*>", "", markup))) == document(text)


@settings(max_examples=40, deadline=None)
@given(TEXT)
def test_a_session_row_keeps_its_shape_whatever_its_text(text):
    def build(value: str) -> str:
        row = SessionRow(
            id="sess-1", target_key=value, profile_key=value, principal_id=value, title=value,
            turn_count=3, created_at=1_764_000_000_000, last_active=1_764_000_000_000,
        )  # fmt: skip
        return str(render_session_rows([row], can_delete=True, failed={"sess-1": 2}))

    same_shape_and_text(build, text)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(st.lists(_JSON_VALUES, max_size=3))
def test_highlighted_json_reads_as_json_dumps_with_an_indent(value):
    """Numbers, strings, nesting: the highlight's text is ``json.dumps(indent=2)``."""
    markup = str(json_html.highlight(value))
    assert html.unescape(re.sub(r"<[^>]*>", "", markup)) == json.dumps(
        value, indent=2, ensure_ascii=False
    )


@settings(max_examples=80, deadline=None)
@given(ANY_TEXT.filter(lambda t: "\x00" not in t))
@example("")
@example("..")
@example("a/b?c#d&e")
def test_a_session_rows_links_are_the_session_urls_whatever_its_id(session_id):
    """The row builds its delete link on the session's own URL: the same URL
    ``session_url`` gives, the query form (an empty id, dots) included."""
    row = SessionRow(
        id=session_id, target_key="t", profile_key="p", principal_id="u", title="x",
        turn_count=3, created_at=1_764_000_000_000, last_active=1_764_000_000_000,
    )  # fmt: skip
    links = re.findall(r'href="([^"]*)"', str(render_session_rows([row], can_delete=True)))
    links = [html.unescape(link) for link in links]
    assert session_url(session_id) in links
    assert session_url(session_id, "delete", **{"from": "list"}) in links


@settings(max_examples=60, deadline=None)
@given(TEXT)
def test_a_tool_call_row_keeps_its_shape_whatever_the_stored_text(text):
    from sessions_admin.ourdata.rollups.calls import CallRow
    from sessions_admin.views.toolcalls_html import render_call_rows

    def build(value: str) -> str:
        row = CallRow(
            id=1, session_id=value, target=value, profile=value, principal=value,
            ts=1_700_000_000_000, duration_ms=12, failed=True, link_id=1, first_id=1,
            second_id=None, result_head=value, args_head=value,
        )  # fmt: skip
        return str(render_call_rows([(row, "/sessions/x/?at=1#message-1")], slow_ms=5))

    same_shape_and_text(build, text)
