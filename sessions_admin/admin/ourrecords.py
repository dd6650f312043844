"""Our own records in the admin: the deletion audit, the erasure receipts, the labels."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from sessions_admin.admin.base import ReadOnlyAdmin
from sessions_admin.models import DeletionAudit, Erasure, Label, Reveal
from sessions_admin.ourdata.storename import current_store
from sessions_admin.templatetags.sessions_admin import short_id


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
    search_fields = ("principal", "audit__actor")
    date_hierarchy = "audit__started_at"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]

    @admin.display(description="principal")
    def principal_shown(self, obj: Erasure) -> str:
        return short_id(obj.principal, 24)

    @admin.display(description="receipt")
    def receipt_link(self, obj: Erasure) -> str:
        return format_html('<a href="{}">receipt {}</a>', reverse("erasure", args=[obj.pk]), obj.pk)


@admin.register(Reveal)
class RevealAdmin(ReadOnlyAdmin):
    """Every reveal of hidden values, read-only: who, when, which message, and why."""

    list_display = ("revealed_at", "actor", "session_short", "message_id", "reason")
    search_fields = ("actor", "reason")
    date_hierarchy = "revealed_at"

    @admin.display(description="session")
    def session_short(self, obj: Reveal) -> str:
        return short_id(obj.session_id)

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).filter(store_name=current_store())

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in self.model._meta.fields]
