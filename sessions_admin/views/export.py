"""Export a whole session as JSON, JSONL or Markdown, streamed.

The response is a generator over :func:`sessions_admin.store.transcript.iter_messages`,
which reads the session in keyset chunks: memory holds one chunk whatever the
session's size, and the first bytes leave before the last message is read.

JSON columns (``tool_args``, ``tool_result``, state values) that hold valid
JSON are written as JSON, byte for byte as stored (no re-encoding, so the
export is faithful and fast); broken ones are written as a string under
``<column>_raw`` with the column itself ``null``, so the document always parses.

Text that is not valid UTF-8 keeps what it can: in JSON and JSONL such a value
becomes ``{"not_valid_utf8": true, "text": <the text, U+FFFD for the bad
bytes>, "hex": <the stored bytes>}`` (for a JSON column, under
``<column>_raw``); Markdown shows the text and says "not valid UTF-8".

A failure after the first bytes left (the status line is sent by then) ends
the stream with words that say so, never a quiet cut: a last line
``{"export_error": …}`` in JSONL, a closing paragraph in Markdown, and for
JSON a line that is not JSON, so no parser takes the half for the whole.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

import orjson
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_http_methods

from sessions_admin import params
from sessions_admin.access import staff_view
from sessions_admin.masking import Masker, masker
from sessions_admin.ourdata.review.summary import has_review, review_of_session
from sessions_admin.store import queries, transcript
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import OddValue, Undecodable, as_int, as_text, as_time
from sessions_admin.views.reveal import record_reveal

logger = logging.getLogger(__name__)

FORMATS = {
    "json": ("application/json", "json"),
    "jsonl": ("application/x-ndjson", "jsonl"),
    "md": ("text/markdown; charset=utf-8", "md"),
}
JSON_COLUMNS = ("tool_args", "tool_result")
_COLUMNS = transcript.MESSAGE_COLUMNS
_JSON_INDEXES = tuple(_COLUMNS.index(c) for c in JSON_COLUMNS)
_PLAIN = tuple(i for i, c in enumerate(_COLUMNS) if c not in JSON_COLUMNS)
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_valid = transcript.strict_json_valid
#: Lines are gathered into pieces of about this many characters per write.
FLUSH_CHARS = 256 * 1024


def _filename(session_id: str, extension: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", session_id).strip("._")[:80] or "session"
    return f"session-{stem}.{extension}"


#: A row of only these types takes the fast encoding (orjson). An Undecodable would
#: pass as its replaced text, a BLOB not at all, a float that is not finite as null; an
#: integer is the store's, 64 bits at most.
_FAST_TYPES = frozenset({int, str, type(None)})
_PLAIN_NAMES = tuple(_COLUMNS[i] for i in _PLAIN)
_plain_values = itemgetter(*_PLAIN)


def _plain(value: object) -> object:
    """A store value JSON can hold: a BLOB becomes ``{"blob": <hex>}``, nothing is lost."""
    if isinstance(value, bytes):
        return {"blob": value.hex(), "bytes": len(value)}
    if isinstance(value, Undecodable):
        return {"not_valid_utf8": True, "text": str(value), "hex": value.raw.hex()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"real": repr(value)}  # "inf", "-inf": JSON has no such number
    return value


def _json_field(name: str, text: object, *, single_line: bool) -> str:
    """``"name": <json>`` for valid JSON (as stored), else null plus ``name_raw``."""
    if text is None:
        return f'"{name}":null'
    if not isinstance(text, str) or isinstance(text, Undecodable):
        # A BLOB, text that is not UTF-8, or a number where JSON text was declared.
        return f'"{name}":null,"{name}_raw":{_encode(_plain(text))}'
    if _valid(text):
        if single_line and ("\n" in text or "\r" in text):
            # JSONL needs one line per message. In valid JSON a raw line break
            # can only be whitespace between tokens (strings hold it escaped),
            # so a space in its place changes nothing.
            text = text.replace("\r", " ").replace("\n", " ")
        return f'"{name}":{text}'
    return f'"{name}":null,"{name}_raw":{_encode(text)}'


def message_json(row: tuple, *, single_line: bool = False) -> str:
    """One message row as a JSON object (text)."""
    if _FAST_TYPES.issuperset(map(type, row)):
        # orjson writes these types as the standard encoder does, several times faster.
        head = orjson.dumps(dict(zip(_PLAIN_NAMES, _plain_values(row), strict=True))).decode()
    else:  # a BLOB, undecodable text or a float somewhere: only such rows pay for the conversion
        head = _encode({_COLUMNS[i]: _plain(row[i]) for i in _PLAIN})
    fields = ",".join(
        _json_field(_COLUMNS[i], row[i], single_line=single_line) for i in _JSON_INDEXES
    )
    return f"{head[:-1]},{fields}}}"


def _session_dict(session: queries.SessionRow) -> dict[str, Any]:
    # Odd values (OddValue, a str) are exported as the description staff saw;
    # undecodable text as what it holds (see the module's doc).
    return {column: _plain(getattr(session, column)) for column in queries.SESSION_COLUMNS}


#: The message columns that hold what people and tools said (masked in an export).
_SAID = tuple(_COLUMNS.index(c) for c in ("content", "tool_target", "tool_op", *JSON_COLUMNS))


def _messages(session_id: str, active: Masker | None) -> Iterator[tuple]:
    """The session's message rows as an export gives them: hidden values masked."""
    rows = transcript.iter_messages(session_id)
    if active is None:
        yield from rows
        return
    text, quiet = active.text, active.quiet
    for row in rows:
        # One quick test over the row's said columns together: most rows hold nothing.
        if quiet("\n".join([v for i in _SAID if isinstance(v := row[i], str)])):
            yield row
            continue
        shown = [text(row[i]) for i in _SAID]
        if all(a is b for a, b in zip(shown, (row[i] for i in _SAID), strict=True)):
            yield row  # nothing hidden: the row as read
            continue
        said = list(row)
        for i, value in zip(_SAID, shown, strict=True):
            said[i] = value
        yield tuple(said)


