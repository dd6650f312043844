"""What a newcomer meets first: the login page says where ``make run``'s local password is."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_the_login_page_names_the_local_password_file_only_where_there_is_one(
    client, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    assert b"admin-password" not in client.get("/login/").content
    (tmp_path / "admin-password").write_text("secret-not-shown\n")
    page = client.get("/login/").content.decode()
    assert str(tmp_path / "admin-password") in page and "secret-not-shown" not in page
