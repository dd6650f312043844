"""Secrets and personal data hidden at display time, from what is already stored.

The runtime stores what people and tools said; nothing is masked on the way in. Every
value reaches a person through our code, so it is masked there: :func:`masker` gives
the rules in force (built-ins, less those switched off, plus the operator's own, from
settings), and :class:`Masker` replaces each finding with its kind and a short stable
tag, ``[email · 3f9a]`` or ``[card ···4242]``: the tag is a keyed digest of the value,
so two messages holding one hidden address show one tag, and the value cannot be read
back from it. In JSON, the values of keys named like a password, secret or token are
hidden whole (strings only: ``inputTokens: 900`` is a count, not a secret).

For HTML, :meth:`Masker.text` with ``html=True`` wraps each tag in two private-use
characters, which :func:`mark_html` turns into a span that a screen reader reads as
"hidden e-mail address" once the text is escaped.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from sessions_admin.markup import esc

#: No finding is shorter ("a@b.co"): shorter text is never scanned.
SHORTEST = 6
#: Around a tag in text bound for HTML (private-use: no real text is changed by them).
OPEN, CLOSE, SPLIT = "\ue000", "\ue001", "\ue002"


def luhn(digits: str) -> bool:
    """The card-number check digit holds (a 16-digit order number mostly fails it)."""
    total = 0
    for n, char in enumerate(reversed(digits)):
        d = ord(char) - 48
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(found: str) -> str | None:
    digits = re.sub(r"[ -]", "", found)
    if not 13 <= len(digits) <= 19 or not luhn(digits):
        return None
    return f"card ···{digits[-4:]}"


@dataclass(frozen=True)
class Rule:
    """One detector: what it finds, what the tag and a screen reader call it."""

    name: str
    pattern: str
    spoken: str
    #: A finding becomes its tag's head (``card ···4242``), or None: not a finding.
    check: Callable[[str], str | None] | None = None
    flags: int = 0
    #: The tag's head when there is no check (default: the name, spaced).
    head: str = ""
    #: Text holding none of these (or too few digits) cannot hold a finding: the rule is
    #: skipped for it (most text holds no secret, and a scan costs).
    hints: tuple[str, ...] = ()
    #: Text with no run of this many digits (spaces or hyphens between them allowed)
    #: cannot hold a finding: a card number has 13 at least.
    hint_digits: int = 0

    @property
    def spaced_head(self) -> str:
        return self.head or self.name.replace("_", " ")


BUILTIN_RULES: tuple[Rule, ...] = (
    Rule(
        "private_key",
        r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----(?:.*?-----END [A-Z ]{0,40}PRIVATE KEY-----|.*)",
        "hidden private key",
        flags=re.DOTALL,
        hints=("PRIVATE KEY",),
    ),
    Rule(
        "jwt",
        r"\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*",
        "hidden web token",
        hints=("eyJ",),
    ),
    Rule(
        "bearer",
        # A credential has a digit or a symbol: "Bearer responsibilities" is prose.
        r"(?:(?<=Bearer )|(?<=bearer ))(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{16,}"
        r"|(?:(?<=Basic )|(?<=basic ))(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{12,}={0,2}",
        "hidden credential",
        head="credential",
        hints=("earer ", "asic "),
    ),
    Rule(
        "api_key",
        r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_-]{20,}"
        r"|\bAKIA[0-9A-Z]{16}\b"
        r"|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}"
        r"|\bxox[abposr]-[A-Za-z0-9-]{10,}",
        "hidden access key",
        head="key",
        hints=("sk-", "AKIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox"),
    ),
    Rule(
        "email",
        r"\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b",
        "hidden e-mail address",
        hints=("@",),
    ),
    Rule(
        "card",
        r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])",
        "hidden card number",
        _card,
        hint_digits=13,
    ),
)
BUILTIN_NAMES = tuple(rule.name for rule in BUILTIN_RULES)

#: JSON keys whose string values are hidden whole, compared without case, ``-`` or ``_``.
_SECRET_KEY = re.compile(r"password|passwd|secret|apikey|authorization|token$|credential")


def secret_key(key: object) -> bool:
    """A JSON key named like a password, a secret, an API key, a token or credentials."""
    return isinstance(key, str) and bool(
        _SECRET_KEY.search(key.lower().replace("_", "").replace("-", ""))
    )


#: What text holding a secret key's name holds, lowered and without ``_`` or ``-`` (a
#: cheap test before the key-value pass): every name :func:`secret_key` takes holds one.
#: A name ends in "token", and the key is quoted: ``token"`` (``max_tokens`` does not).
_SECRET_WORDS = ("pass", "secret", "apikey", "authorization", 'token"', "credential")


def _names_a_secret(text: str) -> bool:
    low = text.lower().replace("_", "").replace("-", "")
    return any(map(low.__contains__, _SECRET_WORDS))


#: ``"password": "…"`` in text that is not parsed (a message's content, a cut value).
_KEYED_STRING = re.compile(r'("(?P<key>[^"\\]{1,64})"\s*:\s*)"(?P<value>(?:[^"\\]|\\.)*)"')


_ZEROS = bytes.maketrans(b"123456789", b"000000000")


def _digits_as_zeros(value: str) -> bytes:
    """``value`` as bytes with every digit a ``0`` and no space or hyphen: a run of
    zeros as long as a rule's digits is then a plain substring test (C, one pass)."""
    return value.encode("utf-8", "surrogatepass").translate(_ZEROS, b" -")


