"""The store normalisers: any storage class in, the declared type or a description out."""

from __future__ import annotations

from hypothesis import given, settings

from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import (
    MAX_EPOCH_MS,
    MIN_EPOCH_MS,
    OddValue,
    as_id,
    as_int,
    as_text,
    as_time,
    sqlite_order_key,
)
from tests.strategies import sqlite_values

MANY = settings(max_examples=300)  # pure functions: cheap, so many cases


@MANY
@given(value=sqlite_values())
def test_a_text_column_gives_text_none_or_a_description(value):
    shown = as_text(value)
    assert shown is None or isinstance(shown, str)
    if isinstance(value, bytes):
        assert shown == f"binary value, {len(value):,} bytes"


@MANY
@given(value=sqlite_values())
def test_an_id_is_always_text(value):
    assert isinstance(as_id(value), str)
    # A number reads as the text SQLite's TEXT affinity would have stored.
    assert isinstance(as_id(value), OddValue) == (value is None or isinstance(value, bytes))


@MANY
@given(value=sqlite_values())
def test_an_integer_column_gives_an_int_none_or_a_description(value):
    shown = as_int(value)
    assert shown is None or type(shown) is int or isinstance(shown, OddValue)
    if isinstance(value, str):
        assert shown.startswith("not a number: ")


@MANY
@given(value=sqlite_values())
def test_a_time_column_gives_a_showable_time_or_says_why_not(value):
    shown = as_time(value)
    if type(shown) is int:
        assert MIN_EPOCH_MS <= shown <= MAX_EPOCH_MS
        assert from_epoch_ms(shown) is not None
    else:
        assert shown is None or isinstance(shown, OddValue)
    if type(value) is int and not MIN_EPOCH_MS <= value <= MAX_EPOCH_MS:
        assert shown == f"time out of range ({value})"


@MANY
@given(values=sqlite_values().map(lambda v: [v]) | sqlite_values().map(lambda v: [v, v]))
def test_mixed_storage_classes_sort_without_raising(values):
    ordered = sorted(values, key=sqlite_order_key)
    assert len(ordered) == len(values) and sorted(ordered, key=sqlite_order_key) == ordered


def test_the_descriptions_read_as_the_issue_shows_them():
    assert as_int("many") == "not a number: 'many'"
    assert as_text(b"\xff\xfe\x00binary\x80\x81\x82") == "binary value, 12 bytes"
    assert as_time(99999999999999999) == "time out of range (99999999999999999)"
