"""A note's web addresses become links, and nothing else in its text becomes markup.

``linked_text`` escapes the text once and finds addresses in the escaped text (for
speed). These tests hold it to the rule read plainly: addresses found in the raw
text (http or https, up to a space, quote or angle bracket, less the sentence's
closing punctuation), every piece escaped on its own.
"""

from __future__ import annotations

import html
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sessions_admin.markup import linked_text

RAW_ADDRESS = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)
SENTENCE_END = ".,;:!?)]}"


def plainly(text: str) -> str:
    parts, position = [], 0
    for match in RAW_ADDRESS.finditer(text):
        address = match.group(0).rstrip(SENTENCE_END)
        parts.append(html.escape(text[position : match.start()]))
        shown = html.escape(address)
        parts.append(
            f'<a href="{shown}" rel="noopener noreferrer nofollow" target="_blank">{shown}</a>'
        )
        position = match.start() + len(address)
    parts.append(html.escape(text[position:]))
    return "".join(parts)


# Text made of the pieces that matter: schemes, the characters escaping changes,
# sentence punctuation, entities written out, spaces, anything else.
PIECES = st.sampled_from(
    [
        "http://", "https://", "HTTPS://", "javascript:", "x.example", "/a?b=1", "&", "&amp;",
        "&quot;", ";", ".", ")", "]", ",", "!", '"', "'", "<", ">", " ", "\n", "é", "Ω", "/",
    ]
)  # fmt: skip
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=24).map("".join)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
@example("see https://x.example/?a&;")  # the ";" after "&" is not the entity's
@example("https://x.example/&amp;.")  # "&amp;" written out, then a full stop
def test_links_and_escapes_as_the_rule_reads(text):
    assert linked_text(text) == plainly(text)


def test_an_address_keeps_its_ampersands_and_loses_the_full_stop():
    shown = linked_text("see https://x.example/?a=1&b=2. then <b>")
    assert 'href="https://x.example/?a=1&amp;b=2"' in shown
    assert shown.endswith("</a>. then &lt;b&gt;")


def test_only_web_addresses_become_links():
    shown = linked_text('javascript:alert(1) data:text/html,hi <a href="x">')
    assert "<a" not in shown.replace("&lt;a", "")