class Masker:
    """The rules in force, and the key that makes the tags stable."""

    def __init__(self, rules: tuple[Rule, ...], key: bytes) -> None:
        self.rules = rules
        self.key = key
        # Each rule scans on its own, and only text holding what a finding of it needs
        # (an "@", "eyJ", four digits…): most text holds none, and a scan costs.
        self.scans = [
            (
                rule,
                re.compile(rule.pattern, rule.flags),
                rule.hints,
                rule.hint_digits,
            )
            for rule in rules
        ]
        # What any rule needs: text with none of it holds no finding, tested in C. A
        # hint with "_" in it (``ghp_``…) stands as "_" alone: fewer scans of each text.
        self.hints = tuple(
            dict.fromkeys("_" if "_" in hint else hint for rule in rules for hint in rule.hints)
        )
        digits = min((rule.hint_digits for rule in rules if rule.hint_digits), default=0)
        self.digit_run = b"0" * digits if digits else b""
        #: An operator's rule names no hint: every text is scanned for it.
        self.unhinted = any(not rule.hints and not rule.hint_digits for rule in rules)

    def quiet(self, value: str) -> bool:
        """``value`` cannot hold a finding of any rule (a quick test; False: it may)."""
        if self.unhinted or any(map(value.__contains__, self.hints)):
            return False
        if self.digit_run and self.digit_run in _digits_as_zeros(value):
            return False
        return not ('"' in value and ":" in value and _names_a_secret(value))

    def quiet_texts(self, texts: Sequence[str], json_texts: Sequence[str] = ()) -> bool:
        """None of ``texts`` and ``json_texts`` holds a finding of any rule or one of our
        marks (True: :meth:`text` returns each as it is, unless it is clipped, and
        :meth:`value` each JSON text's parsed value). One :meth:`quiet` test of them all
        joined: each test it makes of the whole holds for every part. A JSON text must be
        without escapes: then every key and string it parses to is a substring of it (a
        key quoted, which the secret-key test looks for)."""
        if not all(type(raw) is str and "\\" not in raw for raw in json_texts):
            return False
        joined = "\x00".join([*texts, *json_texts])
        marked = OPEN in joined or CLOSE in joined or SPLIT in joined
        return not marked and self.quiet(joined)

    def quiet_json(self, raw: str) -> bool:
        """The JSON text ``raw`` and the value it parses to hold nothing to hide."""
        return self.quiet_texts([], [raw])

    def tag(self, rule: Rule, head: str, found: str, *, html: bool) -> str:
        digest = hmac.new(self.key, found.encode("utf-8", "surrogatepass"), hashlib.sha256)
        text = head if rule.check else f"{head} · {digest.hexdigest()[:4]}"
        return f"{OPEN}{rule.spoken}{SPLIT}[{text}]{CLOSE}" if html else f"[{text}]"

    def text(self, value: str, *, html: bool = False, clipped: bool = False) -> str:
        """``value`` with every finding replaced by its tag. Text that is not UTF-8 is
        masked as it reads; a description of a value that is not text (a BLOB, a
        number) holds nothing to hide and stays as it is. ``clipped``: the value is the
        head of a longer one, so what ends it may be the start of a finding cut in two
        (``alice@exa…``): that end is left out."""
        if type(value) is not str:
            if not isinstance(value, str) or not isinstance(getattr(value, "raw", None), bytes):
                return value
            # TEXT that is not UTF-8: masked as it reads; kept as it is when nothing is hidden.
            text = str.__str__(value)
            shown = self.text(text, html=html, clipped=clipped)
            return value if shown == text else shown
        if html and (OPEN in value or CLOSE in value or SPLIT in value):
            # Stored text cannot forge a tag: the marks are ours alone.
            value = value.replace(OPEN, "\ufffd").replace(CLOSE, "\ufffd").replace(SPLIT, "\ufffd")
        if len(value) < SHORTEST:
            return value
        quiet = self.quiet(value)
        if quiet and not clipped:
            return value
        found = [] if quiet else self.findings(value)
        if clipped:
            value = _without_partial(value, found[-1][1] if found else 0)
        return self._replaced(value, found, html=html)

    def window(self, text: str, left: int, right: int, *, html: bool = False):
        """``text[left:right]`` masked as part of ``text``: a finding that crosses an
        edge is hidden whole, the window grown to hold its tag. Returns the masked
        window with where it now starts and ends in ``text``, or None when nothing in
        it is hidden (findings are looked for :data:`REACH` characters around it)."""
        base = max(left - REACH, 0)
        wide = text[base : min(right + REACH, len(text))]
        if html and (OPEN in wide or CLOSE in wide or SPLIT in wide):
            wide = wide.replace(OPEN, "\ufffd").replace(CLOSE, "\ufffd").replace(SPLIT, "\ufffd")
        if self.quiet(wide):
            return None
        found = [f for f in self.findings(wide) if f[0] < right - base and f[1] > left - base]
        if not found:
            return None
        low, high = min(left - base, found[0][0]), max(right - base, found[-1][1])
        shifted = [(start - low, end - low, rule, head) for start, end, rule, head in found]
        return self._replaced(wide[low:high], shifted, html=html), base + low, base + high

    def _replaced(self, value: str, found: list[Finding], *, html: bool) -> str:
        if not found:
            return value
        pieces, at = [], 0
        for start, end, rule, head in found:
            pieces += (value[at:start], self.tag(rule, head, value[start:end], html=html))
            at = end
        pieces.append(value[at:])
        return "".join(pieces)

    def findings(self, value: str) -> list[Finding]:
        """Where ``value`` holds something to hide, in order, none overlapping: the
        values of secret keys first, then each rule's findings in the rules' order (a
        finding overlapping one already taken is left to it)."""
        found: list[Finding] = []
        starts: list[int] = []  # of ``found``, kept sorted for the overlap test

        def take(start: int, end: int, rule: Rule, head: str) -> None:
            at = bisect.bisect_right(starts, start)
            if (at and found[at - 1][1] > start) or (at < len(found) and found[at][0] < end):
                return
            starts.insert(at, start)
            found.insert(at, (start, end, rule, head))

        if '"' in value and ":" in value and _names_a_secret(value):
            for match in _KEYED_STRING.finditer(value):
                if match.group("value") and secret_key(match.group("key")):
                    take(*match.span("value"), SECRET, "secret")
        for rule, pattern, hints, digits in self.scans:
            if hints:
                for needed in hints:
                    if needed in value:
                        break
                else:
                    continue
            elif digits and b"0" * digits not in _digits_as_zeros(value):
                continue
            for match in pattern.finditer(value):
                start, end = match.span()
                head = rule.check(match.group()) if rule.check else rule.spaced_head
                if head is not None and end > start:
                    take(start, end, rule, head)
        return found

    def value(self, value: Any, *, html: bool = False) -> Any:
        """A parsed JSON value with its strings masked and secret keys' strings hidden;
        :data:`TOO_DEEP` for one nested too deeply to walk (its text is shown, masked)."""
        try:
            return self._value(value, html=html)
        except RecursionError:
            return TOO_DEEP

    def _value(self, value: Any, *, html: bool) -> Any:
        if isinstance(value, str):
            return self.text(value, html=html)
        if isinstance(value, dict):
            return {
                k: self._secret(v, html=html) if secret_key(k) else self._value(v, html=html)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self._value(v, html=html) for v in value]
        return value

    def _secret(self, value: Any, *, html: bool) -> Any:
        if isinstance(value, str):
            return self.tag(SECRET, "secret", value, html=html) if value else value
        if isinstance(value, dict | list):
            walk = value.values() if isinstance(value, dict) else value
            hidden = [self._secret(v, html=html) for v in walk]
            return dict(zip(value, hidden, strict=True)) if isinstance(value, dict) else hidden
        return value