def _state(session_id: str, active: Masker | None) -> Iterator[tuple]:
    """The session's state rows (key, value, updated at), values masked."""
    for key, value, updated_at in transcript.iter_state(session_id):
        yield key, active.text(value) if active else value, updated_at


def _shown(session: queries.SessionRow, active: Masker | None) -> queries.SessionRow:
    """The session row as an export names it: its title masked."""
    return session if active is None else replace(session, title=active.text(session.title))


def _review(session_id: str, active: Masker | None) -> dict[str, Any]:
    """What reviewers wrote, their notes and verdict texts masked as the rest."""
    review = review_of_session(session_id)
    if active is not None:
        for entry in (*review["notes"], *review["verdicts"]):
            if entry.get("text"):
                entry["text"] = active.text(entry["text"])
    return review


def _chunked(lines: Iterable[str]) -> Iterator[bytes]:
    """Join many small strings into fewer, bigger writes."""
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line)
        if size >= FLUSH_CHARS:
            yield "".join(buffer).encode("utf-8")
            buffer, size = [], 0
    if buffer:
        yield "".join(buffer).encode("utf-8")


def export_json(session: queries.SessionRow, active: Masker | None) -> Iterator[str]:
    yield '{"format":"sessions-admin/session-export","version":1,'
    yield f'"exported_at":{_encode(datetime.now(UTC).isoformat())},'
    yield f'"session":{_encode(_session_dict(session))},"messages":['
    first = True
    for row in _messages(session.id, active):
        yield ("\n" if first else ",\n") + message_json(row)
        first = False
    yield '\n],"state":['
    first = True
    for key, value, updated_at in _state(session.id, active):
        head = _encode({"key": _plain(key), "updated_at": _plain(updated_at)})[:-1]
        value_field = _json_field("value", value, single_line=False)
        yield ("\n" if first else ",\n") + f"{head},{value_field}}}"
        first = False
    # What reviewers wrote (ourdata.review): labels, notes, verdicts.
    yield f'\n],"review":{_encode(_review(session.id, active))}}}\n'


