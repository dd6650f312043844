"""Unmanaged, read-only models over the runtime's three session tables.

They map ``../shared/store-spec/schema.sql`` column for column. JSON columns
stay ``TextField``: the runtime's text is shown as it is and parsed in Python
(:mod:`sessions_admin.store.jsontext`), because a broken row must never break
a query. Nothing here can write: ``save()``, ``delete()`` and the queryset
writes raise :class:`StoreIsReadOnly`; deletes go through
:mod:`sessions_admin.deletion` only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from django.db import models

from sessions_admin.store.jsontext import ParsedJSON, parse_json_text
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import as_id, as_int, as_text, as_time


class _Normalised:
    """A store column read through :mod:`sessions_admin.store.values`.

    The admin reads store rows through the ORM; these fields make each value
    the declared type or an :class:`~sessions_admin.store.values.OddValue`,
    as the dashboard's own readers do. In the schema (and in migrations) each
    is the stock field it extends: only reading differs.
    """

    normalise: Any

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return type(self).normalise(value)

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()  # type: ignore[misc]
        base = type(self).__mro__[2]
        return name, f"django.db.models.{base.__name__}", args, kwargs


class StoreTextField(_Normalised, models.TextField):
    normalise = staticmethod(as_text)


class StoreKeyField(_Normalised, models.TextField):
    normalise = staticmethod(as_id)


class StoreIntegerField(_Normalised, models.IntegerField):
    normalise = staticmethod(as_int)


class StoreTimeField(_Normalised, models.BigIntegerField):
    normalise = staticmethod(as_time)


class StoreIsReadOnly(Exception):
    """Raised by every ORM write path on a store model."""


class ReadOnlyQuerySet(models.QuerySet):
    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise StoreIsReadOnly(
            "The store belongs to the agent runtime; only sessions_admin.deletion "
            "may delete from it, and nothing may update or insert."
        )

    update = delete = bulk_create = bulk_update = get_or_create = update_or_create = _refuse
    create = _refuse


class StoreModel(models.Model):
    _store_model: ClassVar[bool] = True

    objects = ReadOnlyQuerySet.as_manager()

    class Meta:
        abstract = True
        managed = False

    def save(self, *args: Any, **kwargs: Any) -> None:
        raise StoreIsReadOnly(
            f"{type(self).__name__} rows belong to the runtime and are never saved."
        )

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreIsReadOnly(f"Delete {type(self).__name__} rows through sessions_admin.deletion.")


class Session(StoreModel):
    id = StoreKeyField(primary_key=True)
    target_key = StoreKeyField()
    profile_key = StoreTextField(default="default")
    principal_id = StoreTextField(null=True)
    title = StoreTextField(null=True)
    turn_count = StoreIntegerField(null=True, default=0)
    created_at = StoreTimeField(help_text="epoch milliseconds")
    last_active = StoreTimeField(help_text="epoch milliseconds")

    class Meta(StoreModel.Meta):
        db_table = "sessions"
        ordering = ["-last_active", "-id"]
        default_permissions = ("view", "delete")
        permissions = [("clear_all_sessions", "Can clear every session in the store")]

    def __str__(self) -> str:
        return self.id

    @property
    def created(self) -> datetime | None:
        return from_epoch_ms(self.created_at)

    @property
    def last_active_at(self) -> datetime | None:
        return from_epoch_ms(self.last_active)


class Message(StoreModel):
    id = models.IntegerField(primary_key=True)
    session = models.ForeignKey(
        Session, on_delete=models.DO_NOTHING, db_constraint=False, related_name="messages"
    )
    role = StoreKeyField()
    content = StoreTextField()
    tool_name = StoreTextField(null=True)
    tool_call_id = StoreTextField(null=True)
    tool_target = StoreTextField(null=True)
    tool_op = StoreTextField(null=True)
    tool_args = StoreTextField(null=True)
    tool_result = StoreTextField(null=True)
    tool_duration_ms = StoreIntegerField(null=True)
    trace_id = StoreTextField(null=True)
    span_id = StoreTextField(null=True)
    model_id = StoreTextField(null=True)
    ts = StoreTimeField(help_text="epoch milliseconds")

    class Meta(StoreModel.Meta):
        db_table = "session_messages"
        ordering = ["ts", "id"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return f"{self.role} message {self.id}"

    @property
    def at(self) -> datetime | None:
        return from_epoch_ms(self.ts)

    @property
    def args(self) -> ParsedJSON | None:
        return parse_json_text(self.tool_args)

    @property
    def result(self) -> ParsedJSON | None:
        return parse_json_text(self.tool_result)


class SessionState(StoreModel):
    pk = models.CompositePrimaryKey("session_id", "key")
    session = models.ForeignKey(
        Session, on_delete=models.DO_NOTHING, db_constraint=False, related_name="state"
    )
    key = StoreKeyField()
    value = StoreTextField()
    updated_at = StoreTimeField(help_text="epoch milliseconds")

    class Meta(StoreModel.Meta):
        db_table = "session_state"
        ordering = ["key"]
        default_permissions = ()

    def __str__(self) -> str:
        return f"{self.session_id}:{self.key}"

    @property
    def updated(self) -> datetime | None:
        return from_epoch_ms(self.updated_at)

    @property
    def parsed(self) -> ParsedJSON | None:
        return parse_json_text(self.value)