SECRET = Rule("secret", "", "hidden secret", check=None)
#: One finding: where it starts and ends, its rule, and its tag's head.
Finding = tuple[int, int, Rule, str]
#: What :meth:`Masker.value` gives for a value too deeply nested to walk.
TOO_DEEP = object()


#: How far around a window :meth:`Masker.window` looks for findings crossing its edges
#: (more than a private-key block, the longest finding in practice).
REACH = 4096
ELLIPSIS = "…"
#: What a finding's text is made of besides letters and digits.
_TOKEN_MARKS = frozenset("._%+@=/~-")
#: A secret key's string value still open where the text ends: ``"password": "hun``.
_OPEN_SECRET = re.compile(r'"(?P<key>[^"\\]{1,64})"\s*:\s*"(?P<value>(?:[^"\\]|\\.)*)\\?\Z')


def _without_partial(value: str, floor: int) -> str:
    """``value`` (cut from a longer text, maybe ending in "…") without what may be the
    start of a finding at its end: an open secret string, or a last run of letters,
    digits and marks that holds a digit or a mark, is 8 long, or follows "Bearer "."""
    end = len(value) - 1 if value.endswith(ELLIPSIS) else len(value)
    start = _partial_start(value, floor, end)
    return value if start == end else value[:start] + value[end:]


