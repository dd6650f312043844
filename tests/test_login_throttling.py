"""Login throttling (django-axes) on /login/ and /admin/login/: lockout, page, cool-off, unlock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

LOGIN_PAGES = ["/login/", "/admin/login/"]
RIGHT = "the-right-password-1"
HOME = "10.0.0.1"


@pytest.fixture
def alice(db) -> User:
    return User.objects.create_user("alice", password=RIGHT, is_staff=True)


def attempt(path: str, password: str = "wrong", username: str = "alice", address: str = HOME):
    return Client().post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def lock_out(path: str, **kwargs) -> None:
    for _ in range(5):
        reply = attempt(path, **kwargs)
    assert reply.status_code == 429


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_four_wrong_passwords_are_answered_as_usual(path, alice):
    for _ in range(4):
        assert attempt(path).status_code == 200
    assert attempt(path, RIGHT).status_code == 302


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_the_fifth_locks_out_with_a_page_saying_so_and_when_to_try_again(path, alice, settings):
    for _ in range(4):
        attempt(path)
    before = timezone.now() + timedelta(minutes=15)
    locked = attempt(path)
    after = timezone.now() + timedelta(minutes=15)
    assert locked.status_code == 429
    assert locked["Retry-After"] == "900"
    page = locked.content.decode()
    assert "Too many failed logins" in page
    assert "<strong>alice</strong>" in page
    assert "Try again after <time" in page
    assert before.strftime("%H:%M") in page or after.strftime("%H:%M") in page
    assert "in 15 minutes" in page


@pytest.mark.parametrize("path", LOGIN_PAGES)
def test_while_locked_out_even_the_right_password_is_refused(path, alice):
    lock_out(path)
    assert attempt(path, RIGHT).status_code == 429


def test_the_lockout_holds_for_one_person_from_one_address_only(alice):
    User.objects.create_user("bob", password=RIGHT, is_staff=True)
    lock_out("/login/")
    assert attempt("/login/", RIGHT, address="10.0.0.2").status_code == 302
    assert attempt("/login/", RIGHT, username="bob").status_code == 302


def test_a_lockout_on_one_page_holds_on_the_other(alice):
    lock_out("/login/")
    assert attempt("/admin/login/", RIGHT).status_code == 429


def test_after_the_cool_off_the_right_password_works_again(alice):
    lock_out("/login/")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert attempt("/login/", RIGHT).status_code == 302


def test_a_good_login_clears_the_count(alice):
    for _ in range(4):
        attempt("/login/")
    assert attempt("/login/", RIGHT).status_code == 302
    for _ in range(4):
        assert attempt("/login/").status_code == 200


def staff_with(*codenames: str) -> Client:
    user = User.objects.create_user("helpdesk", password=RIGHT, is_staff=True)
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="axes")
        )
    client = Client()
    client.force_login(user)
    return client


def test_staff_who_may_delete_access_attempts_unlock_from_the_admin(alice):
    lock_out("/login/")
    helpdesk = staff_with("view_accessattempt", "delete_accessattempt")
    listing = helpdesk.get("/admin/axes/accessattempt/")
    assert listing.status_code == 200 and "alice" in listing.content.decode()
    row = AccessAttempt.objects.get(username="alice")
    reply = helpdesk.post(f"/admin/axes/accessattempt/{row.pk}/delete/", {"post": "yes"})
    assert reply.status_code == 302
    assert attempt("/login/", RIGHT).status_code == 302


def test_staff_who_may_only_look_cannot_unlock(alice):
    lock_out("/login/")
    viewer = staff_with("view_accessattempt")
    row = AccessAttempt.objects.get(username="alice")
    assert (
        viewer.post(f"/admin/axes/accessattempt/{row.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert attempt("/login/", RIGHT).status_code == 429


def test_the_readme_reset_command_unlocks_one_person(alice, capsys):
    lock_out("/login/")
    call_command("axes_reset_username", "alice")
    assert attempt("/login/", RIGHT).status_code == 302


def test_behind_proxies_the_client_address_comes_from_x_forwarded_for(alice, settings):
    settings.CLIENT_IP_PROXY_COUNT = 1
    for _ in range(5):
        Client().post(
            "/login/",
            {"username": "alice", "password": "wrong"},
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_FORWARDED_FOR="203.0.113.9",
        )
    assert AccessAttempt.objects.get(username="alice").ip_address == "203.0.113.9"
    other_client = Client().post(
        "/login/",
        {"username": "alice", "password": RIGHT},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR="spoofed, 198.51.100.4",
    )
    assert other_client.status_code == 302


@pytest.mark.parametrize(
    "forwarded",
    ["not-an-ip", "203.0.113.9:4711", "<script>", "999.1.1.1", "unknown", "203.0.113.9 x"],
)
def test_a_forwarded_entry_that_is_not_an_address_counts_as_none(alice, settings, forwarded):
    settings.CLIENT_IP_PROXY_COUNT = 1
    reply = Client().post(
        "/login/",
        {"username": "alice", "password": "wrong"},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR=forwarded,
    )
    assert reply.status_code == 200
    # As documented: no address from the proxies, so the connection's own.
    assert AccessAttempt.objects.get(username="alice").ip_address == "127.0.0.1"


def test_an_ipv6_forwarded_entry_is_counted_as_that_address(alice, settings):
    settings.CLIENT_IP_PROXY_COUNT = 1
    Client().post(
        "/login/",
        {"username": "alice", "password": "wrong"},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR="spoofed, 2001:db8::7",
    )
    assert AccessAttempt.objects.get(username="alice").ip_address == "2001:db8::7"
