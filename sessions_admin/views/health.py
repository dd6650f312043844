"""``GET /healthz``: anonymous, JSON, nothing sensitive (no paths, no data)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from sessions_admin.store.connection import store_status


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    status = store_status(fresh=True)
    return JsonResponse(status.public_dict(), status=200 if status.ok else 503)
