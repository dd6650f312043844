"""Readers of the session page's HTML, shared by its test modules (the ``conversation``
fixture is in ``tests/conftest.py``)."""

from __future__ import annotations

import re

from sessions_admin.ids import session_url

XSS = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
HX = {"HTTP_HX_REQUEST": "true"}


def html_of(response) -> str:
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


def assert_no_markup_from_store(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "onerror=alert(2)>" not in html.replace("onerror=alert(2)&gt;", "")


def message_ids(html: str) -> list[int]:
    return [int(m) for m in re.findall(r'<li id="message-(\d+)"', html)]


def export_text(client, sid, fmt) -> str:
    """The whole streamed export of ``sid`` in ``fmt``, checked to be a download."""
    response = client.get(session_url(sid, "export", format=fmt))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Disposition"].startswith("attachment;")
    return b"".join(response.streaming_content).decode()
