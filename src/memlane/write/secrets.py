"""Secret detection and redaction, the first half of the capture policy. Pure functions.

Detectors run specific-first: a token with a known shape (a PEM block, an AWS, GitHub,
GitLab, Slack, Stripe, Anthropic or OpenAI key, a JWT) names its own kind; then the
values that only their context makes secret (a connection-string password, a bearer
token, the value of a `password=` style key); last, long random-looking tokens.

Precision is worth as much as recall: a memory about passwords is not a password. What
is never a secret here: a mention without a value ("rotate the api key"), a key whose
name only contains a secret word (`TOKEN_TTL=3600`, `--password-file`), a reference to
where the secret lives (`${DB_PASSWORD}`, `$API_KEY`, `os.environ[...]`, a path, a URL),
an obvious placeholder (`<your-password>`, `***`, `xxxx`, `...`, `changeme`, AWS's
documented `...EXAMPLE` keys), a hash or an identifier (git SHAs, UUIDs, hex digests,
snake_case and CamelCase names), and a public key.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator

import msgspec

MARKER = "[REDACTED:{kind}]"

# ---- values that are never secrets ----------------------------------------------------

# Trigger: a value that stands for a secret instead of being one. Why: docs, compose
# files and tests are full of them, and `changeme` or `password` protect nothing (they
# are public defaults). Outcome: kept verbatim.
_PLACEHOLDER_WORDS = frozenset(
    "changeme change_me change-me placeholder example redacted secret password passwd pass "
    "token none null nil true false undefined todo tbd dummy fake sample foo bar foobar "
    "required optional enabled disabled yes no on off default empty unset".split()
)
_PLACEHOLDER = re.compile(
    r"""\[REDACTED:\w+\]                     # already redacted: redact() is idempotent
      | <.* | \{.* | \$\{.* | \$\(.*          # <your-password>, {token}, ${DB_PASSWORD}, $(cmd)
      | \$[A-Za-z_]\w* | %[A-Za-z_]\w*% | %\(\w+\)s  # $API_KEY, %API_KEY%, %(password)s
      | \#[0-9a-fA-F]{3,8}                   # a colour
      | [*.…#_-]+                             # ***, ..., ----
      | (?i:your[-_ ].*|.*[-_]here|.*example.*)""",
    re.VERBOSE,
)
# A run of x, * or zeros marks a template ("sk_live_xxxx", "T00000000/B00000000/XXXX").
_FILLER = re.compile(r"(?i:x{4,})|\*{3,}|0{7,}|\.\.\.|…")


def _is_placeholder(value: str) -> bool:
    value = value.strip()
    return (
        not value
        or value.lower() in _PLACEHOLDER_WORDS
        or _PLACEHOLDER.fullmatch(value) is not None
        or _FILLER.search(value) is not None
    )


# ---- shape of tokens ------------------------------------------------------------------

# Words of an identifier: CamelCase humps, ACRONYMS, lowercase runs and numbers.
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_SEPARATORS = re.compile(r"[-_+/.=:]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
# Letters joined by `_ - . '`: a word, a variable or constant name, a dotted attribute.
_NAME = re.compile(r"[A-Za-z_]+(?:[-'.][A-Za-z_]+)*")
# Trigger: most letters of a token sit in word-like pieces (3+ letters with a vowel).
# Why: random base62 of 32+ chars scores above 0.8 in < 0.1% of samples, while names
# like `test_oauth2_refresh_token_rotation` or `AbstractSingletonProxyFactoryBean2Impl`
# score 0.85-1.0. Outcome: the token reads as an identifier, not a secret.
WORDY_FRACTION = 0.8
_SHORT_SEGMENT = 3  # `v2`, `pk`, `id`, `x86`: too short to be random, common in names


def wordiness(token: str) -> float:
    """The share of a token's letters that sit in pronounceable word-like pieces."""
    letters = sum(ch.isalpha() for ch in token)
    if not letters:
        return 0.0
    wordy = sum(
        len(piece)
        for piece in _PIECES.findall(token)
        if len(piece) >= 3 and piece.isalpha() and _VOWEL.search(piece)
    )
    return wordy / letters


def _segment_is_structured(segment: str) -> bool:
    return (
        len(segment) <= _SHORT_SEGMENT
        or _HEX.fullmatch(segment) is not None
        or wordiness(segment) >= WORDY_FRACTION
    )


def is_structured(token: str) -> bool:
    """An identifier, path, UUID or digest: made of words as a whole
    (`lllyasviel/control_v11p_sd15_softedge`), or every separated segment is a word, a hex
    run or too short to matter (`com/python/cpython/blob/<sha>/Objects`, `Root=1-659fc3fa-...`)."""
    if wordiness(token) >= WORDY_FRACTION:
        return True
    return all(_segment_is_structured(s) for s in _SEPARATORS.split(token) if s)


def _is_path(value: str) -> bool:
    """`~/.pgpass`, `secret/data/app`, `/run/secrets/db`; not base64 that holds a `/`."""
    return value.startswith(("~/", "./", "../")) or (
        "/" in value and sum(_is_word(s) for s in value.split("/")) >= 2
    )


def _is_word(segment: str) -> bool:
    return len(segment) >= 3 and not _HEX.fullmatch(segment) and wordiness(segment) >= 1.0


def shannon_entropy(token: str) -> float:
    """Bits per character of the token's own character distribution."""
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in Counter(token).values())


# ---- detectors ------------------------------------------------------------------------

Span = tuple[int, int]
Locate = Callable[[re.Match[str]], Span | None]


class Redaction(msgspec.Struct, frozen=True):
    """A secret found in a text: its kind and its offsets in the ORIGINAL text."""

    kind: str
    start: int
    end: int


class _Detector(msgspec.Struct, frozen=True):
    kind: str
    pattern: re.Pattern[str]
    locate: Locate


def _secret_group(match: re.Match[str]) -> Span | None:
    """The `secret` group, unless it is a placeholder."""
    return None if _is_placeholder(match["secret"]) else match.span("secret")


def _has_letter_and_digit(value: str) -> bool:
    return any(c.isalpha() for c in value) and any(c.isdigit() for c in value)


def _random_token(match: re.Match[str]) -> Span | None:
    """A `secret` group that looks random: letters and digits, not made of words."""
    value = match["secret"]
    if _is_placeholder(value) or not _has_letter_and_digit(value):
        return None
    return None if wordiness(value) >= WORDY_FRACTION else match.span("secret")


# PEM: the whole block. An unterminated block runs to the end of the text. Trigger: the
# markers alone, without base64 after them. Why: prose describing the format ("starts
# with -----BEGIN RSA PRIVATE KEY-----") holds no key. Outcome: not a secret.
_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z))"
)
_PEM_BODY = re.compile(r"\s*(?:[A-Za-z-]+:[^\n]*\n)*\s*[A-Za-z0-9+/=]{16,}")


