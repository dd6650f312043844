"""The transcript's messages as HTML (views.transcript_html): any text the store holds
is shown as text, never as markup, wherever it lands (attribute or element)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sessions_admin.store.transcript import MessageRow, Value
from sessions_admin.views.transcript_html import messages_html
from sessions_admin.views.transcript_items import (
    JsonBlock,
    MessageItem,
    Moment,
    PairLink,
    ToolCard,
    Truncated,
)
from tests.htmlshape import HOSTILE, parsed
from tests.strategies import ANY_TEXT

TEXT = (ANY_TEXT | HOSTILE).filter(bool)  # empty texts are not shown at all


def an_item(text: list[str]) -> MessageItem:
    """A tool message using every value the markup shows, each taken from ``text``."""
    values = iter(text)

    def t() -> str:
        return next(values)

    row = MessageRow(
        7, "tool", Value("c"), "n", "i", None, None, None, None, None, None, None, None, 0
    )
    truncated = Truncated(t(), t(), t(), t())
    blocks = [
        JsonBlock(label=t(), dom_id=t(), summary=t(), text=t(), mark=t(), raw_url=t()),
        JsonBlock(label=t(), dom_id=t(), summary=t(), text=t(), truncated=truncated, error=True),
    ]
    tool = ToolCard(t(), t(), t(), t(), t(), True, t(), t(), t(), "error", blocks)
    return MessageItem(
        row=row,
        id=t(),
        classes=t(),
        role_class=t(),
        role=t(),
        time=Moment(t(), t(), t()),
        odd_time="",
        permalink=t(),
        model_id=t(),
        trace_id=t(),
        trace_short=t(),
        trace_frames_url=t(),
        trace_external_url=t(),
        span_id=t(),
        span_short=t(),
        call_id=t(),
        call_short=t(),
        chip=t(),
        pairs=[PairLink(t(), t(), t(), t())],
        content_truncated=Truncated(t(), t(), t(), t()),
        content=t(),
        tool=tool,
        undecodable=t(),
        note_url=t(),
    )


VALUES = 64  # more than an item takes


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=VALUES, max_size=VALUES), st.booleans())
def test_store_text_never_changes_the_markup_and_reads_back_as_itself(text, has_frames):
    plain = parsed(messages_html([an_item(["x"] * VALUES)], has_frames))
    shown = parsed(messages_html([an_item(text)], has_frames))
    assert shown.shape == plain.shape
    page_text = "".join(shown.texts)
    used = text[:51] if has_frames else text[:33] + text[34:51]  # 33: the frames link
    for value in used:  # every value the item used is on the page as it was
        assert value in page_text


def test_a_message_without_optional_parts_shows_only_what_it_has():
    row = MessageRow(
        3, "user", Value("hi"), None, None, None, None, None, None, None, None, None, None, 0
    )
    item = MessageItem(
        row=row,
        id="3",
        classes="msg role-user",
        role_class="user",
        role="user",
        time=None,
        odd_time="",
        permalink="/sessions/s/?at=3#message-3",
        content="hi",
    )
    html = messages_html([item], has_frames=False)
    assert '<li id="message-3" class="msg role-user">' in html
    assert '<span class="muted">—</span>' in html  # no time
    assert "trace" not in html and "tool-card" not in html and "note-link" not in html
    assert '<pre class="content">hi</pre>' in html
