"""The shared SQL chores: ids in chunks and the ``?`` marks of an ``IN (…)`` list."""

from __future__ import annotations

import sqlite3

import pytest

from sessions_admin.sqlhelpers import CHUNK, chunks, placeholders


def test_no_ids_give_no_chunks():
    assert list(chunks([])) == []
    assert list(chunks(iter(()), 3)) == []


def test_an_exact_multiple_gives_full_chunks_only():
    assert list(chunks(range(6), 3)) == [[0, 1, 2], [3, 4, 5]]


def test_a_remainder_comes_last_in_a_shorter_chunk():
    assert list(chunks("abcdefg", 3)) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]


def test_the_default_size_is_the_one_chunk_constant():
    sizes = [len(chunk) for chunk in chunks(range(2 * CHUNK + 1))]
    assert sizes == [CHUNK, CHUNK, 1]


def test_chunks_are_lists_in_the_order_given_from_any_iterable():
    ids = dict.fromkeys(["b", "a", "c"])  # deduplicated, order kept, as the callers pass them
    assert list(chunks(ids, 2)) == [["b", "a"], ["c"]]


def test_a_size_below_one_is_refused():
    with pytest.raises(ValueError):
        list(chunks([1], 0))


@pytest.mark.parametrize(("n", "marks"), [(0, ""), (1, "?"), (3, "?, ?, ?")])
def test_placeholders_are_n_question_marks(n, marks):
    assert placeholders(n) == marks


def test_a_chunk_and_its_placeholders_run_as_one_in_list():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(2000)])
    wanted = list(range(0, 2000, 3))
    found = [
        row[0]
        for chunk in chunks(wanted)
        for row in conn.execute(f"SELECT id FROM t WHERE id IN ({placeholders(len(chunk))})", chunk)
    ]
    assert sorted(found) == wanted
