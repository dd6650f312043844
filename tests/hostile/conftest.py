"""A store planted with every hostile case (``store.demo.hostile``), and a client on it."""

from __future__ import annotations

import pytest
from django.test import Client

from sessions_admin.models import DeletionAudit
from sessions_admin.store.demo.hostile import plant_hostile
from tests.storebuilder import StoreBuilder


@pytest.fixture
def hostile_store(store: StoreBuilder) -> StoreBuilder:
    for number in range(3):
        session_id = store.add_session(f"normal-{number}")
        store.add_message(session_id, "user", "hello")
        store.add_message(session_id, "tool", "", tool_name="fs.read", tool_result={"ok": True})
    plant_hostile(store.path, store.frames_root)
    # Audit rows, so the audit changelist has a date drill-down and the
    # clear-all progress page something to show.
    for operation in (DeletionAudit.Operation.CLEAR_ALL, DeletionAudit.Operation.DELETE_SESSION):
        DeletionAudit.objects.create(
            operation=operation,
            actor="tests",
            target={"expected_sessions": 3},
            outcome=DeletionAudit.Outcome.OK,
        )
    return store


@pytest.fixture
def hostile_admin(hostile_store: StoreBuilder, admin_client: Client) -> Client:
    """A superuser on the hostile store, whose requests answer instead of raising."""
    admin_client.raise_request_exception = False
    return admin_client
