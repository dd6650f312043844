"""A page's read connection is kept for its thread's next request while the files are the
same, and never outlives them: a replaced, removed or newly made file gets a new one."""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager

from sessions_admin.ourdata import sidedb
from tests.conftest import STORE_DB


def make_side(path, value: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE marker (value TEXT)")
    conn.execute("INSERT INTO marker VALUES (?)", [value])
    conn.commit()
    conn.close()


@contextmanager
def reading():
    """A page's read connection, handed back (closed) at the end, as pages do."""
    conn = sidedb.connect_readonly()
    try:
        yield conn
    finally:
        if conn is not None:
            conn.close()


def marker() -> str | None:
    with reading() as conn:
        return None if conn is None else conn.execute("SELECT value FROM marker").fetchone()[0]


@STORE_DB
def test_the_next_request_of_a_thread_gets_its_connection_back(store, var_dir):
    make_side(sidedb.side_path(), "first")
    with reading() as first:
        pass
    with reading() as again:
        assert again is first
        assert again.execute("SELECT value FROM marker").fetchone() == ("first",)
        # Its page cache, kept with it, holds more than SQLite's 2 MB default.
        cache = again.execute("PRAGMA main.cache_size").fetchone()[0]
        assert cache == -sidedb.READ_CACHE_MB * 1024 and sidedb.READ_CACHE_MB > 2


@STORE_DB
def test_a_replaced_or_removed_file_is_never_read_through_a_kept_connection(store, var_dir):
    path = sidedb.side_path()
    make_side(path, "first")
    assert marker() == "first"
    make_side(var_dir / "other.sqlite3", "second")
    os.replace(var_dir / "other.sqlite3", path)  # a rebuild or a restore puts a new file
    assert marker() == "second"
    path.unlink()
    assert marker() is None


@STORE_DB
def test_a_text_file_made_after_the_connection_is_attached_to_the_next_one(store, var_dir):
    make_side(sidedb.side_path(), "first")
    with reading() as conn:
        names = {row[1] for row in conn.execute("PRAGMA database_list")}
    assert sidedb.TEXT_SCHEMA not in names
    make_side(sidedb.text_path(), "text")
    with reading() as conn:
        assert conn.execute("SELECT value FROM text.marker").fetchone() == ("text",)


@STORE_DB
def test_a_connection_left_in_a_transaction_comes_back_out_of_it(store, var_dir):
    make_side(sidedb.side_path(), "first")
    with reading() as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT value FROM marker").fetchone()
    with reading() as again:
        assert again is conn and not again.in_transaction


@STORE_DB
def test_connections_open_at_once_and_in_other_threads_are_their_own(store, var_dir):
    make_side(sidedb.side_path(), "first")
    outer = sidedb.connect_readonly()
    inner = sidedb.connect_readonly()
    assert inner is not outer
    inner.close()
    outer.close()  # one is kept; the other is closed
    kept = sidedb.connect_readonly()
    assert kept is inner
    others: list = []
    thread = threading.Thread(target=lambda: others.append(sidedb.connect_readonly()))
    thread.start()
    thread.join()
    try:
        assert others[0] is not kept
        assert others[0].execute("SELECT value FROM marker").fetchone() == ("first",)
    finally:
        others[0].close()
        kept.close()
