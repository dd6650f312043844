"""Hidden until revealed: the detectors against a corpus with near-misses, the
transcript's pages never showing a planted secret, and the audited reveal."""

from __future__ import annotations

import html
import json
import re
import shutil

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sessions_admin.env import env_mask_rules
from sessions_admin.ids import session_url
from sessions_admin.masking import BUILTIN_RULES, Masker, luhn, masker, parse_rules
from sessions_admin.ourdata.reveals import Reveal
from tests.conftest import STORE_DB, staff_client_with

#: (kind, a value the rule must hide) for every built-in.
SECRETS = [
    ("email", "alice.smith+test@example.co.uk"),
    ("card", "4242 4242 4242 4242"),
    ("card", "5555-5555-5555-4444"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9"),
    ("credential", "Bearer abc123.DEF-456_ghi789xyz"),
    ("credential", "Basic dXNlcjpwYXNzd29yZA=="),
    ("key", "sk-proj-Abc123Def456Ghi789Jkl012"),
    ("key", "AKIAIOSFODNN7EXAMPLE"),
    ("key", "ghp_" + "a1B2c3D4" * 5),
    ("key", "github_pat_11ABCDEFG0abcdefghijklmnop"),
    ("key", "xoxb-1234567890-abcdefghij"),
    ("private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"),
]  # fmt: skip
#: Text that looks close and must stay visible.
NEAR_MISSES = [
    "order 1234567812345678 shipped",  # 16 digits that fail the Luhn check
    "use sk-learn and sk-image for it",  # sk- in prose
    "Bearer responsibilities are shared",
    "Basic information first",
    "mail me at alice@localhost",  # no domain suffix
    "version 1.2.3.4 of eyJ-something",
    "AKIA is not a key alone",
    "inputTokens went up",
]


def hidden(text: str) -> str:
    active = masker()
    assert active is not None
    return active.text(text)


@pytest.mark.parametrize(("kind", "secret"), SECRETS)
def test_every_built_in_hides_its_kind_and_keeps_the_text_around_it(kind, secret):
    shown = hidden(f"before {secret} after")
    assert shown.startswith("before ") and shown.endswith(" after")
    assert f"[{kind}" in shown
    core = secret.split(" ", 1)[-1] if kind == "credential" else secret
    assert core not in shown


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay_visible(text):
    assert hidden(text) == text


def test_a_card_keeps_its_last_four_digits_and_passes_luhn():
    assert hidden("pay with 4242424242424242") == "pay with [card ···4242]"
    assert luhn("4242424242424242") and not luhn("1234567812345678")


def test_one_value_gets_one_tag_and_the_tag_does_not_give_it_away():
    first, second = hidden("a@example.com"), hidden("write to a@example.com")
    assert first in second and first != hidden("b@example.com")
    assert "example" not in first


def test_secret_keys_are_hidden_at_any_depth_but_counts_stay():
    active = masker()
    value = {
        "user": {"Password": "hunter2", "API-Key": ["k1", "k2"], "note": "mail bob@x.io"},
        "auth": {"Authorization": "anything at all"},
        "max_tokens": 512,
        "inputTokens": 900,
        "access_token": "opaque",
    }
    shown = json.dumps(active.value(value))
    for secret in ("hunter2", "k1", "k2", "bob@x.io", "anything at all", "opaque"):
        assert secret not in shown
    assert '"max_tokens": 512' in shown and '"inputTokens": 900' in shown
    # The same in text that is not parsed (a cut value, a message's content).
    assert "hunter2" not in active.text('{"password": "hunter2", "n": 1}')


def test_an_operators_rule_and_a_built_in_switched_off():
    rules = parse_rules("email", {"ticket": r"T-[0-9]{4,}"})
    active = Masker(rules, b"k")
    assert active.text("T-12345 from a@example.com").startswith("[ticket · ")
    assert "a@example.com" in active.text("T-12345 from a@example.com")


@pytest.mark.parametrize(
    ("off", "rules", "says"),
    [
        ("", '{"bad": "("}', "'bad' has a bad pattern"),
        ("", '{"empty": "x*"}', "matches empty text"),
        ("", '{"Bad Name": "x"}', "must be a short lower-case word"),
        ("", "[1]", "must be a JSON object"),
        ("emails", "", "names no built-in rule: emails"),
    ],
)
def test_a_bad_rule_stops_the_start_with_a_sentence_naming_it(monkeypatch, off, rules, says):
    monkeypatch.setenv("SESSIONS_ADMIN_MASK_OFF", off)
    monkeypatch.setenv("SESSIONS_ADMIN_MASK_RULES", rules)
    with pytest.raises(ImproperlyConfigured, match=says.replace("(", r"\(")):
        env_mask_rules("SESSIONS_ADMIN_MASK_OFF", "SESSIONS_ADMIN_MASK_RULES")


def test_every_built_in_is_named_once():
    names = [rule.name for rule in BUILTIN_RULES]
    assert len(names) == len(set(names))


# --- The pages ----------------------------------------------------------------------

WORDS = st.sampled_from(["please", "check", "the", "deploy", "log", "wombat", "x"])
PLAIN = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)