def _pem_block(match: re.Match[str]) -> Span | None:
    return match.span() if _PEM_BODY.match(match["body"]) else None


_AWS_ACCESS_KEY = re.compile(r"\b(?P<secret>(?:AKIA|ASIA)[A-Z0-9]{16})\b")
_ASSIGN = r"""["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?"""
_AWS_SECRET_KEY = re.compile(
    r"(?i:\b(?:aws_?)?secret_?access_?key)" + _ASSIGN + r"(?P<secret>[A-Za-z0-9/+]{40})(?![\w/+=])"
)
_GITHUB = re.compile(
    r"\b(?P<secret>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"
)
_GITLAB = re.compile(r"(?<![\w-])(?P<secret>glpat-[A-Za-z0-9_-]{20,})")
_SLACK = re.compile(
    r"(?<![\w-])(?P<secret>xox[abposr]-[A-Za-z0-9-]{10,})"
    r"|hooks\.slack\.com/(?:services|workflows|triggers)/(?P<hook>[A-Za-z0-9_/-]{20,})"
)
_STRIPE = re.compile(
    r"\b(?P<secret>(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})\b"
)
_ANTHROPIC = re.compile(r"(?<![\w-])(?P<secret>sk-ant-[A-Za-z0-9_-]{24,})")
_OPENAI = re.compile(
    r"(?<![\w-])(?P<secret>sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"
)
_JWT = re.compile(
    r"(?<![\w-])(?P<secret>eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
)
# scheme://user:PASSWORD@host; the password runs to the LAST @ of the authority.
_CONNECTION = re.compile(
    r"(?<![\w+.-])[a-z][a-z0-9+.-]{1,20}://[^\s:/@\[\]]*:(?P<secret>[^\s/\[\]]*)@[^\s@/]*\w"
)
_BEARER = re.compile(r"\bBearer[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{16,})")
_AUTH_SCHEME = re.compile(
    r"(?i:\bauthorization)" + _ASSIGN + r"(?i:basic|token|digest)[ \t]+"
    r"(?P<secret>[A-Za-z0-9._~+/=-]{8,})"
)


