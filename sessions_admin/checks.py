"""System checks: a broken store is reported on the console at start.

Registered in :meth:`sessions_admin.apps.SessionsAdminConfig.ready`. ``runserver`` and
``check`` print these; the browser gets the same sentences
from :mod:`sessions_admin.middleware` and the health endpoint.
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from sessions_admin.ourdata.storename import identity_problem
from sessions_admin.store.connection import store_status


def check_store_schema(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    status = store_status(fresh=True)
    messages: list[checks.CheckMessage] = [
        checks.Error(
            problem,
            hint="See docs/operations.md: pointing it at a real host home.",
            id=f"sessions_admin.E00{min(index + 1, 9)}",
        )
        for index, problem in enumerate(status.errors)
    ]
    if status.ok and (problem := identity_problem()):
        messages.append(checks.Error(problem, id="sessions_admin.E010"))
    messages += [checks.Warning(warning, id="sessions_admin.W001") for warning in status.warnings]
    return messages
