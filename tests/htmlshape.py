"""The shape of an HTML document (its tags and attribute names) and its texts, for the
tests that check store text never changes markup built in Python."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import strategies as st

HOSTILE = st.sampled_from(["<script>x</script>", '"><img src=x>', "'a'", "&amp;", "a&b<c"])


class Structure(HTMLParser):
    """The tags and attribute names of a document, and every text and attribute value."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.shape: list[object] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.shape.append((tag, tuple(name for name, _ in attrs)))
        self.texts += [value for _, value in attrs if value]

    def handle_endtag(self, tag: str) -> None:
        self.shape.append(f"/{tag}")

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def parsed(html: str) -> Structure:
    parser = Structure()
    parser.feed(html)
    parser.close()
    return parser
