"""The sync keeps when its passes ran and why the last one failed (``sync.last_run``)."""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from tests.conftest import STORE_DB


def test_it_reports_nothing_before_any_sync(var_dir):
    run = sync.last_run()
    assert run == sync.LastRun()
    assert not run.failed


@STORE_DB
def test_a_pass_records_when_it_started_and_finished(store, var_dir):
    store.add_message(store.add_session("sess_a"), "user", "hello")
    sync.sync_once()
    run = sync.last_run()
    assert run.started_at_ms is not None
    assert run.finished_at_ms >= run.started_at_ms
    assert run.failed_at_ms is None and run.error is None and not run.failed


@STORE_DB
def test_a_failed_pass_records_its_time_and_a_one_line_reason(store, var_dir, monkeypatch):
    store.add_message(store.add_session("sess_a"), "user", "hello")

    def broken(side, batch):
        raise ValueError("the listener\nbroke")

    monkeypatch.setattr(SEARCH_INDEX, "add_messages", broken)
    with pytest.raises(ValueError):
        sync.sync_once()
    run = sync.last_run()
    assert run.failed
    assert run.error == "ValueError: the listener broke"
    assert run.failed_at_ms >= run.started_at_ms
    # The failed batch rolled back: the next pass takes the message in.
    monkeypatch.undo()
    assert sync.sync_once().messages == 1
    after = sync.last_run()
    assert not after.failed
    assert after.error == "ValueError: the listener broke"  # kept, but no longer the latest


@STORE_DB
def test_a_long_reason_is_cut(store, var_dir, monkeypatch):
    store.add_message(store.add_session("sess_a"), "user", "hello")

    def broken(side, batch):
        raise RuntimeError("x" * 5000)

    monkeypatch.setattr(SEARCH_INDEX, "add_messages", broken)
    with pytest.raises(RuntimeError):
        sync.sync_once()
    assert len(sync.last_run().error) == sync.ERROR_CHARS
