"""A store planted with every hostile case (``sessions_admin.demo.hostile``), and a client on it."""

from __future__ import annotations

import os

import pytest
from django.test import Client
from hypothesis import HealthCheck, settings

from sessions_admin.demo.hostile import plant_hostile
from sessions_admin.models import DeletionAudit
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


# Property tests: a modest number of cases per test keeps the suite fast on two
# shared cores; no example database (runs are reproducible from the seed Hypothesis
# prints on a failure). HYPOTHESIS_PROFILE=deep runs many more, locally.
settings.register_profile(
    "ci",
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
settings.register_profile("deep", parent=settings.get_profile("ci"), max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
