"""What every admin page here shares: capped paging, store filters by index seeks, read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.views.main import ORDER_VAR, ChangeList
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.functional import cached_property

from sessions_admin import sqlhelpers
from sessions_admin.store import queries
from sessions_admin.store.cliptext import SHORT_TEXT_CHARS
from sessions_admin.store.spec import KNOWN_ROLES, PROFILES
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import as_time

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


def epoch(value: object) -> Any:
    """A datetime the admin formats, or what the store holds instead (described)."""
    value = as_time(value)
    moment = from_epoch_ms(value)  # type: ignore[arg-type]
    return moment if moment is not None else value


def prefix_range(term: str) -> tuple[str, str] | None:
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
