"""The frames table's rows drawn in Python (``views/frames_html.py``) are the markup the
template drew, for any values; and store text never changes their shape.

``TEMPLATE`` (``tests/frames_rows_template.html``) is the template's rows partial as
it was when the rows moved to Python: both are rendered for the same generated rows
and compared, tag for tag (whitespace between tags aside, which the template's
layout added).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from django.template import Context, Template
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions_admin.store.frames.lines import FrameLine
from sessions_admin.views.frames.render import FrameRow, _prepared
from sessions_admin.views.frames_html import render_frame_rows
from tests.htmlshape import HOSTILE, parsed
from tests.strategies import ANY_TEXT

TEMPLATE = Template((Path(__file__).parent / "frames_rows_template.html").read_text())

TEXT = ANY_TEXT | HOSTILE | st.sampled_from(["alice@example.com", "sk-" + "a1" * 20, ""])
MAYBE = st.none() | TEXT


@st.composite
def rows(draw) -> FrameRow:
    error = draw(st.none() | st.sampled_from(["not valid JSON", "line too long"]) | TEXT)
    frame = FrameLine(
        offset=draw(st.integers(0, 10**12)),
        length=draw(st.integers(0, 10**9)),
        number=draw(st.none() | st.integers(1, 10**7)),
        data=None,
        error=error or None,
        raw=draw(TEXT),
        truncated=draw(st.booleans()),
        kind=draw(MAYBE),
        trace_id=draw(MAYBE),
        span_id=draw(MAYBE),
        parent_span_id=draw(MAYBE),
        duration_ms=draw(st.none() | st.floats(0, 10**7)),
        summary=draw(TEXT),
        pretty=draw(TEXT),
        pretty_truncated=draw(st.booleans()),
    )
    row = FrameRow(
        frame=frame,
        dom_id=draw(TEXT),
        clock=draw(st.none() | st.tuples(TEXT, TEXT, TEXT)),
        since_ms=draw(st.none() | st.floats(0, 10**6)),
        chip=draw(st.integers(0, 9)),
        failed=draw(st.booleans()),
        messages_url=draw(TEXT),
        span_messages_url=draw(TEXT),
        trace_frames_url=draw(TEXT),
    )
    return _prepared(row)


def tags_only(markup: str) -> str:
    return re.sub(r">\s+<", "><", markup.strip())


@settings(max_examples=150, deadline=None)
@given(st.lists(rows(), max_size=4))
def test_the_rows_are_the_templates_rows(drawn):
    expected = TEMPLATE.render(Context({"rows": drawn}))
    assert tags_only(str(render_frame_rows(drawn))) == tags_only(expected)


@settings(max_examples=60, deadline=None)
@given(rows(), (ANY_TEXT | HOSTILE).filter(lambda t: t.strip() and "\x00" not in t))
def test_a_rows_shape_never_depends_on_its_text(row, text):
    def shape(value: str):
        frame = row.frame
        named = ("kind", "trace_id", "span_id", "parent_span_id")
        texts = {name: value for name in named if getattr(frame, name)}
        drawn = replace(row, frame=replace(frame, summary=value, pretty=value, raw=value, **texts))
        return parsed(str(render_frame_rows([drawn]))).shape

    assert shape(text) == shape("plain")