def _url_password(match: re.Match[str]) -> Span | None:
    """Trigger: a password made only of letters (`user:password@`, `myuser:mypassword@`,
    `github://org:repo@sha`). Why: that is a documentation template or another URL syntax.
    Outcome: not a secret."""
    value = match["secret"]
    if _is_placeholder(value) or _NAME.fullmatch(value):
        return None
    return match.span("secret")


def _slack(match: re.Match[str]) -> Span | None:
    group = "secret" if match["secret"] else "hook"
    return None if _is_placeholder(match[group]) else match.span(group)


# ---- credentials: the value of a key that names a secret ---------------------------------

_KEY_TAILS: frozenset[tuple[str, ...]] = frozenset(
    {
        ("password",), ("passwd",), ("pwd",), ("passphrase",), ("secret",), ("token",),
        ("apikey",), ("auth",), ("credential",), ("credentials",),
        ("api", "key"), ("access", "key"), ("secret", "key"), ("private", "key"),
        ("signing", "key"), ("encryption", "key"), ("master", "key"), ("auth", "key"),
        ("account", "key"), ("client", "secret"), ("secret", "key", "base"),
    }
)  # fmt: skip
# `PGPASSWORD`, `authtoken`, `clientsecret`: a secret word glued to a prefix.
_GLUED_TAILS = ("password", "passwd", "secret", "token", "apikey")


def names_secret(key: str) -> bool:
    """Whether a key's LAST words name a secret: `DB_PASSWORD`, `apiKey`, `X-Auth-Token`,
    `aws_secret_access_key` do; `TOKEN_TTL`, `password_file`, `secretName`, `PASS` don't."""
    words = tuple(w.lower() for w in _PIECES.findall(key))
    if not words:
        return False
    if len(words) >= 2 and words[-1] == "pass":  # DB_PASS, not a test runner's PASS:
        return True
    return any(words[-len(t) :] == t for t in _KEY_TAILS) or words[-1].endswith(_GLUED_TAILS)


