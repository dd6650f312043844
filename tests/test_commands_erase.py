"""``manage.py erase_principal``: the phrase or --yes, the same receipt, exit status by outcome."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.store import cascade as store_cascade
from tests import erasuredata as E
from tests.conftest import STORE_DB, point_store_at

pytestmark = [pytest.mark.usefixtures("fast_pacing", "var_dir"), STORE_DB]


def run(*args: str) -> str:
    out = StringIO()
    call_command("erase_principal", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_erases_with_yes_and_writes_the_receipt(store, tmp_path):
    world = E.build(store)
    target = tmp_path / "receipt.json"
    out = run(E.ALICE, "--yes", "--receipt", str(target))
    assert "3 sessions" in out and "sessions: 3 erased, 0 left" in out
    document = json.loads(target.read_text())
    assert document["status"] == "ok" and document["principal"] == E.ALICE
    assert document["session_ids_sha256"] == E.sha256_of(world.alice)
    assert Erasure.objects.get().pk == document["receipt"]
    assert E.exact_counts(store, E.ALICE) == (0, 0, 0)
    assert E.exact_counts(store, E.BOB)[0] == 1


def test_without_yes_it_asks_for_the_phrase_and_refuses_a_wrong_one(store, monkeypatch):
    E.build(store)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "erase 3 sessions of user:bob")
    with pytest.raises(CommandError, match="did not match"):
        run(E.ALICE)
    assert E.exact_counts(store, E.ALICE)[0] == 3 and not Erasure.objects.exists()
    monkeypatch.setattr("builtins.input", lambda prompt: "erase 3 sessions of user:alice")
    assert "Receipt" in run(E.ALICE)
    assert E.exact_counts(store, E.ALICE)[0] == 0


def test_without_a_terminal_it_needs_yes(store, monkeypatch):
    E.build(store)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(CommandError, match="--yes"):
        run(E.ALICE)
    assert E.exact_counts(store, E.ALICE)[0] == 3


def test_a_read_only_store_refuses_with_its_sentence(store):
    E.build(store)
    point_store_at(store.path, read_only=True)
    with pytest.raises(CommandError, match="read-only mode"):
        run(E.ALICE, "--yes")
    assert not Erasure.objects.exists()


def test_the_receipt_never_goes_into_the_stores_folder(store):
    E.build(store)
    with pytest.raises(CommandError, match="store's own folder"):
        run(E.ALICE, "--yes", "--receipt", str(store.path.parent / "receipt.json"))
    assert E.exact_counts(store, E.ALICE)[0] == 3


def test_a_partial_erasure_exits_3_and_prints_what_is_left(store, monkeypatch):
    world = E.build(store)
    real = store_cascade.frames.remove_session_dir

    def refuse_one(root, session_id):
        if session_id == world.alice[0]:
            raise PermissionError(13, "Permission denied")
        return real(root, session_id)

    monkeypatch.setattr(store_cascade.frames, "remove_session_dir", refuse_one)
    out = StringIO()
    with pytest.raises(CommandError) as stopped:
        call_command("erase_principal", E.ALICE, "--yes", stdout=out, stderr=StringIO())
    assert stopped.value.returncode == 3
    assert "frame directories: 2 erased, 1 left" in out.getvalue()
