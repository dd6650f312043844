"""The audit trail: a DeletionAudit row around every delete, refusals included.

Each operation opens its :class:`~sessions_admin.models.DeletionAudit` row
("running") before it touches the store and saves the counts and outcome
after, so even a crash leaves a trace. A store in read-only mode is refused
here, with the refusal audited too.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from sessions_admin.store.connection import StoreError, StoreReadOnly, is_read_only
from sessions_admin.store.deletion.results import Actor, Counts, FramesReport

#: Session ids listed in an audit row's target (the counts are always exact).
AUDIT_MAX_IDS = 1_000


def _audit_start(operation: str, actor: Actor, target: dict[str, Any]):
    from sessions_admin.models import DeletionAudit

    user = actor.user if getattr(actor.user, "pk", None) else None
    return DeletionAudit.objects.create(
        operation=operation,
        actor=actor.name[:200],
        user=user,
        target=target,
        outcome=DeletionAudit.Outcome.RUNNING,
    )


def _audit_save(
    audit,
    counts: Counts,
    report: FramesReport | None,
    outcome: str,
    detail: str = "",
    *,
    finished: bool = True,
) -> None:
    audit.sessions_deleted = counts.sessions
    audit.messages_deleted = counts.messages
    audit.state_deleted = counts.state
    if report is not None:
        audit.frame_dirs_removed = report.dirs_removed
        audit.frame_bytes_removed = report.bytes_removed
        if others := report.describe_others():
            detail = "\n".join(filter(None, [detail, f"frames also held: {others}"]))
        if report.refused:
            refusals = "; ".join(f"{sid!r}: {why}" for sid, why in report.refused[:20])
            more = len(report.refused) - 20
            detail = "\n".join(
                filter(
                    None,
                    [
                        detail,
                        f"frames refused: {refusals}" + (f" (and {more} more)" if more > 0 else ""),
                    ],
                )
            )
    audit.outcome = outcome
    audit.detail = detail
    audit.finished_at = timezone.now() if finished else None
    audit.save()


def _refuse(operation: str, actor: Actor, target: dict[str, Any], error: StoreError) -> None:
    from sessions_admin.models import DeletionAudit

    audit = _audit_start(operation, actor, target)
    _audit_save(audit, Counts(), None, DeletionAudit.Outcome.REFUSED, error.message)


def _check_writable(operation: str, actor: Actor, target: dict[str, Any]) -> None:
    if is_read_only():
        error = StoreReadOnly()
        _refuse(operation, actor, target, error)
        raise error


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, StoreError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"