def export_jsonl(session: queries.SessionRow, active: Masker | None) -> Iterator[str]:
    for row in _messages(session.id, active):
        yield message_json(row, single_line=True) + "\n"
    review = _review(session.id, active)
    if has_review(review):
        # One last line, not a message: what reviewers wrote about the session.
        yield _encode({"review": review}) + "\n"


def _fence(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0) if "`" in text else 0
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}\n"


def _when(epoch_ms: object) -> str:
    value = as_time(epoch_ms)
    if isinstance(value, OddValue):  # it may quote the stored text
        return _md_text(value)
    moment = from_epoch_ms(value)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else "—"


def _md_json(text: str) -> str:
    if isinstance(text, OddValue):
        return f"*({_md_text(text)})*\n"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return _fence(text) + "*(not valid JSON)*\n"
    if len(text) < 120 and "\n" not in text:
        return _fence(text, "json")
    try:
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
        pretty.encode("utf-8")
    except (ValueError, RecursionError, UnicodeEncodeError):
        pretty = text
    return _fence(pretty, "json")


def _md_inline(text: str | None) -> str:
    """``text`` as one inline code span, exactly (but for its whitespace, flattened
    to single spaces): the fence is a backtick run longer than any inside it."""
    if text is None:
        return ""
    flat = " ".join(text.split())
    if not flat:
        return "*(empty)*"
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    # A backtick at either end would join the fence; CommonMark strips one
    # space from each end of a span that has both, so padding is invisible.
    padded = f" {flat} " if "`" in (flat[0], flat[-1]) else flat
    span = f"{fence}{padded}{fence}"
    if isinstance(text, Undecodable):
        return f"{span} *({Undecodable.MARK})*"
    return span


#: What could start Markdown or HTML inside a line: emphasis, code, links and
#: images, autolinks and tags, entities, a heading's closing #s, GFM's ~ and |.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&#~|!{}])")


