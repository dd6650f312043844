"""The audit trail: a DeletionAudit row around every delete, refusals included.

Every operation runs inside :func:`audited` (a job's runs count into theirs
through :func:`tallying`): a read-only store is refused
there, the refusal audited too; the row is saved "running" before the store is
touched; an exception saves it "failed" with what was counted so far; the
operation ends it with :meth:`AuditRun.finish` (or :meth:`AuditRun.save`).
Even a crash leaves a trace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from sessions_admin.deletion.results import Actor
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.review.forget import Forgotten
from sessions_admin.ourdata.storename import identity_problem
from sessions_admin.store.cascade import Counts, FramesReport
from sessions_admin.store.connection import StoreError, StoreReadOnly, is_read_only

#: Session ids listed in an audit row's target (the counts are always exact).
AUDIT_MAX_IDS = 1_000
#: Frame-directory refusals spelled out in an audit row's detail.
AUDIT_MAX_REFUSALS = 20
Outcome = DeletionAudit.Outcome


def start_audit(operation: str, actor: Actor, target: dict[str, Any]) -> DeletionAudit:
    """Create the "running" row of an operation, before it touches the store."""
    user = actor.user if getattr(actor.user, "pk", None) else None
    return DeletionAudit.objects.create(
        operation=operation,
        actor=actor.name[:200],
        user=user,
        target=target,
        outcome=Outcome.RUNNING,
    )


def _refusals_detail(detail: str, report: FramesReport | None) -> str:
    if report is not None and (others := report.describe_others()):
        # A directory of only FIFOs or symlinks was removed: say what it held.
        detail = "\n".join(filter(None, [detail, f"frames also held: {others}"]))
    if report is None or not report.refused:
        return detail
    shown = report.refused[:AUDIT_MAX_REFUSALS]
    refusals = "; ".join(f"{sid!r}: {why}" for sid, why in shown)
    more = len(report.refused) - len(shown)
    line = f"frames refused: {refusals}" + (f" (and {more} more)" if more > 0 else "")
    return "\n".join(filter(None, [detail, line]))


def save_audit(
    audit: DeletionAudit,
    counts: Counts,
    report: FramesReport | None,
    outcome: str,
    detail: str = "",
    *,
    finished: bool = True,
    forgotten: Forgotten | None = None,
) -> None:
    """Write the counts, the frames report and the outcome into ``audit``."""
    audit.sessions_deleted = counts.sessions
    audit.messages_deleted = counts.messages
    audit.state_deleted = counts.state
    if forgotten is not None:
        audit.notes_deleted = forgotten.notes
        audit.labels_removed = forgotten.labels
        audit.review_items_marked = forgotten.items
    if report is not None:
        audit.frame_dirs_removed = report.dirs_removed
        audit.frame_bytes_removed = report.bytes_removed
    audit.outcome = outcome
    audit.detail = _refusals_detail(detail, report)
    audit.finished_at = timezone.now() if finished else None
    audit.save()


class WrongStore(StoreError):
    """The data folder was made for another store: no delete may run against this one."""

    status_code = 503


def refuse_wrong_store() -> None:
    """Raise :class:`WrongStore` when the data folder belongs to another store."""
    if problem := identity_problem():
        raise WrongStore(problem)


def check_writable(operation: str, actor: Actor, target: dict[str, Any]) -> None:
    """Refuse (and audit the refusal) when the store is opened read-only, or is not
    the store this data folder was made for."""
    error: StoreError | None = None
    if problem := identity_problem():
        error = WrongStore(problem)
    elif is_read_only():
        error = StoreReadOnly()
    if error is not None:
        save_audit(
            start_audit(operation, actor, target), Counts(), None, Outcome.REFUSED, error.message
        )
        raise error


def failure_text(exc: BaseException) -> str:
    """An exception as a line of an audit row's detail."""
    if isinstance(exc, StoreError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


@dataclass
class AuditRun:
    """One audited operation: its row and what it has done so far.

    The operation adds to ``counts`` (and ``report``, when it removes frames) as it
    goes, so a failure records exactly what is gone. ``progress`` says how far it
    got ("stopped after 3 batches") for the detail of a failure.
    """

    audit: DeletionAudit
    counts: Counts = field(default_factory=Counts)
    report: FramesReport | None = None
    progress: Callable[[], str] | None = None
    ended: bool = False
    #: Notes, labels and queue items the deleted sessions took with them.
    forgotten: Forgotten = field(default_factory=Forgotten)

    @property
    def audit_id(self) -> int:
        return self.audit.pk

    def save(self, outcome: str, detail: str = "", *, finished: bool = True) -> None:
        """Record the outcome; a finished run is not overwritten by a later failure."""
        save_audit(
            self.audit,
            self.counts,
            self.report,
            outcome,
            detail,
            finished=finished,
            forgotten=self.forgotten,
        )
        self.ended = finished

    def finish(self, detail: str = "") -> None:
        """Done: "partly done" when a frames directory was refused, else "done"."""
        partial = self.report is not None and bool(self.report.refused)
        self.save(Outcome.PARTIAL if partial else Outcome.OK, detail)

    def failed(self, exc: BaseException) -> None:
        text = failure_text(exc)
        self.save(Outcome.FAILED, f"{self.progress()}: {text}" if self.progress else text)


#: The run in progress in this thread: :func:`count_forgotten` adds to it. A context
#: variable, not a parameter, because the cascade sits under every bulk form (and
#: whatever deletes next, such as a principal's erasure) and each already runs
#: inside :func:`audited`; threading a tally through each of them would be the same
#: count with more places to forget it.
_current_run: ContextVar[AuditRun | None] = ContextVar("deletion_audit_run", default=None)


def count_forgotten(forgotten: Forgotten) -> None:
    """Add what the cascade's sessions took from our review records to the running audit."""
    run = _current_run.get()
    if run is not None:
        run.forgotten.add(forgotten)


@contextmanager
def _guard(run: AuditRun) -> Iterator[AuditRun]:
    token = _current_run.set(run)
    try:
        yield run
    except BaseException as exc:
        if not run.ended:
            run.failed(exc)
        raise
    finally:
        _current_run.reset(token)


@contextmanager
def audited(
    operation: str,
    actor: Actor,
    target: dict[str, Any],
    *,
    report: FramesReport | None = None,
) -> Iterator[AuditRun]:
    """Run one delete under its audit row (refused first if the store is read-only)."""
    check_writable(operation, actor, target)
    with _guard(AuditRun(start_audit(operation, actor, target), report=report)) as run:
        yield run


@contextmanager
def tallying(audit: DeletionAudit | None) -> Iterator[AuditRun]:
    """Count what the cascade's sessions take from our review records onto ``audit``
    (a job's run); a failure leaves the row as it is, for the job's next run."""
    kept = Forgotten()
    if audit is not None:
        kept = Forgotten(audit.notes_deleted, audit.labels_removed, audit.review_items_marked)
    run = AuditRun(audit, forgotten=kept)  # type: ignore[arg-type]
    token = _current_run.set(run)
    try:
        yield run
    finally:
        _current_run.reset(token)