def _session_with(store, secret: str, where: str, before: str, after: str) -> tuple[str, int]:
    sid = store.add_session("sess_m", title="t " + (secret if where == "title" else "x"))
    text = f"{before} {secret} {after}"
    folder = store.frames_root / sid
    folder.mkdir(parents=True, exist_ok=True)
    frame = {
        "ts": 1,
        "kind": "model.call",
        "payload": {"prompt": text if where == "frame" else before},
    }
    (folder / "activity-r1.jsonl").write_text(json.dumps(frame) + "\n")
    content = text if where == "content" else f"{before} {after}"
    args = {"q": before, "deep": [{"note": text}]} if where == "args" else {"q": before}
    result = {"password": secret, "ok": after} if where == "result" else {"ok": after}
    mid = store.add_message(sid, "tool", content, tool_name="http.get", tool_args=args,
                            tool_result=result)  # fmt: skip
    store.add_state(sid, "snapshot", {"env": text} if where == "state" else {"env": before})
    return sid, mid


@STORE_DB
@hsettings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    secret=st.sampled_from([s for _, s in SECRETS if "\n" not in s]),
    where=st.sampled_from(["content", "args", "result", "state", "title", "frame"]),
    before=PLAIN,
    after=PLAIN,
    near_miss=st.sampled_from(NEAR_MISSES),
)
def test_a_planted_secret_never_reaches_a_page_and_the_text_around_it_does(
    store, staff_client, secret, where, before, after, near_miss
):
    store.clear()
    shutil.rmtree(store.frames_root, ignore_errors=True)
    sid, mid = _session_with(store, secret, where, before, after)
    store.add_message(sid, "user", near_miss)
    pages = [
        session_url(sid),
        session_url(sid, "state"),
        session_url(sid, f"messages/{mid}/tool_args"),
        session_url(sid, f"messages/{mid}/tool_result", raw=1),
        session_url(sid, f"messages/{mid}/tool_args", raw=1),
        session_url(sid, "frames/r1"),
        session_url(sid, "export"),
        session_url(sid, "export", format="md"),
    ]
    core = secret.split(" ", 1)[-1] if secret.startswith(("Bearer", "Basic")) else secret
    bodies = []
    for page in pages:
        response = staff_client.get(page)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        bodies.append(content.decode())
    for page, body in zip(pages, bodies, strict=True):
        assert core not in body and json.dumps(core)[1:-1] not in body, page
    assert before.split()[0] in bodies[0]
    assert html.escape(near_miss) in bodies[0]  # near-misses stay as they are


@STORE_DB
def test_masked_values_are_read_by_a_screen_reader_by_their_kind(store, staff_client):
    sid = store.add_session("sess_sr")
    store.add_message(sid, "user", "write to alice@example.com please")
    body = staff_client.get(session_url(sid)).content.decode()
    assert '<span class="visually-hidden">hidden e-mail address </span>' in body
    assert '<span aria-hidden="true">[email · ' in body


@STORE_DB
def test_with_masking_switched_off_values_show_as_stored(store, staff_client, settings):
    settings.MASKING = False
    sid = store.add_session("sess_off")
    store.add_message(sid, "user", "write to alice@example.com please")
    assert "alice@example.com" in staff_client.get(session_url(sid)).content.decode()


# --- Reveal -------------------------------------------------------------------------


@pytest.fixture
def secret_message(store):
    sid = store.add_session("sess_rev")
    mid = store.add_message(sid, "user", "card 4242 4242 4242 4242 of alice@example.com")
    return sid, mid


def _reveal(client: Client, sid: str, **data) -> object:
    return client.post(session_url(sid, "reveal"), data, headers={"HX-Request": "true"})


