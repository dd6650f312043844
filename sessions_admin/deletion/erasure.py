"""Erase one principal's data, then prove it: asking for the erasure, and its receipt.

:func:`request_erasure` is what ``POST /principals/<id>/erase/`` runs: the
phrase (:func:`erasure_phrase`) is checked against the store's own count *now*
(a changed count refuses with :class:`StalePhrase`, nothing recorded), then the
job, its deletion-audit row and its receipt are written, and the request
answers at once. ``manage.py run_jobs`` carries the job out
(:mod:`sessions_admin.deletion.jobs`): the runtime's cascade for every session
of the principal in paced batches, twice (sessions made meanwhile), frame
directories, the side index, rollups, review records and audit rows, then the
verification and the receipt (:mod:`sessions_admin.deletion.receipts`).
:func:`erase_principal` does the same in the calling process
(``manage.py erase_principal``) and returns the final receipt.

A read-only store refuses before anything, with its sentence and no receipt
(the refusal is audited, as every delete's is).
"""

from __future__ import annotations

from django.db import transaction

from sessions_admin.deletion.audit import check_writable, start_audit
from sessions_admin.deletion.results import Actor
from sessions_admin.deletion.worker import run_now
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.erasures import REFERENCE_CHARS, Erasure, shown_principal
from sessions_admin.ourdata.jobs import Job
from sessions_admin.ourdata.storeids import encode_id
from sessions_admin.store.connection import StoreError
from sessions_admin.store.principals import session_ids_of


def erasure_phrase(principal: str, sessions: int) -> str:
    """``erase 14 sessions of user:alice``: what staff type to confirm."""
    return f"erase {sessions} session{'s' if sessions != 1 else ''} of {principal}"


def phrase_matches(typed: str, expected: str) -> bool:
    """The typed phrase confirms: exactly, or with spaces around it that the principal
    does not end or start with (a principal ``"bob "`` keeps its own space)."""
    return typed == expected or typed.strip() == expected.strip() == expected


class StalePhrase(StoreError):
    """The phrase typed does not name the principal's current count: nothing was erased."""

    status_code = 400

    def __init__(self, expected: str, sessions: int) -> None:
        super().__init__(
            f"The confirmation did not match: the store now holds {sessions} session"
            f"{'s' if sessions != 1 else ''} of this principal. Nothing was erased; "
            f"type “{expected}” to erase them.",
        )
        self.expected = expected
        self.sessions = sessions


def unfinished_erasure(principal: str) -> Erasure | None:
    """The receipt of an erasure of ``principal`` still under way in this store, if any."""
    return (
        Erasure.of_principal(principal)
        .filter(job__isnull=False)
        .exclude(job__phase__in=[Job.Phase.COMPACTING, Job.Phase.DONE])
        .first()
    )


def request_erasure(
    principal: str, *, actor: Actor, confirm: str | None = None, reference: str = ""
) -> Erasure:
    """Record the erasure of ``principal`` as a job for the worker; returns its receipt.

    ``confirm`` must equal :func:`erasure_phrase` for the count the store holds
    now (None: the caller confirmed otherwise, ``--yes``); ``reference`` names the
    request it answers (a ticket). An erasure of the same principal still under
    way is returned instead of a second one.
    """
    if not isinstance(principal, str) or principal == "":
        raise StoreError("An erasure needs a principal: the empty one names no person.")
    operation = DeletionAudit.Operation.ERASE_PRINCIPAL
    shown = shown_principal(principal)
    target = {"principal": shown}
    if (key := encode_id(principal)) != f"t:{shown}":
        target["principal_key"] = key  # exactly, where the text alone would not tell
    check_writable(operation, actor, target)
    sessions = len(session_ids_of(principal))
    expected = erasure_phrase(principal, sessions)
    if confirm is not None and not phrase_matches(confirm, expected):
        raise StalePhrase(expected, sessions)
    if (running := unfinished_erasure(principal)) is not None:
        return running
    user = actor.user if getattr(actor.user, "pk", None) else None
    with transaction.atomic():
        audit = start_audit(operation, actor, target)
        job = Job.objects.create(
            kind=Job.Kind.ERASE_PRINCIPAL,
            actor=actor.name[:200],
            user=user,
            audit=audit,
            principal_key=encode_id(principal),
            expected=sessions,
        )
        return Erasure.objects.create(
            principal=shown,
            principal_key=encode_id(principal),
            reference=reference[:REFERENCE_CHARS],
            status=Erasure.Status.QUEUED,
            job=job,
            audit=audit,
        )


def erase_principal(
    principal: str, *, actor: Actor, confirm: str | None = None, reference: str = ""
) -> Erasure:
    """Erase ``principal`` in this process (the command line); returns the final receipt."""
    receipt = request_erasure(principal, actor=actor, confirm=confirm, reference=reference)
    run_now(receipt.job)
    receipt.refresh_from_db()
    return receipt
