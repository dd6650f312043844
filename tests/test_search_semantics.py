"""A hit is a message that contains the query, folded: checked against a Python reference."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index import search as index_search
from sessions_admin.ourdata.index.search import SearchQuery
from sessions_admin.ourdata.index.text import document, fold, fts_query, snippet
from tests.conftest import STORE_DB

TEXTS = [
    "Le RÉSUMÉ est prêt",
    "résumé sent to the café",
    "明日の東京都の天気は晴れ",
    "東京 weather",
    "deploy 🚀 done 🎉",
    "rocket 🚀🚀 twice",
    "100% sure it is 50_50",
    "100 percent; 50-50",
    "she said \"hello\" and 'bye'",
    "NEAR(a b) OR c AND NOT d* ^e col:f",
    "STRASSE und Straße",
    "Ǆemal ǅ ǆ ΣΊΣΥΦΟΣ σίσυφος",
    "plain ascii text with a Path /srv/app/3f9a2c/config.yaml",
]
QUERIES = [
    "résumé",
    "RÉSUMÉ",
    "東京都",
    "京都の",
    "🚀",
    "🚀🚀",
    "done 🎉",
    "100%",
    "50_50",
    "%",
    "_",
    '"hello"',
    "'bye'",
    "NEAR(a b)",
    "OR c AND",
    "d* ^e",
    "col:f",
    "straße",
    "STRASSE",
    "σίσυφος",
    "ǆemal",
    "3F9A2C",
    "/srv/app/3f9a2c/",
    "nothing like this",
    "e",
    "ab",
]


def reference(messages: dict[int, tuple], query: str) -> list[int]:
    folded = query.casefold()
    return sorted(
        (
            mid
            for mid, fields in messages.items()
            if any(f and folded in f.casefold() for f in fields)
        ),
        reverse=True,
    )


def found(query: str, **filters) -> list[int]:
    page = index_search.search(SearchQuery(q=query, **filters))
    return sorted(
        (hit.message.id for group in page.groups for hit in group.hits),
        reverse=True,
    )


@pytest.fixture
def corpus(store, var_dir):
    messages: dict[int, tuple] = {}
    for number, text in enumerate(TEXTS):
        sid = store.add_session(f"sess_{number}", title=f"t{number}")
        mid = store.add_message(sid, "user", text)
        messages[mid] = (text,)
        mid = store.add_message(
            sid,
            "tool",
            "tool call",
            tool_name="fs.read",
            # As the runtime writes JSON: non-ASCII characters as they are.
            tool_args=json.dumps({"path": text}, ensure_ascii=False),
            tool_result=json.dumps({"echo": text.upper()}, ensure_ascii=False),
        )
        args = store.execute(
            "SELECT tool_name, tool_args, tool_result FROM session_messages WHERE id = ?", (mid,)
        )[0]
        messages[mid] = ("tool call", *args)
    sync.sync_once()
    return messages


@STORE_DB
def test_results_equal_the_folded_substring_reference_for_every_script_and_symbol(corpus):
    wrong = {q: found(q) for q in QUERIES if found(q) != reference(corpus, q)}
    assert wrong == {}
    assert reference(corpus, "東京都") and reference(corpus, "%") and reference(corpus, "STRASSE")


@STORE_DB
def test_the_scan_without_an_index_gives_the_same_results(corpus, var_dir):
    from sessions_admin.ourdata import sidedb

    sidedb.side_path().unlink()
    wrong = {q: found(q) for q in QUERIES if found(q) != reference(corpus, q)}
    assert wrong == {}


@STORE_DB
def test_a_deleted_message_is_never_shown_even_before_the_index_forgets_it(store, corpus):
    victim = next(mid for mid, fields in corpus.items() if fields[0] == "東京 weather")
    store.execute("DELETE FROM session_messages WHERE id = ?", (victim,))
    hits = found("東京")
    assert victim not in hits
    # The other messages holding the query are still found, from the same index.
    assert hits and hits == [mid for mid in reference(corpus, "東京") if mid != victim]


@STORE_DB
def test_messages_newer_than_the_index_are_found_by_scanning_them(store, corpus):
    newer = store.add_message("sess_0", "assistant", "a brand new RÉSUMÉ")
    assert found("résumé")[0] == newer


@STORE_DB
def test_filters_apply_to_the_store_row(corpus):
    tool_hits = found("résumé", role="tool")
    assert tool_hits and all(corpus[mid][0] == "tool call" for mid in tool_hits)
    assert found("résumé", tool="no.such.tool") == []
    assert found("résumé", principal="user:alice") == reference(corpus, "résumé")
    assert found("résumé", principal="user:bob") == []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(min_size=0, max_size=40),
    start=st.integers(min_value=0, max_value=40),
    length=st.integers(min_value=3, max_value=8),
)
def test_any_slice_of_a_document_is_a_candidate_of_its_own_trigram_query(text, start, length):
    # The index's promise: every substring of the folded text has all its trigrams there.
    folded = fold(text)
    query = folded[start : start + length]
    if len(query) < 3 or "\x00" in text:
        return
    doc = document([text])
    grams = [gram for gram in fts_query(query).split('" "')]
    assert all(gram.strip('"').replace('""', '"') in doc for gram in grams)


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=60), query=st.text(min_size=1, max_size=5))
def test_snippets_cut_the_original_text_around_a_real_match(text, query):
    found_snippet = snippet([("content", text)], fold(query))
    if fold(query) in fold(text):
        assert found_snippet is not None
        assert fold(query) in fold(found_snippet.match) or fold(found_snippet.match) in fold(query)
        assert found_snippet.before + found_snippet.match + found_snippet.after in text
    else:
        assert found_snippet is None
