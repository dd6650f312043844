"""Session ids holding characters a URL makes hard: every page still opens them."""

from __future__ import annotations

import pytest

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB

ODD_IDS = ["\n", "a\nb", "a\r", "\t", "a/", "//", "~", ".", "..", "%2F", "?#", "\u2028"]


@STORE_DB
@pytest.mark.parametrize("session_id", ODD_IDS)
def test_a_session_whose_id_holds_odd_characters_opens_on_every_page(
    store, admin_client, session_id
):
    store.add_session(session_id)
    for subpage in ("", "state", "stats", "delete", "export"):
        assert admin_client.get(session_url(session_id, subpage)).status_code == 200, subpage
    # No directory can be named "a/" or "..": the frames page refuses, as a 400.
    frames = admin_client.get(session_url(session_id, "frames")).status_code
    assert frames == (400 if "/" in session_id or session_id in (".", "..") else 200)
