"""A host's parts of erasures asked for across the fleet, carried out by its own jobs.

``POST /fleet/principals/<id>/erase/`` records one :class:`FleetErasure` with a part
per host. Only a process beside a store may delete from it, so each host takes its
own part in its next ``sync_index`` pass (:func:`carry_out_parts`): it asks its job
worker for the erasure of the principal (:func:`~.erasure.request_erasure`, the same
job and receipt as one host's erasure), then on later passes copies the receipt's
final word to the part. A host that is down keeps its part pending until it is back.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Exists, OuterRef

from sessions_admin.deletion.erasure import request_erasure
from sessions_admin.deletion.results import Actor
from sessions_admin.ourdata.erasures import Erasure, shown_principal
from sessions_admin.ourdata.fleet.models import (
    FleetErasure,
    FleetErasurePart,
    FleetHost,
    FleetSession,
    exact_key,
)
from sessions_admin.ourdata.storeids import decode_id, encode_id
from sessions_admin.ourdata.storename import current_store
from sessions_admin.store.connection import StoreError

logger = logging.getLogger("sessions_admin.fleet")

Status = FleetErasure.Status
#: A receipt's final statuses, and the part's for each.
FINAL = {Erasure.Status.OK: Status.OK, Erasure.Status.PARTIAL: Status.PARTIAL,
         Erasure.Status.REFUSED: Status.REFUSED}  # fmt: skip


def carry_out_parts() -> int:
    """Take this host's pending parts, follow its running ones; returns parts changed.
    Never raises for a database that is away: the next pass tries again."""
    try:
        host = FleetHost.objects.filter(store_name=current_store()).first()
        if host is None:
            return 0
        changed = _add_late_parts(host)
        for part in FleetErasurePart.objects.filter(host=host, status=Status.PENDING):
            changed += _take(part)
        for part in FleetErasurePart.objects.filter(host=host, status=Status.RUNNING):
            changed += _follow(part)
        return changed
    except DatabaseError:
        logger.warning("the fleet's erasures could not be read; the next pass tries again")
        return 0


def _add_late_parts(host: FleetHost) -> int:
    """A part for each erasure asked for before this host joined the fleet, once it
    publishes a session of that principal (it is never silently skipped)."""
    holds = FleetSession.objects.filter(host=host, principal_key=OuterRef("principal_key"))
    missing = (
        FleetErasure.objects.filter(requested_at__lt=host.added_at)
        .exclude(parts__host=host)
        .filter(Exists(holds))
    )
    added = 0
    for erasure in missing:
        try:
            with transaction.atomic():
                FleetErasurePart.objects.create(erasure=erasure, host=host, late=True)
            added += 1
        except IntegrityError:
            pass  # another pass of this host added it meanwhile
    return added


def _take(part: FleetErasurePart) -> int:
    erasure = part.erasure
    principal = decode_id(erasure.principal_id_exact)
    actor = Actor(name=f"fleet erasure {erasure.pk} ({erasure.actor})"[:200], user=None)
    reference = f"fleet erasure {erasure.pk}" + (
        f": {erasure.reference}" if erasure.reference else ""
    )
    try:
        receipt = request_erasure(principal, actor=actor, reference=reference)
    except StoreError as exc:
        part.status, part.detail = Status.REFUSED, exc.message
        part.save(update_fields=["status", "detail", "updated_at"])
        return 1
    part.status, part.receipt = Status.RUNNING, receipt.pk
    part.save(update_fields=["status", "receipt", "updated_at"])
    return 1


def _follow(part: FleetErasurePart) -> int:
    receipt = Erasure.objects.filter(pk=part.receipt).first()
    if receipt is None:
        part.status, part.detail = Status.PARTIAL, f"receipt {part.receipt} is gone"
    elif receipt.status in FINAL:
        part.status = FINAL[receipt.status]
        part.sessions, part.messages = receipt.sessions, receipt.messages
        part.ids_sha256 = receipt.ids_sha256
        part.detail = f"receipt {receipt.pk}: {receipt.detail}".rstrip(": ")
    else:
        return 0
    part.save()
    return 1


def request_fleet_erasure(
    principal: str, *, user: object, reference: str, sessions: int, hosts: int
) -> FleetErasure:
    """Record the erasure and a pending part for every host of the fleet now (a host the
    directory shows without the principal's sessions checks its own store all the same)."""
    with transaction.atomic():
        erasure = FleetErasure.objects.create(
            user=user if getattr(user, "pk", None) else None,
            actor=getattr(user, "get_username", lambda: "?")()[:200],
            principal=shown_principal(principal),
            principal_id_exact=encode_id(principal),
            principal_key=exact_key(principal),
            reference=reference[:200],
            sessions_seen=sessions,
            hosts_seen=hosts,
        )
        FleetErasurePart.objects.bulk_create(
            FleetErasurePart(erasure=erasure, host=host) for host in FleetHost.objects.all()
        )
    return erasure


def erasure_json(erasure: FleetErasure) -> dict:
    """The fleet's receipt: each host's part and the totals; "ok" only when every part is."""
    parts = list(erasure.parts.all())
    return {
        "fleet_erasure": erasure.pk,
        "principal": erasure.principal,
        "status": erasure.status,
        "by": erasure.actor,
        "requested_at": erasure.requested_at.isoformat(),
        "reference": erasure.reference,
        "seen_when_asked": {"sessions": erasure.sessions_seen, "hosts": erasure.hosts_seen},
        "erased": {
            "sessions": sum(p.sessions for p in parts),
            "messages": sum(p.messages for p in parts),
        },
        "parts": [
            {
                "host": part.host.store_name,
                "status": part.status,
                "receipt": part.receipt,
                "receipt_url": (
                    f"{part.host.public_url}/principals/erasures/{part.receipt}/"
                    if part.receipt and part.host.public_url
                    else None
                ),
                "sessions": part.sessions,
                "messages": part.messages,
                "session_ids_sha256": part.ids_sha256,
                "detail": part.detail,
                "added_after_the_request": part.late,
            }
            for part in parts
        ],
    }
