"""``manage.py erase_principal <id> [--yes] [--receipt FILE]``: the CLI twin of the erase button.

Shows what the store holds for the principal, then asks for the same phrase
the page shows (``erase 14 sessions of user:alice``), checked against the
store's count when the erasure starts; ``--yes`` skips the question (for
scripts). Runs :func:`sessions_admin.deletion.erasure.erase_principal` and
prints the receipt; ``--receipt FILE`` also writes its JSON there (``-`` for
standard output). Exit status: 0 when the receipt says "ok", 3 when
"partial" (run it again to finish), 1 with a sentence on refusal.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from sessions_admin.deletion.erasure import erase_principal, erasure_phrase
from sessions_admin.humanize import file_size
from sessions_admin.management.deleting import command_actor
from sessions_admin.ourdata.erasures import KINDS, Erasure
from sessions_admin.store.connection import StoreError
from sessions_admin.store.principals import footprint
from sessions_admin.store.values import Undecodable


def exact_principal(argument: str) -> str:
    """The principal as typed: bytes that are not UTF-8 reach Python as lone surrogates
    (``surrogateescape``); they name TEXT stored with exactly those bytes."""
    if any("\udc80" <= ch <= "\udcff" for ch in argument):
        return Undecodable(os.fsencode(argument))
    return argument


def _receipt_path(raw: str) -> Path | None:
    """Where the JSON goes; never into the store's folder (nothing of ours goes there)."""
    if raw == "-":
        return None
    path = Path(raw).expanduser()
    store_folder = Path(settings.DATABASES["agents"]["NAME"]).resolve().parent
    if path.resolve().parent == store_folder:
        raise CommandError(f"--receipt {raw}: not in the store's own folder; choose another.")
    if not path.parent.is_dir():
        raise CommandError(f"--receipt {raw}: the folder {path.parent} does not exist.")
    return path


class Command(BaseCommand):
    help = (
        "Erase every session of one principal, its frames and our data about it; print a receipt."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("principal", help="the principal id, exactly as the store holds it")
        parser.add_argument("--yes", action="store_true", help="do not ask for the phrase")
        parser.add_argument("--receipt", metavar="FILE", help="also write the receipt's JSON here")
        parser.add_argument(
            "--reference",
            default="",
            help="the request this answers (a ticket), shown on the receipt",
        )

    def handle(self, *args, **options) -> None:
        principal = exact_principal(options["principal"])
        target = _receipt_path(options["receipt"]) if options["receipt"] else None
        try:
            found = footprint(principal)
            self.stdout.write(
                f"{principal}: {found.counts.describe()}, {found.frames.dirs:,} frame "
                f"directories ({file_size(found.frames.bytes)})"
            )
            confirm = None if options["yes"] else self._ask(principal, found.counts.sessions)
            receipt = erase_principal(
                principal,
                actor=command_actor("erase_principal"),
                confirm=confirm,
                reference=options["reference"].replace("\x00", ""),
            )
        except StoreError as exc:
            raise CommandError(exc.message) from exc
        self._print(receipt)
        text = json.dumps(receipt.as_json(), indent=2, ensure_ascii=False)
        if options["receipt"] == "-":
            self.stdout.write(text)
        elif target is not None:
            target.write_text(text + "\n", encoding="utf-8")
            self.stdout.write(f"Receipt written to {target}")
        if receipt.status != Erasure.Status.OK:
            raise CommandError(
                f"The erasure is {receipt.get_status_display().lower()}: run it again.",
                returncode=3,
            )

    def _ask(self, principal: str, sessions: int) -> str:
        phrase = erasure_phrase(principal, sessions)
        if not sys.stdin.isatty():
            raise CommandError("Refusing to erase without confirmation: pass --yes.")
        return input(f"Type “{phrase}” to erase: ")

    def _print(self, receipt: Erasure) -> None:
        self.stdout.write(f"Receipt {receipt.pk}: {receipt.get_status_display()}")
        counts = receipt.counts()
        for kind, label in KINDS:
            left = receipt.verification.get(kind, 0)
            self.stdout.write(f"  {label}: {counts[kind]:,} erased, {left:,} left")
        self.stdout.write(f"  frame bytes: {receipt.frame_bytes:,}")
        self.stdout.write(f"  SHA-256 of the erased session ids: {receipt.ids_sha256}")
        if receipt.detail:
            self.stdout.write(f"  {receipt.detail}")
