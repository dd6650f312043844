"""Failures first in a browser: /failures/ to a group's calls, the list's failed-calls
switch, and a receipt that prints alone."""

from __future__ import annotations

from django.utils import timezone

from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.erasures import Erasure
from tests.conftest import STORE_DB


@STORE_DB
def test_failures_lead_from_every_tool_to_a_groups_calls(
    triage_store,
    logged_in_page,
    live_server,
):
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Failures").click()
    page.wait_for_url("**/failures/")
    page.get_by_role("link", name="all time").first.click()
    page.wait_for_url("**window=all**")
    rows = page.locator("table.failures tbody tr")
    assert rows.count() == 3
    first = rows.nth(0).locator("td")
    assert first.nth(0).inner_text() == "ETIMEDOUT: timed out after <n> ms"
    assert (first.nth(1).inner_text(), first.nth(2).inner_text()) == ("http.get", "2")
    assert rows.nth(0).locator("svg.sparkline").count() == 1
    rows.nth(0).get_by_role("link", name="its calls").click()
    page.wait_for_url("**/tools/http.get/**what=ETIMEDOUT**")
    assert page.locator("table.tool-calls tbody tr").count() == 2
    page.goto(live_server.url + "/sessions/")
    page.get_by_label("with failed tool calls").check()
    page.wait_for_url("**failed=1**")
    page.locator('tr[data-session-id="sess_good"]').wait_for()
    assert page.locator("table.sessions tbody tr").count() == 2  # both failed once at least
    assert page.console_errors == []


@STORE_DB
def test_a_receipt_prints_alone(store, logged_in_page, live_server):
    now = timezone.now()
    audit = DeletionAudit.objects.create(
        actor="admin", operation="erase_principal", finished_at=now, sessions_deleted=2,
        outcome="ok",
    )  # fmt: skip
    receipt = Erasure.objects.create(
        principal="user:zed", status="ok", verification={"sessions": 0}, reference="DSR-1",
        audit=audit,
    )  # fmt: skip
    page = logged_in_page
    page.goto(f"{live_server.url}/principals/erasures/{receipt.pk}/")
    assert page.locator("header.topbar").is_visible()
    page.emulate_media(media="print")
    assert page.locator("header.topbar").is_hidden()
    assert page.locator(".no-print").first.is_hidden()
    assert page.locator(".receipt-sentence").is_visible()
    assert "DSR-1" in page.locator("article.receipt").inner_text()