def _partial_start(value: str, floor: int, end: int) -> int:
    opened = _OPEN_SECRET.search(value, floor, end)
    if opened and secret_key(opened.group("key")):
        return opened.start("value")
    at = end
    while at > floor:
        char = value[at - 1]
        if char.isalnum() or char in _TOKEN_MARKS:
            at -= 1
        elif char == " " and floor < at - 1 < end - 1 and value[at - 2].isdigit():
            at -= 1  # a card number written in groups: "4242 4242 42"
        else:
            break
    run = value[at:end]
    if run and (len(run) >= 8 or not run.isalpha() or value[:at].endswith(("earer ", "asic "))):
        return at
    return end


_MARKED = re.compile(f"{OPEN}([^{SPLIT}{CLOSE}]*){SPLIT}([^{CLOSE}]*){CLOSE}")


def mark_html(escaped: str) -> str:
    """Escaped HTML with each tag made a span a screen reader reads by its kind."""
    if OPEN not in escaped:
        return escaped
    return _MARKED.sub(
        r'<span class="masked"><span class="visually-hidden">\1 </span>'
        r'<span aria-hidden="true">\2</span></span>',
        escaped,
    )


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with "…", never inside a masked tag (a cut
    tag is left out whole; a value is masked before it is cut, so no part of it shows)."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - 1, 0)]
    if (start := cut.rfind(OPEN)) > cut.rfind(CLOSE):
        cut = cut[:start]
    return cut + "…"


def masked_html(
    value: str, active: Masker | None, limit: int | None = None, *, clipped: bool | None = None
) -> str:
    """``value`` escaped for HTML, masked when ``active`` is, cut to ``limit``.
    ``clipped`` (by default: it ends in "…") says it was cut from a longer text."""
    if active is None:
        return esc(value if limit is None else shorten(value, limit))
    if clipped is None:
        clipped = value.endswith(ELLIPSIS)
    shown = active.text(value, html=True, clipped=clipped)
    return mark_html(esc(shown if limit is None else shorten(shown, limit)))


def parse_rules(builtins_off: str, custom: Mapping[str, str]) -> tuple[Rule, ...]:
    """The rules in force; a bad name or pattern raises ValueError with a sentence."""
    off = {name.strip() for name in builtins_off.split(",") if name.strip()}
    unknown = off - set(BUILTIN_NAMES)
    if unknown:
        raise ValueError(
            f"SESSIONS_ADMIN_MASK_OFF names no built-in rule: {', '.join(sorted(unknown))} "
            f"(the built-ins are {', '.join(BUILTIN_NAMES)})."
        )
    rules = [rule for rule in BUILTIN_RULES if rule.name not in off]
    for name, pattern in custom.items():
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,30}", name):
            raise ValueError(
                f"The masking rule name {name!r} must be a short lower-case word "
                "(letters, digits, _)."
            )
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"The masking rule {name!r} has a bad pattern: {exc}.") from None
        if compiled.match(""):
            raise ValueError(
                f"The masking rule {name!r} matches empty text: it would hide nothing."
            )
        rules.append(Rule(name, f"(?:{pattern})", f"hidden {name.replace('_', ' ')}"))
    return tuple(rules)


_current: list = [None, None, None]  # rules, key, the masker made of them


def masker() -> Masker | None:
    """The masker in force (None: masking switched off by the operator); made once for
    the settings' rules and key (a page asks for it once per value it shows)."""
    if not getattr(settings, "MASKING", True):
        return None
    rules, key = settings.MASK_RULES, settings.SECRET_KEY
    if _current[0] is not rules or _current[1] != key:
        made = Masker(rules, hashlib.sha256(("sessions-admin-masking:" + key).encode()).digest())
        _current[:] = [rules, key, made]
    return _current[2]
