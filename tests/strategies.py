"""Hypothesis strategies for data the runtime (or a buggy writer) could leave behind.

* :func:`sqlite_values`: any SQLite storage class, with the edges that break naive
  code (epochs past year 9999, 64-bit extremes, text where a number is expected,
  BLOBs that are not UTF-8).
* :func:`json_texts`: JSON of any depth (tens of thousands of levels), size and
  numbers of hundreds of digits, plus broken JSON.
* :func:`session_rows`, :func:`message_rows`, :func:`state_rows`: rows for the three
  tables, each column drawing from the above (NOT NULL columns never NULL: SQLite
  enforces that one constraint).
* :func:`frame_files`: activity-frame files of any shape, and odd entries (a
  directory or FIFO named like a frame file, names that are not UTF-8).
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
EDGE_INTS = st.sampled_from(
    [0, -1, 1, 2**63 - 1, -(2**63), 99_999_999_999_999_999, 253_402_300_800_000, 1_764_000_000_000]
)
NUMBER_TEXT = st.sampled_from(["many", "²", "١٢٣", "", " 12 ", "1e308", "NaN", "-0", "0x10"])
#: Text of any Unicode, lone surrogates excluded (SQLite's TEXT is UTF-8).
ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=60)
NOT_UTF8 = st.sampled_from([b"\xff\xfe\x00binary\x80\x81\x82", b"\x80", b"", b"\xc3"]) | st.binary(
    max_size=40
)


def sqlite_values(*, null: bool = True) -> st.SearchStrategy[object]:
    """A value of any storage class: NULL, INTEGER, REAL, TEXT or BLOB."""
    values = st.one_of(
        INT64,
        EDGE_INTS,
        st.floats(allow_nan=False, allow_infinity=True),
        st.sampled_from([1.5, 1e308, -1e308, 1764000000000.25]),
        NUMBER_TEXT,
        ANY_TEXT,
        NOT_UTF8,
    )
    return st.none() | values if null else values


def _deep(depth: int, opener: str, closer: str, inner: str = "") -> str:
    return opener * depth + inner + closer * depth


def json_texts() -> st.SearchStrategy[str]:
    """JSON text a column or frame line may hold: valid or not, deep, wide, huge."""
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT
    documents = st.recursive(
        scalars,
        lambda children: (
            st.lists(children, max_size=5) | st.dictionaries(ANY_TEXT, children, max_size=5)
        ),
        max_leaves=30,
    ).map(lambda value: json.dumps(value, ensure_ascii=False))
    deep = st.integers(min_value=1, max_value=30_000).flatmap(
        lambda depth: st.sampled_from(
            [_deep(depth, "[", "]"), _deep(depth, '{"a":', "}", "1"), _deep(depth, "[", "")]
        )
    )
    huge_numbers = st.integers(min_value=20, max_value=600).map(
        lambda digits: '{"n": ' + "9" * digits + ', "e": 1e' + str(digits) + ', "ok": false}'
    )
    wide = st.integers(min_value=1, max_value=20_000).map(
        lambda n: "[" + ",".join("1" for _ in range(n)) + "]"
    )
    broken = st.sampled_from(['{"a": [1, 2', "NaN", '{"x": Infinity}', "", "{}}", "\x00"])
    return documents | deep | huge_numbers | wide | broken | ANY_TEXT


def _column(null: bool = True) -> st.SearchStrategy[object]:
    return sqlite_values(null=null)


def _json_column(null: bool = True) -> st.SearchStrategy[object]:
    return json_texts() | _column(null)


def session_rows(session_id: st.SearchStrategy[object]) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {
            "id": session_id,
            "target_key": _column(null=False),
            "profile_key": _column(null=False),
            "principal_id": _column(),
            "title": _column(),
            "turn_count": _column(),
            "created_at": _column(null=False),
            "last_active": _column(null=False),
        }
    )


def message_rows(session_id: object) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {
            "session_id": st.just(session_id),
            "role": st.sampled_from(["user", "assistant", "tool"]) | _column(null=False),
            "content": _json_column(null=False),
            "tool_name": _column(),
            "tool_call_id": st.sampled_from(["call_1", "call_2"]) | _column(),
            "tool_target": _column(),
            "tool_op": _column(),
            "tool_args": _json_column(),
            "tool_result": _json_column(),
            "tool_duration_ms": _column(),
            "trace_id": _column(),
            "span_id": _column(),
            "model_id": _column(),
            "ts": _column(null=False),
        }
    )


def state_rows(session_id: object) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(
        {
            "session_id": st.just(session_id),
            "key": _column(null=False),
            "value": _json_column(null=False),
            "updated_at": _column(null=False),
        }
    )


# --- Frame files -----------------------------------------------------------------------

_FRAME_FIELDS = st.sampled_from(["ts", "timestamp", "kind", "type", "traceId", "spanId", "name"])
_ODD_FIELD_VALUES = st.one_of(
    INT64,
    st.integers(min_value=10**20, max_value=10**40),
    st.floats(allow_nan=False),
    ANY_TEXT,
    st.lists(st.integers(), max_size=3),
    st.none(),
)


def frame_lines() -> st.SearchStrategy[bytes]:
    objects = st.dictionaries(_FRAME_FIELDS | ANY_TEXT, _ODD_FIELD_VALUES, max_size=6).map(
        lambda data: json.dumps(data, ensure_ascii=False).encode("utf-8")
    )
    raw = st.sampled_from(
        [b"", b"\x00\x00", b"\xff\xfe binary \x80", b"42", b'"text"', b"[1, 2", b"NaN"]
    )
    json_line = json_texts().map(lambda text: text.encode("utf-8", "surrogatepass"))
    line = objects | raw | json_line | st.binary(max_size=80)
    ending = st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\x00\n"])
    return st.tuples(line, ending).map(lambda pair: pair[0].replace(b"\n", b" ") + pair[1])


def frame_contents() -> st.SearchStrategy[bytes]:
    """A whole file: empty, lines of any shape, maybe cut mid-line."""
    cut = st.sampled_from([b"", b'{"ts": 1, "kind": "cu', b"\xff"])
    return st.tuples(st.lists(frame_lines(), max_size=12), cut).map(
        lambda parts: b"".join(parts[0]) + parts[1]
    )


#: Request ids (the middle of ``activity-<id>.jsonl``), as bytes: some are not UTF-8.
REQUEST_NAMES = st.sampled_from([b"r1", b"r2", b"\xff\xfe", b"caf\xc3\xa9", b"x" * 200, b"a b"])


def frame_files() -> st.SearchStrategy[dict[bytes, bytes | str]]:
    """``{request id: content}``; a content of ``"dir"`` or ``"fifo"`` plants that entry."""
    content = frame_contents() | st.sampled_from(["dir", "fifo"])
    return st.dictionaries(REQUEST_NAMES, content, max_size=4)


class NotUtf8Text(bytes):
    """Bytes to store with the TEXT storage class (``CAST(? AS TEXT)``), not valid UTF-8."""


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


#: Bytes that cannot start, continue or end valid UTF-8 where they stand.
BAD_BYTES = st.sampled_from([b"\xe2\x82", b"\xff", b"\xc3", b"\x80\x81", b"\xed\xa0\x80"]) | (
    st.binary(min_size=1, max_size=6).filter(_not_utf8)
)
#: The valid text around the bad bytes: what a search must still find.
VALID_PART = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12
)


def not_utf8_texts() -> st.SearchStrategy[tuple[NotUtf8Text, str]]:
    """TEXT a writer cut mid-character: (the stored bytes, its longest valid part)."""
    return st.tuples(VALID_PART, BAD_BYTES, VALID_PART).map(
        lambda parts: (
            NotUtf8Text(parts[0].encode() + parts[1] + parts[2].encode()),
            max(parts[0], parts[2], key=len),
        )
    )


def insert_row(conn, table: str, row: dict[str, object]) -> None:
    """INSERT ``row``; a :class:`NotUtf8Text` value is stored as TEXT holding its bytes."""
    marks = ", ".join(
        "CAST(? AS TEXT)" if isinstance(v, NotUtf8Text) else "?" for v in row.values()
    )
    values = [bytes(v) if isinstance(v, NotUtf8Text) else v for v in row.values()]
    conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", values)
