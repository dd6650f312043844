"""The runtime's sessions and messages in the admin: read-only, deletes through the cascade."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.options import ActionLocation
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join

from sessions_admin import deletion
from sessions_admin.access import DELETE_SESSIONS
from sessions_admin.admin.base import (
    MESSAGE_PREVIEW_CHARS,
    SELECT_ACROSS_MAX,
    STATE_VALUE_PREVIEW,
    ProfileFilter,
    ReadOnlyStoreAdmin,
    RoleFilter,
    TargetFilter,
    epoch,
    prefix_range,
)
from sessions_admin.admin.clear_all import ClearAllPages
from sessions_admin.ids import session_url
from sessions_admin.masking import masker
from sessions_admin.models import Message, Session
from sessions_admin.params import MAX_SQLITE_INT
from sessions_admin.store import queries
from sessions_admin.store.cliptext import ELLIPSIS, clipped_expr
from sessions_admin.store.connection import StoreError, is_read_only
from sessions_admin.store.values import OddValue, as_id, as_text
from sessions_admin.templatetags.sessions_admin import short_id


def said(value: object) -> str:
    """What people and tools said, as the admin shows it: as text, hidden values masked."""
    text = as_text(value)
    active = masker()
    if active is None or not text:
        return text
    # Cut in SQL with "…": its end may be the start of a hidden value cut in two.
    return active.text(text, clipped=text.endswith(ELLIPSIS))


@admin.register(Session)
class SessionAdmin(ClearAllPages, ReadOnlyStoreAdmin):
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
        return said(obj.title_clip) or "(untitled)"

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
        bounds = prefix_range(term)
        if bounds is None:
            return (queryset.filter(id=term) if term else queryset), False
        return queryset.filter(id__gte=bounds[0], id__lt=bounds[1]), False

    @admin.display(description="last active", ordering="last_active")
    def last_active_shown(self, obj: Session) -> Any:
        return epoch(obj.last_active)

    @admin.display(description="created")
    def created_shown(self, obj: Session) -> Any:
        return epoch(obj.created_at)

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
                ((as_id(key), epoch(updated), as_text(value)) for key, value, updated in rows),
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
        return said(obj.content_head) or ""

    @admin.display(description="content")
    def content_shown(self, obj: Message) -> str:
        return format_html("<pre>{}</pre>", said(obj.content_clip) or "")

    @admin.display(description="tool args")
    def args_shown(self, obj: Message) -> str:
        text = said(obj.args_clip)
        return format_html("<pre>{}</pre>", text) if text else "—"

    @admin.display(description="tool result")
    def result_shown(self, obj: Message) -> str:
        text = said(obj.result_clip)
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
        return epoch(obj.ts)