@STORE_DB
def test_a_revealer_sees_the_message_in_full_once_and_it_is_recorded(secret_message):
    sid, mid = secret_message
    client = staff_client_with("reveal_hidden")
    page = client.get(session_url(sid)).content.decode()
    assert f'data-reveal-message="{mid}"' in page and 'id="reveal-form"' in page
    response = _reveal(client, sid, message=mid, reason="TICKET-42")
    body = response.content.decode()
    assert response.status_code == 200 and "alice@example.com" in body
    assert body.lstrip().startswith(f'<li id="message-{mid}"')
    assert "no-store" in response["Cache-Control"]
    record = Reveal.objects.get()
    assert (record.session_id, record.message_id, record.reason) == (sid, mid, "TICKET-42")
    assert record.actor == "may-reveal_hidden"
    # The page reloaded is masked again.
    assert "alice@example.com" not in client.get(session_url(sid)).content.decode()


@STORE_DB
def test_a_reveal_needs_the_permission_a_reason_and_a_csrf_token(secret_message, staff_client):
    sid, mid = secret_message
    assert _reveal(staff_client, sid, message=mid, reason="x").status_code == 403
    assert 'id="reveal-form"' not in staff_client.get(session_url(sid)).content.decode()
    client = staff_client_with("reveal_hidden")
    for reason in ("", "   "):
        refused = _reveal(client, sid, message=mid, reason=reason)
        assert refused.status_code == 400 and "reason" in refused.content.decode()
    assert _reveal(client, sid, message=mid + 999, reason="x").status_code == 404
    assert _reveal(client, sid, message="abc", reason="x").status_code == 400
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(User.objects.get(username="may-reveal_hidden"))
    assert _reveal(guarded, sid, message=mid, reason="x").status_code == 403
    assert Reveal.objects.count() == 0
    assert client.get(session_url(sid, "reveal")).status_code == 405


# --- Everywhere else a stored value reaches a person ----------------------------------

EMAIL = "carol.customer@example.org"


@pytest.fixture
def everywhere(store, var_dir):
    """One session holding the same address in its title, content, arguments, result,
    state, a frame and a reviewer's note; synced for search and the tool pages."""
    from sessions_admin.ourdata import sync

    sid = store.add_session("sess_all", title=f"refund for {EMAIL}")
    store.add_message(sid, "user", f"my address is {EMAIL} wombat")
    store.add_message(sid, "tool", "failed", tool_name="crm.lookup",
                      tool_args={"email": EMAIL}, tool_result={"error": f"no {EMAIL}"})  # fmt: skip
    store.add_state(sid, "snapshot", {"contact": EMAIL})
    folder = store.frames_root / sid
    folder.mkdir(parents=True)
    frame = {"ts": 1, "kind": "request.start", "payload": {"prompt": f"find {EMAIL}"}}
    (folder / "activity-r1.jsonl").write_text(json.dumps(frame) + "\n")
    sync.sync_once()
    return sid


@STORE_DB
def test_no_page_or_download_shows_a_hidden_value(everywhere, staff_client):
    sid = everywhere
    pages = [
        "/sessions/",
        "/search/?q=wombat",
        "/tools/crm.lookup/",
        "/tools/crm.lookup/?errors=1",
        "/failures/?window=all",
        session_url(sid),
        session_url(sid, "frames"),
        session_url(sid, "frames/r1"),
        session_url(sid, "export"),
        session_url(sid, "export", format="jsonl"),
        session_url(sid, "export", format="md"),
    ]
    for page in pages:
        response = staff_client.get(page)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert response.status_code == 200, page
        assert EMAIL.encode() not in body, page
    # Search still finds the session by the address itself, and shows its hits masked
    # (the query staff typed is theirs to see, in the box and the page's links).
    found = staff_client.get(f"/search/?q={EMAIL}").content.decode()
    results = found[found.index('<section id="results"') :]
    hits = "".join(re.findall(r'<ul class="hits">.*?</ul>', results, re.DOTALL))
    assert "sess_all" in results and "[email · " in hits and EMAIL not in hits


@STORE_DB
def test_the_admin_the_review_export_and_the_request_log_mask_too(everywhere, admin_client, caplog):
    from sessions_admin.models import Note
    from sessions_admin.ourdata.review import queues
    from sessions_admin.store.connection import run_sql

    sid = everywhere
    mid = run_sql("SELECT id FROM session_messages WHERE session_id = ? LIMIT 1", [sid])[0][0]
    for page in (
        "/admin/sessions_admin/session/",
        "/admin/sessions_admin/message/",
        f"/admin/sessions_admin/message/{mid}/change/",
    ):
        response = admin_client.get(page)
        assert response.status_code == 200 and EMAIL.encode() not in response.content, page
    Note.objects.create(session_id=sid, text=f"asked by {EMAIL}", author_name="a")
    queue = queues.make_queue("q", "/sessions/", [sid], capped=False, user=None)
    for fmt in ("csv", "jsonl"):
        response = admin_client.get(f"/reviews/{queue.pk}/export/?format={fmt}")
        text = b"".join(response.streaming_content)
        assert response.status_code == 200 and b"sess_all" in text
        assert EMAIL.encode() not in text and b"[email" in text, fmt
    with caplog.at_level("INFO", logger="sessions_admin.request"):
        admin_client.get(f"/search/?q={EMAIL}")
    logged = [getattr(record, "path", "") for record in caplog.records]
    assert any(path.startswith("/search/?q=") for path in logged)
    assert not any("carol.customer" in path for path in logged)


