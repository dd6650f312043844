"""The admin's "Clear all sessions": exact counts, a typed phrase, then a job and its progress."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse

from sessions_admin import deletion, params
from sessions_admin.access import CLEAR_ALL_SESSIONS
from sessions_admin.converters import ID64
from sessions_admin.models import DeletionAudit
from sessions_admin.ourdata.storename import current_store
from sessions_admin.store.connection import StoreError, is_read_only
from sessions_admin.views.progress import job_sentence


class ClearAllPages:
    """The clear-all pages of the session admin (a mixin of :class:`~.store.SessionAdmin`)."""

    def get_urls(self) -> list:
        view = self.admin_site.admin_view
        return [
            path("clear-all/", view(self.clear_all_view), name="sessions_admin_session_clear_all"),
            path(
                f"clear-all/<{ID64}:audit_id>/",
                view(self.clear_all_step),
                name="sessions_admin_session_clear_all_step",
            ),
            *super().get_urls(),
        ]

    def _check_clear_all(self, request: HttpRequest) -> None:
        if not request.user.has_perm(CLEAR_ALL_SESSIONS):
            raise PermissionDenied("You need the permission to clear every session.")

    def clear_all_view(self, request: HttpRequest) -> HttpResponse:
        """Exact counts, a typed phrase, then a stepped clear with a progress bar."""
        self._check_clear_all(request)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Clear all sessions",
            "read_only": is_read_only(),
        }
        error = ""
        counts = deletion.count_all()
        if request.method == "POST":
            error = self._clear_all_refusal(request, counts.sessions)
            if not error:
                try:
                    job = deletion.request_clear_all(
                        actor=deletion.Actor.of(request.user),
                        expected_sessions=counts.sessions,
                        wipe_frames=request.POST.get("wipe_frames") == "1",
                    )
                except StoreError as exc:
                    error = exc.message
                else:
                    return HttpResponseRedirect(
                        reverse("admin:sessions_admin_session_clear_all_step", args=[job.audit_id])
                    )
        context.update(
            counts=counts,
            phrase=clear_all_phrase(counts.sessions),
            plain_phrase=clear_all_phrase(counts.sessions, separators=False),
            error=error,
            typed=request.POST.get("phrase", "") if error else "",
        )
        return render(
            request,
            "admin/sessions_admin/session/clear_all.html",
            context,
            status=400 if error else 200,
        )

    @staticmethod
    def _clear_all_refusal(request: HttpRequest, sessions: int) -> str:
        """Why the typed phrase does not confirm clearing ``sessions`` (the count the
        server just read), or "" when it does. The posted ``expected`` (the count the
        page showed) only tells a changed store from a mistyped phrase."""
        typed = request.POST.get("phrase", "").strip()
        if confirms_clear_all(typed, sessions):
            return ""
        shown = whole_or_none(request.POST.get("expected"))
        if shown is not None and shown != sessions and confirms_clear_all(typed, shown):
            return (
                f"The store changed since this page was drawn: it now holds {sessions:,} "
                f"session{'s' if sessions != 1 else ''}, not {shown:,}. Nothing was deleted; "
                "type the new phrase to go on."
            )
        return (
            f"The phrase does not match; nothing was deleted. Expected "
            f"“{clear_all_phrase(sessions)}”, typed “{typed[:200]}”."
        )

    def clear_all_step(self, request: HttpRequest, audit_id: int) -> HttpResponse:
        """The clear-all's progress while the worker carries its job out; then its
        outcome. htmx asks for the progress region every second."""
        self._check_clear_all(request)
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        audit = get_object_or_404(
            DeletionAudit.objects.select_related("job"),
            pk=audit_id,
            operation=DeletionAudit.Operation.CLEAR_ALL,
            store_name=current_store(),  # another store's clear-all is not ours to show
        )
        job = getattr(audit, "job", None)
        running = audit.outcome == DeletionAudit.Outcome.RUNNING and job is not None
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Clearing all sessions",
            "audit": audit,
            "job": job,
            "expected": job.total if job is not None else audit.sessions_deleted,
            "deleted": job.sessions if job is not None else audit.sessions_deleted,
            "progress": job_sentence(job) if running else "",
            "running": running,
            "audit_url": reverse("admin:sessions_admin_deletionaudit_change", args=[audit.pk]),
            "step_url": reverse("admin:sessions_admin_session_clear_all_step", args=[audit.pk]),
        }
        template = "admin/sessions_admin/session/clear_all_progress.html"
        if getattr(request, "htmx", False):
            template += "#progress"
        return render(request, template, context)


def clear_all_phrase(sessions: int, *, separators: bool = True) -> str:
    """The phrase that confirms clearing ``sessions``; with ``separators`` the number
    is written as the page shows it ("2,000"), without as a person may type it."""
    number = f"{sessions:,}" if separators else str(sessions)
    return f"delete {number} session{'s' if sessions != 1 else ''}"


def confirms_clear_all(typed: str, sessions: int) -> bool:
    """Whether ``typed`` is the phrase for ``sessions``, the number written with or
    without its thousands separators ("delete 2000 sessions" is the same intent;
    any other number, word or separator still refuses)."""
    return typed in (clear_all_phrase(sessions), clear_all_phrase(sessions, separators=False))


def whole_or_none(value: str | None) -> int | None:
    return params.whole_or_none({"n": value or ""}, "n")
