"""The Django admin over the store: read-only, fast on a big store, deletes via the cascade.

* ``Session`` and ``Message`` are registered read-only (no add, no change).
  ``SessionState`` has a composite key, which the admin cannot register; the
  session's page shows its state rows instead.
* Nothing here runs a full ``COUNT(*)`` or ``SELECT DISTINCT`` per page: the
  paginator counts at most ``COUNT_CAP + 1`` rows, the full count is off, the
  target filter lists targets by index seeks (``queries.distinct_targets``),
  search is an index range on the id, and the default order follows an index.
* Deletes (the admin's delete page, the "delete selected" action, the "Clear
  all sessions" page) all call :mod:`sessions_admin.deletion`, which
  writes the audit rows; the stock ``delete_selected`` would fail on the
  foreign keys and skip the audit. ``DeletionAudit`` is shown read-only, and
  beside it the erasure receipts (``Erasure``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import ActionLocation
from django.contrib.admin.views.main import ORDER_VAR, ChangeList
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join

from sessions_admin import deletion, params, sqlhelpers
from sessions_admin.access import CLEAR_ALL_SESSIONS, DELETE_SESSIONS
from sessions_admin.converters import ID64
from sessions_admin.ids import session_url
from sessions_admin.models import DeletionAudit, Erasure, Label, Message, Session
from sessions_admin.ourdata.storename import current_store
from sessions_admin.params import MAX_SQLITE_INT
from sessions_admin.store import queries
from sessions_admin.store.cliptext import SHORT_TEXT_CHARS, clipped_expr
from sessions_admin.store.connection import StoreError, is_read_only
from sessions_admin.store.spec import KNOWN_ROLES, PROFILES
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import OddValue, as_id, as_text, as_time
from sessions_admin.templatetags.sessions_admin import short_id
from sessions_admin.views.progress import job_sentence

#: "Delete selected" across every page takes at most this many sessions; more
#: is a job for the Clear-all page or ``manage.py clear_sessions``.
SELECT_ACROSS_MAX = 10_000
STATE_VALUE_PREVIEW = 2_000
MESSAGE_PREVIEW_CHARS = 2_000


class CappedPaginator(Paginator):
    """Counts at most ``COUNT_CAP + 1`` rows (``SELECT COUNT(*) FROM (… LIMIT n)``)."""

    @cached_property
    def count(self) -> int:
        return self.object_list[: sqlhelpers.COUNT_CAP + 1].count()

    @property
    def shown_count(self) -> str:
        """``1,234``, or ``more than 10,000`` when the count stopped at the cap
        (the admin's own templates would print the capped figure, 10001)."""
        cap = sqlhelpers.COUNT_CAP
        return f"more than {cap:,}" if self.count > cap else f"{self.count:,}"


def _epoch(value: object) -> Any:
    """A datetime the admin formats, or what the store holds instead (described)."""
    value = as_time(value)
    moment = from_epoch_ms(value)  # type: ignore[arg-type]
    return moment if moment is not None else value


def _prefix_range(term: str) -> tuple[str, str] | None:
    """``id >= term AND id < term'``: a prefix search the primary-key index can answer."""
    if not term:
        return None
    last = term[-1]
    if ord(last) >= 0x10FFFF:
        return None
    return term, term[:-1] + chr(ord(last) + 1)


class ChoiceFilter(admin.SimpleListFilter):
    """A list filter over one column whose choices are cheap to list.

    The admin's own filters run ``SELECT DISTINCT`` over the whole table on
    every changelist; these list known values (and keep an unknown one that
    came in the URL, so the filter still shows what is applied).
    """

    field: str

    def choices_for(self, request: HttpRequest) -> list[str]:
        raise NotImplementedError

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        values = list(self.choices_for(request))
        if self.value() and self.value() not in values:
            values.append(self.value())
        return [(value, value) for value in values]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        return queryset.filter(**{self.field: self.value()}) if self.value() else queryset


class TargetFilter(ChoiceFilter):
    """Targets found by index seeks (see ``queries.distinct_targets``)."""

    title = parameter_name = "target"
    field = "target_key"

    def choices_for(self, request: HttpRequest) -> list[str]:
        targets = queries.distinct_targets()
        # Not "": an empty parameter filters nothing, and its link would have no name.
        return [t for t in targets if isinstance(t, str) and 0 < len(t) <= SHORT_TEXT_CHARS]


class ProfileFilter(ChoiceFilter):
    """The built-in profiles."""

    title = parameter_name = "profile"
    field = "profile_key"

    def choices_for(self, request: HttpRequest) -> list[str]:
        return list(PROFILES)


class RoleFilter(ChoiceFilter):
    """The known message roles."""

    title = parameter_name = field = "role"

    def choices_for(self, request: HttpRequest) -> list[str]:
        return list(KNOWN_ROLES)


admin.site.site_header = "sessions-admin"
admin.site.site_title = "sessions-admin"
admin.site.index_title = "Administration"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Nothing is added or edited here; store rows are deleted only by our actions."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ShownOrderChangeList(ChangeList):
    """A changelist whose column headers mark the order its rows are in.

    Without ``?o=``, Django marks the columns of the admin's or the model's fixed
    ordering, not of ``get_ordering(request)``: the sessions said "last active,
    newest first" over rows in id order, and the messages "oldest first" over the
    newest.
    """

    def __init__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        self.request = request
        super().__init__(request, *args, **kwargs)

    def get_ordering_field_columns(self) -> dict[int, str]:
        if ORDER_VAR in self.params:
            return super().get_ordering_field_columns()
        columns: dict[int, str] = {}
        for field in self.model_admin.get_ordering(self.request):
            name = field.removeprefix("-")
            for index, attr in enumerate(self.list_display):
                if self.get_ordering_field(attr) == name:
                    columns[index] = "desc" if field.startswith("-") else "asc"
                    break
        return columns


class ReadOnlyStoreAdmin(ReadOnlyAdmin):
    paginator = CappedPaginator
    show_full_result_count = False
    # Facet counts are a GROUP BY over the whole table on every changelist.
    show_facets = admin.ShowFacets.NEVER
    list_per_page = 50

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields] + list(self.readonly_fields)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return ShownOrderChangeList


