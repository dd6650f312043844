"""Send the store models to the ``agents`` database and never migrate there."""

from __future__ import annotations

from typing import Any

STORE_ALIAS = "agents"


def is_store_model(model: Any) -> bool:
    return getattr(model, "_store_model", False)


class StoreRouter:
    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return STORE_ALIAS if is_store_model(model) else None

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return STORE_ALIAS if is_store_model(model) else None

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        if is_store_model(obj1) and is_store_model(obj2):
            return True
        return None

    def allow_migrate(
        self, db: str, app_label: str, model_name: str | None = None, **hints: Any
    ) -> bool | None:
        # Nothing ever migrates into the runtime's store, and the store models
        # (unmanaged anyway) have no business in Django's own database.
        if db == STORE_ALIAS:
            return False
        model = hints.get("model")
        if model is not None and is_store_model(model):
            return False
        return None