# Not after `:` or `/`: `arn:...:secret:prod/db` and `vault/secret/x` are names, not keys.
# Not after `-` or `.` either: a key starts once per run of name characters, which keeps
# the scan linear on long `a-a-a-...` runs (`--flag=value` is _FLAG's job).
_KEY = r"""(?<![\w.:/-])(?P<key>[A-Za-z_][\w.-]*+)"""
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`,;&]+))"""
_CREDENTIAL = re.compile(
    _KEY + r"""(?P<sep>["']?[ \t]*(?::=|=>|[:=])[ \t]*)""" + _VALUE
)  # fmt: skip
_FLAG = re.compile(r"(?<![\w-])--(?P<key>[A-Za-z][\w-]*+)(?P<sep>=|[ \t]+)" + _VALUE)
_CURL_USER = re.compile(r"(?<![\w-])(?:-u|--user)[ \t]+[\"']?[\w.@+-]+:(?P<key>)(?P<sep>)" + _VALUE)
_TRAILING_PUNCTUATION = ".,;:!?)]}"
# A code expression, not a literal: `os.environ[...]`, `get_secret()`, `token).create(`.
_CODE_CALL = re.compile(r"[\w.$]*[()\[\]]")
MIN_CREDENTIAL_CHARS = 6  # shorter values are counts, ports, flags and toy examples


def _credential_value(match: re.Match[str]) -> tuple[str, int]:
    """The value and its offset; an unquoted value loses trailing sentence punctuation."""
    for group in ("dq", "sq"):
        if match[group] is not None:
            return match[group], match.start(group)
    return match["bare"].rstrip(_TRAILING_PUNCTUATION), match.start("bare")


def _is_reference(value: str) -> bool:
    """Where a secret lives, not the secret: a path, a URL or a code expression."""
    return (
        _is_path(value)
        or "://" in value
        or value.startswith(("arn:", "vault:", "env:", "file:"))
        or _CODE_CALL.match(value) is not None
    )


def credential_value_is_secret(value: str, quoted: bool, weak_key: bool = False) -> bool:
    """Whether the value given to a secret-named key is itself a secret.

    Trigger: an unquoted value made only of letters (`token: see vault`, `password:
    required`, `token = Whitespace`, `password=DB_PASSWORD`, `pass = saved_hooks`). Why:
    prose, a YAML enum or a variable name far more often than a password. Outcome: not a
    secret; quoted (`"password": "sunshine"`) a word still counts, unless it names a
    secret itself (`EXPIRED_TOKEN = "expired_token"`, `api_key="your-api-key"`).
    Trigger: a weak key (`auth`). Why: its values are mostly modes (`auth: oauth2`,
    `auth=ldap`). Outcome: only a value that is not made of words counts.
    """
    if len(value) < MIN_CREDENTIAL_CHARS or _is_placeholder(value) or _is_reference(value):
        return False
    if _NAME.fullmatch(value) and (not quoted or names_secret(value)):
        return False
    return not weak_key or wordiness(value) < WORDY_FRACTION


def _is_weak_key(key: str) -> bool:
    pieces = _PIECES.findall(key)
    return bool(pieces) and pieces[-1].lower() == "auth"


def _credential(match: re.Match[str]) -> Span | None:
    key = match["key"]
    if key and not names_secret(key):
        return None
    value, start = _credential_value(match)
    if not credential_value_is_secret(value, match["bare"] is None, _is_weak_key(key)):
        return None
    return start, start + len(value)


# ---- high entropy: long random-looking tokens ------------------------------------------

# Trigger: 32+ token characters. Why: shorter random strings are ids and short hashes;
# real keys without a known prefix are 32-64 characters. Outcome: candidates only.
MIN_ENTROPY_TOKEN = 32
# Trigger: more than 4.0 bits per character. Why: hex carries at most 4.0 (16 symbols),
# so no SHA, digest or UUID can pass; random base62/base64 of 32 chars averages 4.5 and
# falls below 4.0 in < 0.1% of samples. Outcome: the token may be a secret.
ENTROPY_BITS = 4.0
_TOKEN = re.compile(
    rf"(?<![A-Za-z0-9+/=_-])(?P<secret>[A-Za-z0-9+/_-]{{{MIN_ENTROPY_TOKEN},}}={{0,2}})(?![\w+/=-])"
)
_URL = re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]*+://\S+")
# Public material and digests named by their prefix: `ssh-ed25519 AAAA...`, `h1:...`
# (go.sum), `sha256:...`, `data:...;base64,...`, and SRI `sha512-...` inside the token.
_PUBLIC_PREFIX = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-\S+|sk-ssh-\S+)[ \t]+$"
    r"|(?:sha1|sha256|sha384|sha512|md5|h1):$|base64,$",
    re.IGNORECASE,
)
_DIGEST_LABEL = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)-", re.IGNORECASE)
PRINTABLE_SHARE = 0.95  # base64 of text decodes >= 95% printable; of a random key ~40%


def _encodes_text(token: str) -> bool:
    """base64 of ordinary text (a config snippet, a sentence) is encoding, not a key."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return bool(raw) and printable / len(raw) >= PRINTABLE_SHARE


def looks_random(token: str) -> bool:
    """A long token with letters, digits, high entropy, and no words, hex or path in it.

    Measured on random tokens of 32-64 chars: base62, base64 and base64url pass in 99.8%
    or more; single-case letters+digits (36 symbols) in 78-89%; hex never, by design.
    """
    return (
        _has_letter_and_digit(token)
        and shannon_entropy(token) > ENTROPY_BITS
        and not is_structured(token)
        and not _is_path(token)
        and not _encodes_text(token.rstrip("="))
    )


def _exempt(text: str, start: int, token: str, urls: list[Span]) -> bool:
    """Inside a URL, after a public-key or digest label, or labelled a digest itself."""
    return (
        any(url_start <= start < url_end for url_start, url_end in urls)
        or _PUBLIC_PREFIX.search(text[max(0, start - 40) : start]) is not None
        or _DIGEST_LABEL.match(token) is not None
    )


def _high_entropy(text: str) -> Iterator[Span]:
    urls = [m.span() for m in _URL.finditer(text)]
    for match in _TOKEN.finditer(text):
        if not _exempt(text, match.start(), match["secret"], urls) and looks_random(
            match["secret"]
        ):
            yield match.span()


# ---- finding and redacting --------------------------------------------------------------

# Most specific first: on overlap the earlier kind names the merged span.
_DETECTORS: tuple[_Detector, ...] = (
    _Detector("private_key", _PEM, _pem_block),
    _Detector("aws_access_key", _AWS_ACCESS_KEY, _secret_group),
    _Detector("aws_secret_key", _AWS_SECRET_KEY, _secret_group),
    _Detector("github_token", _GITHUB, _secret_group),
    _Detector("gitlab_token", _GITLAB, _secret_group),
    _Detector("slack_token", _SLACK, _slack),
    _Detector("stripe_key", _STRIPE, _secret_group),
    _Detector("anthropic_key", _ANTHROPIC, _secret_group),
    _Detector("openai_key", _OPENAI, _random_token),
    _Detector("jwt", _JWT, _secret_group),
    _Detector("connection_string", _CONNECTION, _url_password),
    _Detector("bearer_token", _BEARER, _random_token),
    _Detector("credential", _AUTH_SCHEME, _secret_group),
    _Detector("credential", _CREDENTIAL, _credential),
    _Detector("credential", _FLAG, _credential),
    _Detector("credential", _CURL_USER, _credential),
)
KINDS = tuple(dict.fromkeys([d.kind for d in _DETECTORS] + ["high_entropy"]))


def _candidates(text: str) -> Iterator[tuple[int, int, int]]:
    """(start, end, rank) of every detector hit; rank is the detector's specificity."""
    for rank, detector in enumerate(_DETECTORS):
        for match in detector.pattern.finditer(text):
            span = detector.locate(match)
            if span is not None and span[0] < span[1]:
                yield span[0], span[1], rank
    for start, end in _high_entropy(text):
        yield start, end, len(_DETECTORS)


def _kind(rank: int) -> str:
    return _DETECTORS[rank].kind if rank < len(_DETECTORS) else "high_entropy"


def find_secrets(text: str) -> list[Redaction]:
    """Secrets in the text, sorted and non-overlapping.

    Trigger: two detectors claim overlapping spans (an `sk-...` key that is also the
    value of `OPENAI_API_KEY=`, base64 lines inside a PEM block). Why: redacting the union
    leaves no fragment of either behind. Outcome: one span, named by the most specific.
    """
    merged: list[tuple[int, int, int]] = []
    for start, end, rank in sorted(_candidates(text)):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_rank = merged[-1]
            merged[-1] = (last_start, max(end, last_end), min(rank, last_rank))
        else:
            merged.append((start, end, rank))
    return [Redaction(_kind(rank), start, end) for start, end, rank in merged]


def redact(text: str) -> tuple[str, list[Redaction]]:
    """The text with every secret replaced by `[REDACTED:<kind>]`, and what was replaced.

    A text without secrets comes back as the same string object.
    """
    found = find_secrets(text)
    if not found:
        return text, found
    parts: list[str] = []
    cursor = 0
    for item in found:
        parts += [text[cursor : item.start], MARKER.format(kind=item.kind)]
        cursor = item.end
    parts.append(text[cursor:])
    return "".join(parts), found