@STORE_DB
def test_a_revealer_may_export_a_session_unmasked_for_a_reason_and_it_is_recorded(
    secret_message, staff_client
):
    sid, _ = secret_message
    url = session_url(sid, "export")
    client = staff_client_with("reveal_hidden")
    page = client.get(session_url(sid)).content.decode()
    assert 'class="export-unmasked"' in page
    assert 'class="export-unmasked"' not in staff_client.get(session_url(sid)).content.decode()
    masked = b"".join(client.get(url, {"format": "jsonl"}).streaming_content)
    assert b"alice@example.com" not in masked
    response = client.post(url, {"format": "jsonl", "reason": "DSR-9"})
    assert b"alice@example.com" in b"".join(response.streaming_content)
    record = Reveal.objects.get()
    assert (record.message_id, record.reason) == (None, "DSR-9")
    assert "revealed the session" in str(record)
    assert client.post(url, {"format": "jsonl", "reason": " "}).status_code == 400
    assert staff_client.post(url, {"format": "jsonl", "reason": "x"}).status_code == 403
    assert Reveal.objects.count() == 1


@STORE_DB
def test_a_value_nested_too_deeply_to_walk_is_shown_as_masked_text(store, staff_client):
    deep = '{"a":' * 3000 + '"write to carol@example.org"' + "}" * 3000
    sid = store.add_session("sess_deep")
    mid = store.add_message(sid, "tool", "ok", tool_name="t", tool_args=deep)
    store.add_state(sid, "snapshot", deep)
    for page in (
        session_url(sid),
        session_url(sid, "state"),
        session_url(sid, f"messages/{mid}/tool_args"),
    ):
        response = staff_client.get(page)
        assert response.status_code == 200, page
        assert b"carol@example.org" not in response.content and b"[email" in response.content


# --- Values cut before they are shown ----------------------------------------------


def _active() -> Masker:
    active = masker()
    assert active is not None
    return active


@pytest.mark.parametrize(
    ("head", "shown"),
    [
        ("contact alice@exa…", "contact …"),  # an address cut in two
        ("card 4242 4242 42", "card "),  # a card number's first groups
        ('{"password": "correct horse bat', '{"password": "'),  # a secret string left open
        ("Authorization: Bearer abcdefg", "Authorization: Bearer "),
        ("then sk-abc", "then "),
        ("Waiting…", "Waiting…"),  # a plain word at the cut stays
        ("mail bob@example.com then", "mail [email · "),  # whole findings masked as ever
    ],
)
def test_the_end_of_a_clipped_value_never_shows_part_of_a_finding(head, shown):
    assert _active().text(head, clipped=True).startswith(shown)
    if "@example.com" not in head:
        assert _active().text(head, clipped=True) == shown


FILLER = st.text(alphabet=" xyz.", max_size=200)


@hsettings(max_examples=200, deadline=None)
@given(
    secret=st.sampled_from([s for _, s in SECRETS]),
    before=FILLER,
    after=FILLER,
    data=st.data(),
)
def test_a_window_never_shows_part_of_a_finding_that_crosses_its_edges(secret, before, after, data):
    text = f"{before} {secret} {after}"
    left = data.draw(st.integers(0, len(text)))
    right = data.draw(st.integers(left, len(text)))
    shown = _active().window(text, left, right)
    # What is hidden: a credential without its "Bearer ".
    core = secret.split(" ", 1)[-1] if secret.startswith(("Bearer", "Basic")) else secret
    at = text.index(core)
    if shown is None:
        # Nothing hidden in the window: it does not reach the finding at all.
        assert right <= at or left >= at + len(core)
        return
    masked, start, end = shown
    assert start <= left and end >= right
    # No 6 characters of the secret's own (filler holds none of its letters but "x"…).
    pieces = {core[i : i + 6] for i in range(len(core) - 5)}
    assert not any(piece in masked for piece in pieces if not set(piece) <= set(" xyz."))