@admin.register(Session)
class SessionAdmin(ReadOnlyStoreAdmin):
    list_display = (
        "id",
        "title_shown",
        "target_shown",
        "profile_shown",
        "principal_shown",
        "turn_count",
        "last_active_shown",
    )
    list_filter = (TargetFilter, ProfileFilter)
    search_fields = ("id",)
    search_help_text = "An exact session id, or the start of one."
    readonly_fields = (
        "title_shown",
        "target_shown",
        "profile_shown",
        "principal_shown",
        "created_shown",
        "last_active_shown",
        "message_count",
        "state_rows",
        "dashboard_link",
    )
    fields = (
        "id",
        "title_shown",
        "target_shown",
        "profile_shown",
        "principal_shown",
        "turn_count",
        "created_shown",
        "last_active_shown",
        "message_count",
        "state_rows",
        "dashboard_link",
    )
    actions = ("delete_with_cascade",)
    change_list_template = "admin/sessions_admin/session/change_list.html"

    # -- listing ------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Text columns come clipped from SQLite (store.cliptext): a 5 MB title
        # must not be read for every row of the changelist.
        return (
            super()
            .get_queryset(request)
            .defer(*queries.CLIPPED_SESSION_COLUMNS)
            .annotate(
                **{f"{name}_clip": clipped_expr(name) for name in queries.CLIPPED_SESSION_COLUMNS}
            )
        )

    @admin.display(description="title")
    def title_shown(self, obj: Session) -> str:
        return as_text(obj.title_clip) or "(untitled)"

    @admin.display(description="target")
    def target_shown(self, obj: Session) -> str:
        return as_text(obj.target_key_clip)

    @admin.display(description="profile")
    def profile_shown(self, obj: Session) -> str:
        return as_text(obj.profile_key_clip)

    @admin.display(description="principal")
    def principal_shown(self, obj: Session) -> str:
        return as_text(obj.principal_id_clip) or "—"

    def get_ordering(self, request: HttpRequest) -> list[str]:
        # Newest first has an index only within one target; across all targets
        # the primary-key order is the one that stays fast on 500,000 rows.
        return ["-last_active"] if request.GET.get("target") else ["id"]

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        bounds = _prefix_range(term)
        if bounds is None:
            return (queryset.filter(id=term) if term else queryset), False
        return queryset.filter(id__gte=bounds[0], id__lt=bounds[1]), False

    @admin.display(description="last active", ordering="last_active")
    def last_active_shown(self, obj: Session) -> Any:
        return _epoch(obj.last_active)

    @admin.display(description="created")
    def created_shown(self, obj: Session) -> Any:
        return _epoch(obj.created_at)

    @admin.display(description="messages")
    def message_count(self, obj: Session) -> str:
        return f"{Message.objects.filter(session_id=obj.id).count():,}"

    @admin.display(description="state")
    def state_rows(self, obj: Session) -> str:
        rows = list(
            obj.state.annotate(
                key_clip=clipped_expr("key"), value_clip=clipped_expr("value", STATE_VALUE_PREVIEW)
            ).values_list("key_clip", "value_clip", "updated_at")
        )
        if not rows:
            return "no state rows"
        return format_html(
            "<table><thead><tr><th>key</th><th>updated</th><th>value</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            format_html_join(
                "",
                "<tr><td><code>{}</code></td><td>{}</td><td><pre>{}</pre></td></tr>",
                ((as_id(key), _epoch(updated), as_text(value)) for key, value, updated in rows),
            ),
        )

    @admin.display(description="dashboard")
    def dashboard_link(self, obj: Session) -> str:
        if isinstance(obj.id, OddValue):
            return "—"
        return format_html('<a href="{}">open in the dashboard</a>', session_url(obj.id))

    # -- deleting: always the cascade ---------------------------------------------

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm(DELETE_SESSIONS) and not is_read_only()

    def get_actions(
        self, request: HttpRequest, action_location: ActionLocation = ActionLocation.CHANGE_LIST
    ) -> dict:
        actions = super().get_actions(request, action_location=action_location)
        actions.pop("delete_selected", None)
        return actions

    def delete_model(self, request: HttpRequest, obj: Session) -> None:
        result = deletion.delete_session(obj.id, actor=deletion.Actor.of(request.user))
        self.message_user(request, f"Deleted session {short_id(obj.id)}: {result.describe()}")

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        ids = list(queryset.values_list("id", flat=True)[: SELECT_ACROSS_MAX + 1])
        deletion.delete_sessions(ids, actor=deletion.Actor.of(request.user))

    @admin.action(
        description="Delete selected sessions (with their messages and state)",
        permissions=["delete"],
    )
    def delete_with_cascade(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        ids = list(queryset.values_list("id", flat=True)[: SELECT_ACROSS_MAX + 1])
        if len(ids) > SELECT_ACROSS_MAX:
            self.message_user(
                request,
                f"More than {SELECT_ACROSS_MAX:,} sessions selected: use “Clear all sessions” "
                "or manage.py clear_sessions with a filter.",
                messages.ERROR,
            )
            return None
        if request.POST.get("confirmed") == "yes":
            try:
                result = deletion.delete_sessions(ids, actor=deletion.Actor.of(request.user))
            except StoreError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                return None
            self.message_user(request, f"Deleted {result.describe()}.", messages.SUCCESS)
            return None
        preview = deletion.count_ids(ids)
        context = {
            **self.admin_site.each_context(request),
            "title": "Delete the selected sessions?",
            "opts": self.model._meta,
            "ids": ids,
            "shown": ids[:50],
            "preview": preview,
            "select_across": request.POST.get("select_across", "0"),
            "action": "delete_with_cascade",
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(
            request, "admin/sessions_admin/session/delete_selected.html", context
        )

    # -- clear all --------------------------------------------------------------------

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
        shown = _int(request.POST.get("expected"))
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


def _int(value: str | None) -> int | None:
    return params.whole_or_none({"n": value or ""}, "n")


@admin.register(Message)
class MessageAdmin(ReadOnlyStoreAdmin):
    list_display = ("id", "session_link", "role_shown", "tool_shown", "short_content", "ts_shown")
    fields = (
        "id",
        "session_link",
        "role_shown",
        "tool_shown",
        "ts_shown",
        "content_shown",
        "args_shown",
        "result_shown",
        "ids_shown",
        "dashboard_link",
    )
    readonly_fields = fields
    list_filter = (RoleFilter,)
    search_fields = ("session_id",)
    search_help_text = "An exact session id (its messages), or a message id."

    def get_ordering(self, request: HttpRequest) -> list[str]:
        return ["-id"]  # the rowid: "ts" has no index of its own

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        # ASCII digits that fit a rowid ("²".isdigit() is true; int() refuses it).
        if term.isascii() and term.isdigit() and int(term) <= MAX_SQLITE_INT:
            return queryset.filter(id=int(term)) | queryset.filter(session_id=term), False
        return queryset.filter(session_id=term), False

    @admin.display(description="session")
    def session_link(self, obj: Message) -> str:
        session_id = as_id(obj.session_id)
        if isinstance(session_id, OddValue):  # a NULL or BLOB id: no URL names it
            return session_id
        shown = short_id(session_id)  # "(empty id)" for the empty one: a link needs a name
        return format_html('<a href="{}">{}</a>', session_url(session_id), shown)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Only heads of the text columns leave SQLite (store.cliptext); the
        # dashboard's session page loads a whole value on demand.
        return (
            super()
            .get_queryset(request)
            .only("id", "session_id", "ts", "tool_duration_ms")
            .annotate(
                role_clip=clipped_expr("role", 100),
                tool_clip=clipped_expr("tool_name", 200),
                content_head=clipped_expr("content", 80),
                content_clip=clipped_expr("content", MESSAGE_PREVIEW_CHARS),
                args_clip=clipped_expr("tool_args", MESSAGE_PREVIEW_CHARS),
                result_clip=clipped_expr("tool_result", MESSAGE_PREVIEW_CHARS),
                trace_clip=clipped_expr("trace_id", 200),
                span_clip=clipped_expr("span_id", 200),
                model_clip=clipped_expr("model_id", 200),
            )
        )

    @admin.display(description="role")
    def role_shown(self, obj: Message) -> str:
        return as_text(obj.role_clip)

    @admin.display(description="tool")
    def tool_shown(self, obj: Message) -> str:
        return as_text(obj.tool_clip) or "—"

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return as_text(obj.content_head) or ""

    @admin.display(description="content")
    def content_shown(self, obj: Message) -> str:
        return format_html("<pre>{}</pre>", as_text(obj.content_clip) or "")

    @admin.display(description="tool args")
    def args_shown(self, obj: Message) -> str:
        text = as_text(obj.args_clip)
        return format_html("<pre>{}</pre>", text) if text else "—"

    @admin.display(description="tool result")
    def result_shown(self, obj: Message) -> str:
        text = as_text(obj.result_clip)
        return format_html("<pre>{}</pre>", text) if text else "—"

    @admin.display(description="model · trace · span")
    def ids_shown(self, obj: Message) -> str:
        values = (obj.model_clip, obj.trace_clip, obj.span_clip)
        return " · ".join(as_text(value) or "—" for value in values)

    @admin.display(description="dashboard")
    def dashboard_link(self, obj: Message) -> str:
        session_id = as_id(obj.session_id)
        if isinstance(session_id, OddValue):
            return "—"
        url = session_url(session_id, at=obj.id) + f"#message-{obj.id}"
        return format_html('<a href="{}">open in the session page</a>', url)

    @admin.display(description="time", ordering="ts")
    def ts_shown(self, obj: Message) -> Any:
        return _epoch(obj.ts)


@admin.register(DeletionAudit)
class DeletionAuditAdmin(ReadOnlyAdmin):
    list_display = (
        "started_at",
        "operation",
        "actor",
        "outcome",
        "sessions_deleted",
        "messages_deleted",
        "state_deleted",
        "frame_dirs_removed",
        "notes_deleted",
        "labels_removed",
        "review_items_marked",
        "finished_at",
    )
    list_filter = ("operation", "outcome")
    search_fields = ("actor",)
    date_hierarchy = "started_at"

    def get_queryset(self, request: HttpRequest) -> Any:
        # Dashboards on several hosts may share this database: show this store's rows.
        return super().get_queryset(request).filter(store_name=current_store())

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    """Labels are defined here (name, colour, description); sessions get them on their page."""

    list_display = ("name", "color", "description")
    search_fields = ("name", "description")


@admin.register(Erasure)
class ErasureAdmin(ReadOnlyAdmin):
    """The erasure receipts, beside the deletion audit: read-only, kept when the data is gone."""

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).filter(store_name=current_store())

    list_display = (
        "started_at",
        "principal_shown",
        "actor",
        "status",
        "sessions",
        "messages",
        "frame_dirs",
        "finished_at",
        "receipt_link",
    )
    list_filter = ("status",)
    search_fields = ("principal", "actor")
    date_hierarchy = "started_at"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    @admin.display(description="principal")
    def principal_shown(self, obj: Erasure) -> str:
        return short_id(obj.principal, 24)

    @admin.display(description="receipt")
    def receipt_link(self, obj: Erasure) -> str:
        return format_html('<a href="{}">receipt {}</a>', reverse("erasure", args=[obj.pk]), obj.pk)