def _md_text(value: object) -> str:
    """Any value as plain text on one line of Markdown: whitespace flattened,
    every character that could start markup backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


def export_markdown(session: queries.SessionRow, active: Masker | None) -> Iterator[str]:
    title = _md_text(session.title) if session.title else "(untitled)"
    turns = session.turn_count
    yield f"# Session {_md_inline(session.id)}: {title}\n\n"
    yield (
        f"- target: {_md_inline(session.target_key)}\n"
        f"- profile: {_md_inline(session.profile_key)}\n"
        f"- principal: {_md_inline(session.principal_id) or '—'}\n"
        f"- turns: {_md_text(turns) if turns is not None else '—'}\n"
        f"- created: {_when(session.created_at)}\n"
        f"- last active: {_when(session.last_active)}\n\n## Transcript\n\n"
    )
    index = {name: i for i, name in enumerate(_COLUMNS)}
    for raw_row in _messages(session.id, active):
        # Markdown is for reading: a BLOB is described. SQLite's TEXT affinity
        # leaves only text, NULL or a BLOB in a text column, so one check per row.
        row = raw_row
        if bytes in map(type, raw_row):
            row = [raw_row[0], *(as_text(value) for value in raw_row[1:])]
        when = _when(raw_row[index["ts"]])
        role = _md_text(row[index["role"]]) if row[index["role"]] else "*(no role)*"
        parts = [f"### {role} · {when} · message {_md_text(row[0])}\n\n"]
        broken = [_COLUMNS[i] for i, value in enumerate(raw_row) if type(value) is Undecodable]
        if broken:
            parts.append(f"*({Undecodable.MARK}: {', '.join(broken)}; shown with �)*\n\n")
        meta = [
            f"{label} {_md_inline(row[index[column]])}"
            for label, column in (
                ("model", "model_id"),
                ("trace", "trace_id"),
                ("span", "span_id"),
                ("call", "tool_call_id"),
            )
            if row[index[column]]
        ]
        if meta:
            parts.append(" · ".join(meta) + "\n\n")
        if row[index["content"]]:
            parts.append(_fence(row[index["content"]]))
            parts.append("\n")
        if row[index["tool_name"]] or row[index["tool_args"]] or row[index["tool_result"]]:
            tool = [f"**tool** {_md_inline(row[index['tool_name']]) or '(no name)'}"]
            if row[index["tool_target"]]:
                tool.append(f"→ {_md_inline(row[index['tool_target']])}")
            if row[index["tool_op"]]:
                tool.append(f"· {_md_inline(row[index['tool_op']])}")
            if row[index["tool_duration_ms"]] is not None:
                tool.append(f"· {_md_text(as_int(raw_row[index['tool_duration_ms']]))} ms")
            parts.append(" ".join(tool) + "\n\n")
            for label, column in (("args", "tool_args"), ("result", "tool_result")):
                if row[index[column]] is not None:
                    parts.append(f"**{label}**\n\n{_md_json(row[index[column]])}\n")
        yield "".join(parts)
    yield "## State\n\n"
    for key, value, updated_at in _state(session.id, active):
        shown_key, shown_value = as_text(key), as_text(value) or ""
        heading = f"### {_md_inline(shown_key)} (updated {_when(updated_at)})"
        yield f"{heading}\n\n{_md_json(shown_value)}\n"
    yield from markdown_review(_review(session.id, active))


def markdown_review(review: dict[str, Any]) -> Iterator[str]:
    """The review section: labels, verdicts, notes (each note's text fenced, as written)."""
    if not has_review(review):
        return
    yield "## Review\n\n"
    if review["labels"]:
        yield "- labels: " + ", ".join(_md_inline(name) for name in review["labels"]) + "\n"
    for verdict in review["verdicts"]:
        line = f"- verdict **{_md_text(verdict['verdict'])}** in {_md_inline(verdict['queue'])}"
        line += f" by {_md_inline(verdict['reviewer'] or '?')} ({verdict['reviewed_at']})"
        yield line + (f": {_md_text(verdict['text'])}" if verdict["text"] else "") + "\n"
    yield "\n"
    for note in review["notes"]:
        on = f"message {note['message_id']}" if note["message_id"] is not None else "the session"
        yield f"### Note by {_md_inline(note['author'])} on {on} ({note['created_at']})\n\n"
        yield _fence(note["text"]) + "\n"


_WRITERS = {"json": export_json, "jsonl": export_jsonl, "md": export_markdown}

#: How each format says that the stream stopped early (see the module's doc).
_STOPPED = {
    # Not JSON on purpose: a parser fails instead of reading half a session as all of it.
    "json": lambda reason: f"\n!! export stopped: {reason}; this file is incomplete !!\n",
    "jsonl": lambda reason: _encode({"export_error": reason, "complete": False}) + "\n",
    "md": lambda reason: f"\n\n**Export stopped: {reason}. This file is incomplete.**\n",
}


def _guarded(fmt: str, session_id: str, lines: Iterator[str]) -> Iterator[str]:
    """``lines``, ended by the format's "stopped" words if anything fails mid-stream."""
    try:
        yield from lines
    except Exception as exc:  # noqa: BLE001 - the response has started: say so in the body
        # The access log has already written 200: this line is where the failure shows.
        logger.exception("export of session %r stopped mid-stream", session_id)
        yield _STOPPED[fmt](f"{type(exc).__name__} while reading the store")


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view()
def export(request: HttpRequest, session_id: str) -> HttpResponse | StreamingHttpResponse:
    """The session as a file, masked; a POST with a reason, from staff who may reveal,
    gives it unmasked and is recorded as a reveal of the whole session."""
    query = request.POST if request.method == "POST" else request.GET
    # A bad format raises BadParameter: the 400 page names the parameter.
    fmt: str = params.choice(query, "format", FORMATS, "json")  # type: ignore[assignment]
    session = queries.get_session(session_id)
    if session is None:  # deleted since the router looked
        raise Http404(f"No session with id {session_id!r} in the store.")
    active = masker()
    if request.method == "POST":
        record_reveal(request, session.id, message_id=None)
        active = None
    content_type, extension = FORMATS[fmt]
    lines = _guarded(fmt, session.id, _WRITERS[fmt](_shown(session, active), active))
    response = StreamingHttpResponse(_chunked(lines), content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(
        True, _filename(session.id, extension)
    )
    response["Cache-Control"] = "no-store"
    return response