@STORE_DB
def test_a_hidden_value_across_a_heads_or_a_snippets_edge_never_shows_in_part(
    store, var_dir, staff_client
):
    from sessions_admin.ourdata import sync
    from sessions_admin.ourdata.rollups.schema import HEAD_CHARS

    sid = store.add_session("sess_edge")
    # The address starts a few characters before the tool page's head ends.
    args = {"path": "p" * (HEAD_CHARS - 38), "owner": EMAIL}
    store.add_message(sid, "tool", "ok", tool_name="fs.stat", tool_args=args,
                      tool_result={"ok": True})  # fmt: skip
    # A search hit 60 characters from an address: the snippet's window crosses it.
    store.add_message(sid, "user", "wombat " + "w" * 55 + " " + EMAIL + " tail")
    sync.sync_once()
    for page in ("/tools/fs.stat/", "/search/?q=wombat"):
        body = staff_client.get(page).content.decode()
        assert "carol" not in body and "example.org" not in body, page
        assert "[email · " in body or page.startswith("/tools/"), page


#: Pieces of JSON text: plain words, near misses, secrets and the names of secret keys.
_PIECES = st.sampled_from(
    ["a", "x y", "1234", "42", "-", "_", "@", "ok", "max_tokens", "token", "Password", "note"]
    + [s for _, s in SECRETS if "\n" not in s]
    + NEAR_MISSES
)
_JSON_TEXT = st.lists(_PIECES, max_size=4).map(" ".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)


@hsettings(max_examples=300, deadline=None)
@given(value=_JSON)
def test_json_text_said_quiet_holds_nothing_a_walk_would_hide(value):
    """The transcript skips masking a tool value whose text is quiet: sound only if
    neither the walk of its value nor its text would have changed anything."""
    active = _active()
    raw = json.dumps(value, ensure_ascii=False)
    if active.quiet_json(raw):
        assert active.value(value, html=True) == value
        assert active.value(value) == value
        assert active.text(raw, html=True) == raw  # nor as text


def test_json_text_with_escapes_or_a_secret_is_never_said_quiet():
    active = _active()
    assert active.quiet_json('{"path": "/tmp/a", "n": 1}')
    assert not active.quiet_json('{"password": "hunter2"}')
    assert not active.quiet_json('{"to": "bob\\u0040example.com"}')  # an escaped "@"
    assert not active.quiet_json('{"note": "\\n"}')
    assert not active.quiet_json('{"mail": "a@example.com"}')


@hsettings(max_examples=200, deadline=None)
@given(texts=st.lists(_JSON_TEXT | st.text(max_size=40), max_size=6))
def test_texts_said_quiet_together_are_each_shown_as_they_are(texts):
    """A list page tests its titles once, joined: sound only if each would have been
    shown unchanged."""
    active = _active()
    if active.quiet_texts(texts):
        for text in texts:
            assert active.text(text, html=True) == text


def test_texts_with_a_finding_or_a_mark_are_not_said_quiet():
    active = _active()
    assert active.quiet_texts(["Fix the deploy", "rollback 12"])
    assert not active.quiet_texts(["Fix the deploy", "mail a@example.com"])
    assert not active.quiet_texts(["a \ue000 b"])


@hsettings(max_examples=200, deadline=None)
@given(content=_JSON_TEXT, args=_JSON, result=_JSON)
def test_a_message_said_quiet_shows_every_value_as_it_is(content, args, result):
    """The transcript tests a message's text and tool values once, together: sound only
    if neither its text nor its values, as text or parsed, would have been masked."""
    from sessions_admin.store.transcript import MessageRow, Value
    from sessions_admin.views.transcript_items import MessageItems

    items = MessageItems.__new__(MessageItems)  # only the masker is needed here
    items.mask = active = _active()
    texts = [json.dumps(args, ensure_ascii=False), json.dumps(result, ensure_ascii=False)]
    row = MessageRow(
        7, "tool", Value(content), "n", "i", None, None, Value(texts[0]), Value(texts[1]),
        None, None, None, None, 0,
    )  # fmt: skip
    if items.quiet(row, content):
        assert active.text(content, html=True) == content
        for text, value in zip(texts, (args, result), strict=True):
            assert active.text(text, html=True) == text
            assert active.value(value, html=True) == value


@hsettings(max_examples=300, deadline=None)
@given(text=_JSON_TEXT | st.text(max_size=60))
def test_text_said_quiet_holds_no_finding(text):
    """What every quick test (a page's titles, a message, a clipped value) relies on."""
    active = _active()
    if active.quiet(text):
        assert active.findings(text) == []
