"""In a build the text file may lag the side database by a few batches, never silently.

The searches scan what the text file lacks; a build that dies with the text file
behind gets that text back on the next pass (``catch_up``); a batch with any other
text work than new messages commits strictly.
"""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.ourdata.index import search, textindex, textwriter
from sessions_admin.store.feed import FeedMessage
from tests.conftest import STORE_DB
from tests.indexdata import fill, indexed_ids, matching


@pytest.fixture
def lagging_build(monkeypatch):
    """Passes of more than 10 messages are builds; the text file commits every 3 batches."""
    monkeypatch.setattr(sync.passes, "LONG_PASS", 10)
    monkeypatch.setattr(textwriter, "LAG_BATCHES", 3)


def text_mark() -> int:
    side = sidedb.connect()
    try:
        return textindex.TextIndex(side, sidedb.TEXT_SCHEMA).mark()
    finally:
        side.close()


def message(message_id: int, text: str) -> FeedMessage:
    none = (None,) * 11
    return FeedMessage(message_id, "sess_x", "user", text, *none)


def found_sessions(query: str) -> set[str]:
    return {group.session_id for group in search.search(search.SearchQuery(q=query)).groups}


@STORE_DB
def test_a_build_with_a_lagging_text_file_ends_with_every_message_indexed(
    store, var_dir, lagging_build
):
    fill(store, sessions=8, per_session=6)
    report = sync.sync_once(batch_size=4)
    assert report.messages == 48 and report.batches == 12
    assert matching("session") == indexed_ids()
    assert len(indexed_ids()) == 48
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()


@STORE_DB
def test_a_build_that_dies_with_the_text_file_behind_searches_exactly_then_catches_up(
    store, var_dir, lagging_build, monkeypatch
):
    ids = fill(store, sessions=8, per_session=6)
    everyone = set(ids)
    # The process dies before the text file's last commits: what it had not
    # committed is lost, while the side database kept its batches.
    monkeypatch.setattr(textwriter.TextWriter, "_commit_lagged", textwriter.TextWriter.abort)
    seen: list = []
    sync.sync_once(batch_size=4, should_stop=lambda: len(seen) >= 8, on_progress=seen.append)
    held = indexed_ids()
    assert len(held) == 32
    assert text_mark() < max(held)  # the text file is behind the side database...
    assert set(matching("session")) < set(held)
    assert found_sessions("session") == everyone  # ...and the search scans what it lacks
    monkeypatch.undo()
    report = sync.sync_once(batch_size=4)
    assert report.messages == 16
    assert matching("session") == indexed_ids()
    assert len(indexed_ids()) == 48
    assert text_mark() == max(indexed_ids())
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()


@STORE_DB
def test_text_work_other_than_new_messages_commits_with_its_batch(store, var_dir, lagging_build):
    flushes: list[tuple[bool, bool]] = []
    real_flush = textwriter.TextWriter.flush

    def watched(self):
        flushes.append((self.lag, self.strict))
        real_flush(self)

    fill(store, sessions=8, per_session=6)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textwriter.TextWriter, "flush", watched)
        sync.sync_once(batch_size=4)
    in_build = [strict for lag, strict in flushes if lag]
    assert len(in_build) == 12 and not any(in_build)  # new messages only: each lagged
    writer = textwriter.TextWriter()
    try:
        writer.build_mode(True)
        writer.add_messages([message(writer.queued_max + 1, "new")])
        assert not writer.strict
        writer.add_messages([message(1, "taken in again")])
        assert writer.strict
        writer.flush()  # strict: committed now, in order
        assert not writer.strict
        writer.build_mode(False)
    finally:
        writer.close()
