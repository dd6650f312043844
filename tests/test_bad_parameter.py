"""One way to refuse bad input: ``params.BadParameter``, answered in one place.

Whichever layer reads the parameter (the rollups' window and cursor, the
frames pages' filters, the session list), the answer is the same 400 page, or
for htmx the banner in ``#flash``, and it names the parameter. The code keeps
it that way: one bad-parameter exception in the package, and no view that
catches it to answer by hand.
"""

from __future__ import annotations

import ast
import html
import re
from pathlib import Path

import pytest

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.frames_files import frame, request_url, write_request

PACKAGE = Path(__file__).resolve().parent.parent / "sessions_admin"
HX = {"HX-Request": "true"}
#: Names an exception for bad input would plausibly have.
BAD_INPUT_NAME = re.compile(r"^(Bad|Invalid|Malformed)[A-Z]|(Param|Parameter|Query|Input)Error$")
#: What an exception class's bases are called.
EXCEPTION_BASE = re.compile(r"(Error|Exception|BadParameter)$")


def _assert_page_names(response, phrase: str) -> None:
    body = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert "<html" in body and phrase in body
    assert "Traceback" not in body


def _heading(response) -> str:
    match = re.search(r"<h1>(.*?)</h1>", response.content.decode(), re.S)
    return match.group(1) if match else ""


def _markup(response) -> str:
    """The tags alone: two answers from one template differ only in their words (the
    field a banner names included)."""
    tags = re.sub(r">[^<]*<", "><", response.content.decode().strip())
    return re.sub(r' data-field="[^"]*"', ' data-field=""', tags)


def _assert_banner_names(response, phrase: str) -> None:
    body = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert response["HX-Retarget"] == "#flash"
    assert "<html" not in body and 'role="alert"' in body and phrase in body
    # The answer depends on HX-Request even though the view raised before deciding.
    assert "HX-Request" in response["Vary"]


# --- The rollups' parameters (once a plain ValueError the middleware missed) ----------------


@STORE_DB
@pytest.mark.parametrize(
    "url, phrase",
    [
        ("/?window=1y", "window: Unknown window '1y'"),
        ("/tools/?window=forever", "window: Unknown window 'forever'"),
        ("/tools/fs.read/?cursor=1_x", "cursor: that “More” link is damaged"),
        ("/tools/fs.read/?since=yesterday", "since must be an ISO date"),
        ("/tools/?target=" + "t" * 501, "target is too long (over 500 characters)"),
    ],
)
def test_a_bad_figures_parameter_is_a_400_page_naming_it(store, var_dir, staff_client, url, phrase):
    _assert_page_names(staff_client.get(url), phrase)


@STORE_DB
@pytest.mark.parametrize(
    "url, phrase",
    [
        ("/?window=1y", "window: Unknown window"),
        ("/tools/fs.read/?cursor=abc", "cursor: that “More” link is damaged"),
    ],
)
def test_a_bad_figures_parameter_for_htmx_is_a_banner_naming_it(
    store, var_dir, staff_client, url, phrase
):
    _assert_banner_names(staff_client.get(url, headers=HX), phrase)


@STORE_DB
def test_a_good_window_still_answers_the_page(store, var_dir, staff_client):
    response = staff_client.get("/?window=7d")
    body = response.content.decode()
    assert response.status_code == 200 and "No sync has run yet" in body
    assert "Bad request" not in body


# --- The frames pages answer like every other page --------------------------------------


@STORE_DB
def test_a_frames_pages_bad_parameter_is_the_same_400_page(store, staff_client, old):
    sid = store.add_session("sess_bp")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    _assert_page_names(
        staff_client.get(request_url(sid, "req") + "?n=abc"), "n must be a line number"
    )
    _assert_page_names(
        staff_client.get(session_url(sid, "frames", q="x" * 1001)),
        "q is too long (over 1,000 characters)",
    )
    # The very page the session list answers with: one template for every 400.
    frames_page = staff_client.get(request_url(sid, "req") + "?n=x")
    list_page = staff_client.get("/sessions/?sort=title")
    assert _heading(frames_page) == _heading(list_page) != ""


@STORE_DB
def test_a_frames_pages_bad_parameter_for_htmx_is_the_same_banner(store, staff_client, old):
    sid = store.add_session("sess_bph")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    _assert_banner_names(
        staff_client.get(request_url(sid, "req") + "?offset=-5", headers=HX),
        "offset must be a byte offset",
    )
    _assert_banner_names(
        staff_client.get(session_url(sid, "frames", trace="t" * 1001), headers=HX),
        "trace is too long",
    )
    # The very banner the session list answers with, words aside.
    frames_banner = staff_client.get(request_url(sid, "req") + "?n=x", headers=HX)
    list_banner = staff_client.get("/sessions/?sort=title", headers=HX)
    assert _markup(frames_banner) == _markup(list_banner)


@STORE_DB
def test_an_edited_tail_poll_size_reads_as_changed_not_refused(store, staff_client, old):
    sid = store.add_session("sess_tail")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    poll = request_url(sid, "req") + "?tail=1&offset=0&size=abc&mtime=x"
    response = staff_client.get(poll, headers=HX)
    assert response.status_code == 200 and "step 0" in response.content.decode()


# --- The code keeps it one ----------------------------------------------------------------


def _trees() -> list[tuple[str, ast.Module]]:
    return [
        (str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text()))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def test_the_package_has_one_bad_parameter_exception():
    found = [
        f"{module}:{node.name}"
        for module, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(EXCEPTION_BASE.search(_name(base)) for base in node.bases)
        and (
            BAD_INPUT_NAME.search(node.name)
            or any(_name(base) == "BadParameter" for base in node.bases)
        )
    ]
    assert found == ["sessions_admin/params.py:BadParameter"]


def test_no_view_catches_a_bad_parameter():
    found = []
    for module, tree in _trees():
        if not module.startswith("sessions_admin/views/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                if any(_name(kind) == "BadParameter" for kind in caught):
                    found.append(f"{module}:{node.lineno}")
    assert found == []
    # The check reads real views: it would see a handler if one were there.
    assert any(module.startswith("sessions_admin/views/frames/") for module, _ in _trees())


@pytest.mark.django_db
def test_a_refused_filter_links_back_to_its_own_page_without_it(staff_client):
    response = staff_client.get("/tools/?window=year&target=a+b")
    assert response.status_code == 400
    page = response.content.decode()
    assert 'href="/tools/?target=a+b"' in page and "without “window”" in page
    assert 'href="/tools/">This page without its filters' in page
