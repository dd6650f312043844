"""``manage.py adopt_store``: this data folder now belongs to the store it is pointed at.

For a store whose file moved (a new disk, a renamed host home): our rows keep
the name they were written under, so notes, verdicts and receipts stay with it.
Never for a copy made to try something: give a copy a data folder of its own.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from sessions_admin.ourdata.storename import ensure_identity, read_identity, write_identity
from sessions_admin.store.feed import store_file


class Command(BaseCommand):
    help = "Record that this data folder belongs to the store it is pointed at now (a moved store)."

    def handle(self, *args, **options) -> None:
        store = store_file()
        before = read_identity()
        if before is not None and before.store == store:
            self.stdout.write(f"The data folder already belongs to {store}; nothing to do.")
            return
        identity = ensure_identity() if before is None else write_identity(store, before.name)
        self.stdout.write(
            f"The data folder now belongs to {identity.store}; our rows keep the name "
            f"{identity.name!r}."
        )
