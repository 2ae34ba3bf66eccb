"""Secrets that say what they are by their shape: vendor tokens, private key blocks,
credentials in URLs and auth headers, and long random tokens. Pure functions.

Each detector yields `(start, end, kind)` spans in the text. What is never a secret
here: a hash or an identifier (git SHAs, UUIDs, digests, snake_case and CamelCase
names), a public key, a placeholder (`sk-...`, `ghp_xxxx`, `<token>`, AWS's documented
`...EXAMPLE` keys), and base64 of ordinary text (unless the text it encodes holds a
secret itself).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import NamedTuple

from memlane.write.secret_needs import Detector, Need, Span, led, run

# ---- values that are never secrets ----------------------------------------------------

# Trigger: a value that stands for a secret instead of being one. Why: docs, compose
# files and tests are full of them, and `changeme` or `password` protect nothing (they
# are public defaults). Outcome: kept verbatim.
PLACEHOLDER_WORDS = frozenset(
    "changeme change_me change-me placeholder example redacted secret password passwd pass "
    "token none null nil true false undefined todo tbd dummy fake sample foo bar foobar "
    "required optional enabled disabled yes no on off default empty unset".split()
)
_PLACEHOLDER = re.compile(
    r"""\[?REDACTED(?::\w+)?\]?              # already redacted: redact() is idempotent
      | <.* | \{.* | \$\{.* | \$\(.*          # <your-password>, {token}, ${DB_PASSWORD}, $(cmd)
      | \$[A-Za-z_]\w* | %[A-Za-z_]\w*% | %\(\w+\)s  # $API_KEY, %API_KEY%, %(password)s
      | \#[0-9a-fA-F]{3,8}                   # a colour
      | [*.…#_-]+                             # ***, ..., ----
      | (?i:(?:your|my|the|a|an)[-_ ].*|.*[-_]here|.*example.*|.*_?placeholder.*)""",
    re.VERBOSE,
)
# A run of x, * or zeros marks a template ("sk_live_xxxx", "T00000000/B00000000/XXXX").
_FILLER = re.compile(r"(?i:x{4,})|\*{3,}|0{7,}|\.\.\.|…")


def is_placeholder(value: str) -> bool:
    value = value.strip()
    return (
        not value
        or value.lower() in PLACEHOLDER_WORDS
        or _PLACEHOLDER.fullmatch(value) is not None
        or _FILLER.search(value) is not None
    )


# ---- shape of tokens ------------------------------------------------------------------

# Words of an identifier: CamelCase humps, ACRONYMS, lowercase runs and numbers.
PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_SEPARATORS = re.compile(r"[-_+/.=:]+")
HEX = re.compile(r"[0-9a-fA-F]+")
# Trigger: most letters of a token sit in word-like pieces (3+ letters with a vowel).
# Why: random base62 of 32+ chars scores above 0.8 in < 0.1% of samples, while names
# like `test_oauth2_refresh_token_rotation` or `AbstractSingletonProxyFactoryBean2Impl`
# score 0.85-1.0. Outcome: the token reads as an identifier, not a secret.
WORDY_FRACTION = 0.8
_SHORT_SEGMENT = 3  # `v2`, `pk`, `id`, `x86`: too short to be random, common in names


# Five consonants in a row (a plural `s` aside, as in `strengths`): words written in
# Latin letters seldom have them, random runs of capitals often do (`ENJKFTSUZLZO`).
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xz]{5}(?!s?$)", re.IGNORECASE)


def wordiness(token: str, shortest: int = 3) -> float:
    """The share of a token's letters that sit in pronounceable word-like pieces of
    `shortest` letters or more."""
    letters = sum(ch.isalpha() for ch in token)
    if not letters:
        return 0.0
    wordy = sum(
        len(piece)
        for piece in PIECES.findall(token)
        if len(piece) >= shortest
        and piece.isalpha()
        and _VOWEL.search(piece)
        and not _CONSONANTS.search(piece)
    )
    return wordy / letters


def _segment_is_structured(segment: str) -> bool:
    return (
        len(segment) <= _SHORT_SEGMENT
        or HEX.fullmatch(segment) is not None
        or wordiness(segment) >= WORDY_FRACTION
    )


def is_structured(token: str) -> bool:
    """An identifier, path, UUID or digest: made of words as a whole
    (`lllyasviel/control_v11p_sd15_softedge`), or every separated segment is a word, a hex
    run or too short to matter (`com/python/cpython/blob/<sha>/Objects`, `Root=1-659fc3fa-...`)."""
    if wordiness(token) >= WORDY_FRACTION:
        return True
    return all(_segment_is_structured(s) for s in _SEPARATORS.split(token) if s)


def is_path(value: str) -> bool:
    """`~/.pgpass`, `secret/data/app`, `/run/secrets/db`; not base64 that holds a `/`."""
    return value.startswith(("~/", "./", "../")) or (
        "/" in value and sum(_is_word(s) for s in value.split("/")) >= 2
    )


def _is_word(segment: str) -> bool:
    return len(segment) >= 3 and not HEX.fullmatch(segment) and wordiness(segment) >= 1.0


def shannon_entropy(token: str) -> float:
    """Bits per character of the token's own character distribution."""
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in Counter(token).values())


def has_letter_and_digit(value: str) -> bool:
    return any(c.isalpha() for c in value) and any(c.isdigit() for c in value)


PRINTABLE_SHARE = 0.95  # base64 of text decodes >= 95% printable; of a random key ~40%


def decoded_text(token: str) -> str | None:
    """The text a base64 (or base64url) token encodes, if it encodes text at all."""
    stripped = token.rstrip("=")
    try:
        raw = base64.b64decode(stripped + "=" * (-len(stripped) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    if not raw or printable / len(raw) < PRINTABLE_SHARE:
        return None
    return raw.decode("ascii", "replace")


# Trigger: more than 4.0 bits per character. Why: hex carries at most 4.0 (16 symbols),
# so no SHA, digest or UUID can pass; random base62/base64 of 32 chars averages 4.5 and
# falls below 4.0 in < 0.1% of samples. Outcome: the token may be a secret.
ENTROPY_BITS = 4.0


def looks_random(token: str) -> bool:
    """A long token with letters, digits, high entropy, and no words, hex or path in it.

    Measured on random tokens of 32-64 chars: base62, base64 and base64url pass in 99.8%
    or more; single-case letters+digits (36 symbols) in 78-89%; hex never, by design.
    """
    return (
        has_letter_and_digit(token)
        and shannon_entropy(token) > ENTROPY_BITS
        and not is_structured(token)
        and not is_path(token)
    )


# ---- tokens with a known shape ------------------------------------------------------------


class Shape(NamedTuple):
    kind: str
    anchor: str  # a literal every match holds: scanned first, as it is rarely there
    pattern: re.Pattern[str]


def _shaped(kind: str, anchor: str, pattern: str) -> Shape:
    """A vendor format; the `secret` group (or the whole match) is the secret."""
    return Shape(kind, anchor, re.compile(pattern))


_B = r"(?<![A-Za-z0-9])"  # a token starts here: not inside a longer word
_E = r"(?![\w-])"  # and ends here
# Most specific first: on overlap the earlier kind names the merged span.
SHAPES: tuple[Shape, ...] = (
    _shaped(
        "aws_access_key",
        "A[SKBC][IC]A",
        rf"{_B}(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}){_E}",
    ),
    _shaped(
        "github_token",
        "gh[pousr]_|github_pat_",
        rf"{_B}(?P<secret>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{{30,}}"
        r"|github_pat_[A-Za-z0-9_]{22,})",
    ),
    _shaped(
        "gitlab_token",
        "gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt)-",
        rf"{_B}(?P<secret>gl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt)-"
        r"[A-Za-z0-9_-]{20,})",
    ),
    _shaped(
        "slack_token",
        "xox[abposre]-|xapp-",
        rf"{_B}(?P<secret>xox[abposre]-[A-Za-z0-9-]{{10,}}|xapp-[\w-]{{20,}})",
    ),
    _shaped(
        "slack_webhook",
        "hooks\\.slack",
        r"(?P<secret>(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"[A-Za-z0-9_/-]{20,})",
    ),
    _shaped(
        "stripe_key",
        "[sr]k_(?:live|test)_|whsec_",
        rf"{_B}(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{16,}}"
        r"|whsec_[A-Za-z0-9+/=]{24,})",
    ),
    _shaped("anthropic_key", "sk-ant-", rf"{_B}(?P<secret>sk-ant-[A-Za-z0-9_-]{{24,}})"),
    _shaped(
        "openai_key", "sk-", rf"{_B}(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}})"
    ),
    _shaped("google_api_key", "AIza", rf"{_B}(?P<secret>AIza[0-9A-Za-z_-]{{30,40}}){_E}"),
    _shaped(
        "huggingface_token",
        "hf_|api_org_",
        rf"{_B}(?P<secret>(?:hf|api_org)_[A-Za-z0-9]{{30,}}){_E}",
    ),
    _shaped("npm_token", "npm_", rf"{_B}(?P<secret>npm_[A-Za-z0-9]{{30,}}){_E}"),
    _shaped("pypi_token", "pypi-", rf"{_B}(?P<secret>pypi-[A-Za-z0-9_-]{{40,}})"),
    _shaped(
        "discord_token",
        "\\.[\\w-]{6}\\.|webhooks/",
        rf"{_B}(?P<secret>[MNO][A-Za-z0-9_-]{{22,27}}\.[A-Za-z0-9_-]{{6}}"
        r"\.[A-Za-z0-9_-]{25,})"
        r"|(?P<hook>(?:https?://)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{40,})",
    ),
    _shaped(
        "telegram_bot_token",
        ":AA",
        r"(?:(?<=/bot)|(?<![\w:-]))(?P<secret>\d{8,12}:AA[A-Za-z0-9_-]{30,})",
    ),
    _shaped(
        "sendgrid_key", "SG\\.", rf"{_B}(?P<secret>SG\.[A-Za-z0-9_-]{{16,}}\.[A-Za-z0-9_-]{{30,}})"
    ),
    _shaped(
        "twilio_key",
        "SK[0-9a-fA-F]|AC[0-9a-f]{32}",
        rf"{_B}(?P<secret>SK[0-9a-fA-F]{{32}}){_E}"
        r"|AC[0-9a-f]{32}[\"']?[ \t]*[,:][ \t]*[\"']?(?P<sig>[0-9a-f]{32})(?![\w-])",
    ),
    _shaped(
        "jwt",
        "eyJ",
        rf"{_B}(?P<secret>eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}})",
    ),
    _shaped(
        "azure_key",
        "(?i:accountkey|sharedaccess)|sig=",
        r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<secret>[A-Za-z0-9+/=%]{20,})"
        r"|[?&]sig=(?P<sig>[A-Za-z0-9%+/=]{20,})",
    ),
    # Vendors' prefixed tokens: the prefix says what follows is a credential.
    _shaped(
        "vendor_token",
        "shp[acps]|_v1_|dckr_|hv[sbr]\\.|dapi|AGE-|ATATT3|lin_|secret_|ntn_|sbp_|gl(?:sa|c)_|NRAK-|PMAK-|dp\\.|pul-|key-|sk\\.|rdme_|xkeysib-|EAA[CG]|ya29\\.|1//0"
        "|LTAI|rubygems_|rzp_|Q~|pat[A-Za-z0-9]{14}\\.|sq[upa]_|\\d{6}-\\d{6}-",
        rf"{_B}(?P<secret>"
        r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}"  # Shopify
        r"|do[por]_v1_[0-9a-f]{64}"  # DigitalOcean
        r"|dckr_pat_[A-Za-z0-9_-]{20,}"  # Docker Hub
        r"|hv[sbr]\.[A-Za-z0-9_-]{20,}"  # Vault
        r"|dapi[0-9a-f]{32}(?:-\d)?"  # Databricks
        r"|AGE-SECRET-KEY-1[0-9A-Z]{50,}"  # age
        r"|ATATT3[A-Za-z0-9_=-]{40,}"  # Atlassian
        r"|lin_(?:api|oauth)_[A-Za-z0-9]{30,}"  # Linear
        r"|(?:secret|ntn)_[A-Za-z0-9]{40,}"  # Notion
        r"|sbp_[0-9a-f]{40}"  # Supabase
        r"|gl(?:sa|c)_[A-Za-z0-9_+/=-]{30,}"  # Grafana
        r"|NRAK-[A-Z0-9]{27}"  # New Relic
        r"|PMAK-[0-9a-f]{24}-[0-9a-f]{34}"  # Postman
        r"|dp\.(?:st|ct|pt|sa|scim|audit)\.[A-Za-z0-9_.-]{30,}"  # Doppler
        r"|pul-[0-9a-f]{40}"  # Pulumi
        r"|key-[0-9a-f]{32}"  # Mailgun
        r"|sk\.eyJ[A-Za-z0-9_.-]{20,}"  # Mapbox
        r"|rdme_[a-z0-9]{70,}"  # ReadMe
        r"|xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16}"  # Brevo
        r"|(?:EAAC|EAAG)[A-Za-z0-9]{60,}"  # Meta
        r"|ya29\.[A-Za-z0-9_-]{30,}"  # Google OAuth access token
        r"|1//0[A-Za-z0-9_-]{30,}"  # Google OAuth refresh token
        r"|LTAI[A-Za-z0-9]{12,28}"  # Alibaba Cloud AccessKey ID
        r"|rubygems_[0-9a-f]{48}"  # RubyGems
        r"|rzp_(?:live|test)_[A-Za-z0-9]{14,}"  # Razorpay
        r"|[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"  # Microsoft Entra client secret
        r"|pat[A-Za-z0-9]{14}\.[0-9a-f]{64}"  # Airtable
        r"|sq[upa]_[0-9a-f]{40}"  # SonarQube
        r"|\d{6}(?:-\d{6}){7}"  # a BitLocker recovery key
        rf"){_E}",
    ),
)


def _combined() -> re.Pattern[str]:
    """Every shape in one alternation, scanned once: shape i is group `k{i}`, its
    secret group `secret_{i}` (or `hook_{i}`, `sig_{i}`)."""
    parts = []
    for i, shape in enumerate(SHAPES):
        source = re.sub(r"\(\?P<(secret|hook|sig)>", rf"(?P<\1_{i}>", shape.pattern.pattern)
        parts.append(f"(?P<k{i}>{source})")
    return re.compile("|".join(parts))


_SHAPES = _combined()
# Every shape's match holds its anchor.
SHAPED_NEED = Need("|".join(shape.anchor for shape in SHAPES))
_GROUPS = tuple(
    (s.kind, tuple(g for g in (f"secret_{i}", f"hook_{i}", f"sig_{i}") if g in _SHAPES.groupindex))
    for i, s in enumerate(SHAPES)
)
# Formats whose prefix is also a common word start (`sk-learn-compatible-...`): their
# body must look random, not be made of words.
_LOOSE = frozenset({"openai_key", "github_token", "slack_token"})


def shaped(text: str) -> Iterator[Span]:
    for match in _SHAPES.finditer(text):
        i = int((match.lastgroup or "k0")[1:])  # the shape's group closes last
        kind, groups = _GROUPS[i]
        span = next((match.span(g) for g in groups if match[g] is not None), match.span())
        value = text[span[0] : span[1]]
        if is_placeholder(value) or (kind in _LOOSE and wordiness(value) >= WORDY_FRACTION):
            continue
        yield span[0], span[1], kind


# ---- blocks and credentials in URLs and headers ---------------------------------------

# PEM: the whole block. An unterminated block runs to the end of the text. Trigger: the
# markers alone, without base64 after them. Why: prose describing the format ("starts
# with -----BEGIN RSA PRIVATE KEY-----") holds no key. Outcome: not a secret.
# A block inside a JSON string has its newlines escaped (`\n`), as in a GCP key file.
_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\\n)?|\Z))"
)
_PEM_BODY = re.compile(r"(?:\s|\\n)*(?:[A-Za-z-]+:[^\n]*\n)*(?:\s|\\n)*[A-Za-z0-9+/=]{16,}")
# scheme://user:PASSWORD@host; the password runs to the LAST @ of the authority. A user
# alone that is a long random key (`https://<32 hex>@o1.ingest.sentry.io/2`) is one too.
_CONNECTION = re.compile(
    r"(?<![\w+.-])[a-z][a-z0-9+.-]{1,20}://(?:[^\s:/@\[\]]*:(?P<secret>[^\s/\[\]]*)"
    r"|(?P<key>[0-9a-f]{32,}|[A-Za-z0-9_-]{36,}))@[^\s@/]*\w"
)
_NAME = re.compile(r"[A-Za-z_]+(?:[-'.][A-Za-z_]+)*")
# Oracle's `user/password@host` (sqlplus, JDBC thin): a host with a dot, a port or `//`.
_SLASHED = re.compile(
    r"(?<![\w./:@-])[A-Za-z][\w$#-]*/(?P<secret>[^\s/@\"']{4,})"
    r"@(?!v?\d)(?://|[A-Za-z][\w-]*(?:\.[\w-]+)+|[A-Za-z][\w-]*:\d)"
)
# A Wi-Fi QR code's text: `WIFI:T:WPA;S:name;P:password;;`.
_WIFI_QR = re.compile(r"WIFI:[^\n]*?(?<=[:;])P:(?P<secret>(?:[^;\\]|\\.)+);")
# Go's MySQL DSN: `user:password@tcp(host:3306)/db`.
_GO_DSN = re.compile(r"(?<![\w.\[-])[\w.-]+:(?P<secret>[^@\s\"'/:\[\]]+)@(?:tcp|unix)\(")
# A `.pgpass` line: host:port:database:user:password.
_PGPASS = re.compile(r"^[ \t]*[\w.*-]+:(?:\d+|\*):[\w.*-]+:[\w.*-]+:(?P<secret>\S+)[ \t]*$", re.M)
# Session cookies: every value of a `Cookie:` header (or of `Set-Cookie:`'s pair).
_COOKIE = re.compile(r"(?im:^[ \t<>]*(?:set-)?cookie:[ \t]*(?P<pairs>[^\n]+))")
_COOKIE_PAIR = re.compile(r"(?:^|;)[ \t]*[\w.-]+=(?P<secret>[^;\s]+)")
MIN_COOKIE = 16
_BEARER = re.compile(r"\bBearer[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{16,})")
_AUTH_SCHEME = re.compile(
    r"(?i:\b(?:authorization|auth))[\"']?[ \t]*[:=]?[ \t]*[\"']?(?i:basic|token|digest|apikey)"
    r"[ \t]+(?P<secret>[A-Za-z0-9._~+/=-]{8,})"
)
_BASIC = re.compile(r"\bBasic[ \t]+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])")

# _PEM opens with its marker.
PEM_NEED = Need(r"-----BEGIN ")
# _CONNECTION, _SLASHED and _GO_DSN hold an `@`; _PGPASS a port (or `*`) between colons;
# _WIFI_QR its `WIFI:`.
URL_NEED = Need(r"@|:(?:\d+|\*):|WIFI:")
# _BEARER's and _BASIC's scheme; _AUTH_SCHEME's key and scheme; _COOKIE's header name.
AUTH_NEED = Need(
    (
        r"Bearer[ \t]|Basic[ \t]",
        led("cookie:"),
        led("auth")
        + r"""(?i:orization)?["']?[ \t]*[:=]?[ \t]*["']?(?i:basic|token|digest|apikey)[ \t]""",
    )
)


def _pem_blocks(text: str) -> Iterator[Span]:
    for match in _PEM.finditer(text):
        if _PEM_BODY.match(match["body"]):
            yield match.start(), match.end(), "private_key"


def _url_credentials(text: str) -> Iterator[Span]:
    """Trigger: a password made only of letters (`user:password@`, `github://org:repo@`,
    `actions/checkout@v4`). Why: that is a documentation template or another syntax.
    Outcome: not a secret."""
    for match in _CONNECTION.finditer(text):
        group = "secret" if match["secret"] is not None else "key"
        value = match[group]
        if value and not is_placeholder(value) and not _NAME.fullmatch(value):
            yield match.start(group), match.end(group), "connection_string"
    for pattern in (_SLASHED, _PGPASS, _WIFI_QR, _GO_DSN):
        for match in pattern.finditer(text):
            value = match["secret"]
            if not is_placeholder(value) and not _NAME.fullmatch(value) and value != "*":
                yield match.start("secret"), match.end("secret"), "connection_string"


def _auth_headers(text: str) -> Iterator[Span]:
    for pattern in (_BEARER, _AUTH_SCHEME):
        for match in pattern.finditer(text):
            value = match["secret"]
            if not is_placeholder(value) and has_letter_and_digit(value):
                yield match.start("secret"), match.end("secret"), "auth_header"
    for header in _COOKIE.finditer(text):
        for pair in _COOKIE_PAIR.finditer(header["pairs"]):
            value = pair["secret"]
            if len(value) >= MIN_COOKIE and has_letter_and_digit(value):
                offset = header.start("pairs")
                yield offset + pair.start("secret"), offset + pair.end("secret"), "auth_header"
    for match in _BASIC.finditer(text):  # base64 of `user:password`
        decoded = decoded_text(match["secret"])
        if decoded and ":" in decoded and not is_placeholder(decoded.split(":", 1)[1]):
            yield match.start("secret"), match.end("secret"), "auth_header"


# ---- high entropy: long random-looking tokens ------------------------------------------

# Trigger: 32+ token characters. Why: shorter random strings are ids and short hashes;
# real keys without a known prefix are 32-64 characters. Outcome: candidates only.
MIN_ENTROPY_TOKEN = 32
_TOKEN = re.compile(
    rf"(?<![A-Za-z0-9+/_\\-])(?P<secret>[A-Za-z0-9+/_-]{{{MIN_ENTROPY_TOKEN},}}={{0,2}})(?![\w+/=-])"
)
_URL = re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]*+://\S+")
_SHORT_BASE64 = re.compile(
    rf"(?<![A-Za-z0-9+/_\\-])(?P<secret>[A-Za-z0-9+/]{{16,{MIN_ENTROPY_TOKEN - 1}}}={{0,2}})(?![\w+/=-])"
)
# Public material and digests named by their prefix: `ssh-ed25519 AAAA...`, `h1:...`
# (go.sum), `sha256:...`, `data:...;base64,...`, and SRI `sha512-...` inside the token.
_PUBLIC_PREFIX = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-\S+|sk-ssh-\S+)[ \t]+$"
    r"|(?:sha1|sha256|sha384|sha512|md5|h1):$|base64,$",
    re.IGNORECASE,
)
_DIGEST_LABEL = re.compile(r"(?:sha1|sha256|sha384|sha512|md5)-", re.IGNORECASE)


def _exempt(text: str, start: int, token: str, urls: list[tuple[int, int]]) -> bool:
    """Inside a URL or a host name (`<client id>.apps.googleusercontent.com`), after a
    public-key or digest label, or labelled a digest itself."""
    return (
        any(url_start <= start < url_end for url_start, url_end in urls)
        or _PUBLIC_PREFIX.search(text[max(0, start - 40) : start]) is not None
        or _DIGEST_LABEL.match(token) is not None
        or _DATA_LABEL.search(text[max(0, start - 40) : start]) is not None
        or _NAMED_DIGEST.fullmatch(token) is not None
        or _HOST_AFTER.match(text, start + len(token)) is not None
    )


_HOST_AFTER = re.compile(r"(?:\.[a-z][a-z0-9-]*){2,}\b")
# A name with a digest after it: a cache key (`Linux-pnpm-store-<sha256>`), a build id.
_NAMED_DIGEST = re.compile(r"(?:[A-Za-z][A-Za-z0-9]*[-_.]){2,}[0-9a-f]{16,}")
# A key or element that names what follows as data: `payload=...`, a plist's `<data>`.
_DATA_LABEL = re.compile(
    r"(?:\b(?:payload|data|body|content|blob|message|msg|image|img|thumbnail|avatar|icon|attachment)"
    r"[\"']?[ \t]*[:=][ \t]*[\"']?|<data>\s*)$",
    re.IGNORECASE,
)


# Files whose base64 is data, not a key: their first bytes say what they are.
_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"\x1f\x8b",
    b"PK\x03\x04",
    b"%PDF",
    b"BZh",
    b"\x28\xb5\x2f\xfd",
    b"RIFF",
    b"\x00asm",
    b"OggS",
    b"ID3",
)
# Decoded bytes this printable are a structure with text in it (a protobuf, a CBOR
# record), not a key: 24 random bytes are this printable in about 0.2% of samples.
DATA_PRINTABLE = 0.6
# A DER structure (`MII...`): a private key has its version right after the outer
# header (`02 01 00` or `02 01 01`); a certificate or a public key does not.
_DER_PRIVATE = re.compile(rb"\x30(?:\x82..|\x81.|[\x00-\x7f])\x02\x01[\x00\x01]", re.DOTALL)


def _raw(token: str) -> bytes | None:
    stripped = token.rstrip("=")
    try:
        return base64.b64decode(
            stripped + "=" * (-len(stripped) % 4),
            altchars=b"-_" if "-" in token or "_" in token else None,
            validate=True,
        )
    except (binascii.Error, ValueError):
        return None


def is_data(token: str) -> bool:
    """base64 of a file, of a public DER structure, or of a record with text in it."""
    raw = _raw(token)
    if not raw or len(raw) < 16:
        return False
    if raw.startswith(_MAGIC):
        return True
    if raw[0] == 0x30:
        return _DER_PRIVATE.match(raw) is None
    printable = sum(32 <= b < 127 for b in raw) / len(raw)
    return printable >= DATA_PRINTABLE


# _TOKEN's run of 32 token characters, or _SHORT_BASE64's run of 16 base64 ones, each
# from where its run starts.
HIGH_ENTROPY_NEED = Need(
    rf"(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{{16}}|(?<![_-])[A-Za-z0-9+/_-]{{{MIN_ENTROPY_TOKEN}}})"
)


def _high_entropy(text: str, inner: Callable[[str], bool]) -> Iterator[Span]:
    """Long random tokens; base64 of text counts only when that text holds a secret
    (`inner`: whether a decoded text does), as a key file encoded for a CI variable."""
    urls = [m.span() for m in _URL.finditer(text)]
    for match in _TOKEN.finditer(text):
        token = match["secret"]
        if _exempt(text, match.start(), token, urls) or is_placeholder(token):
            continue
        decoded = decoded_text(token)
        if decoded is not None:
            if inner(decoded):
                yield match.start(), match.end(), "encoded_secret"
        elif looks_random(token) and not is_data(token):
            yield match.start(), match.end(), "high_entropy"
    for match in _SHORT_BASE64.finditer(text):  # a short key encoded (a k8s Secret's data)
        decoded = decoded_text(match["secret"])
        if decoded is not None and inner(decoded):
            yield match.start(), match.end(), "encoded_secret"


# ---- what is public, or an example -------------------------------------------------------

# PEM blocks of public material: nothing inside them is a secret.
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?P<kind>(?:[A-Z0-9]+ )*?(?:CERTIFICATE(?: REQUEST)?|PUBLIC KEY(?: BLOCK)?"
    r"|X509 CRL|PKCS7|DH PARAMETERS|SIGNATURE|MESSAGE))-----[\s\S]*?(?:-----END (?P=kind)-----|\Z)"
)
# A random-looking value named as public or as an identifier: `PublicKey = ...`,
# `"node_id": "..."`, `recipients: age1...`, `"n": "..."` (a JWK modulus), `kid`.
_NAMED_PUBLIC = re.compile(
    r"(?:(?i:(?:public|publishable|pub|verif(?:y|ication)|signing[\s_-]?cert)[\s_-]?key|publickey"
    r"|recipients?|fingerprint|thumbprint|[\w]*_?id|\bids?|uuid|guid|sha\d*|hash|digest|checksum"
    r"|integrity|etag|kid|modulus|certificate|cert|commit|revision|nonce|salt|x5c|x5t|site[\s_-]?key|id-\d+"
    r"|sitekey|code_challenge|cid)"
    r"|\"[nexy]\"|\b[nexy]\b)[\"']?[ \t]*(?:[:=]|is|->)?[ \t]*[\"'\[(]*[ \t]*$"
)
# Public material named earlier on the line: "minisign public key for releases: RW...".
_PUBLIC_NEAR = re.compile(r"(?i:public[\s_-]?key|publickey|recipients?|fingerprint)[^\n]{0,48}$")
# age recipients, nostr and bech32 public keys: public by their prefix.
_PUBLIC_TOKEN = re.compile(
    r"(?:age1|npub1|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-|bafy[a-z2-7]{50}|Qm[1-9A-HJ-NP-Za-km-z]{44}"
    r"|pk\.eyJ|AQICAH)\S*$"  # a Mapbox public token; a KMS ciphertext
)
# Values published in vendors' and standards' documentation as examples: known to all,
# they protect nothing. A finding holding one of them, or the word EXAMPLE, is kept.
DOCUMENTED_EXAMPLES = frozenset(
    {
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "pk_test_TYooMQauvdEDq54NiTphI7jx",
        "2YotnFZFEjr1zCsicMWpAA",  # RFC 6749's access and refresh tokens
        "tGzv3JOkF0XG5Qx2TlKWIA",
        # the three parts of jwt.io's example token (whole, it is listed below)
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
        "pk_test_6pRNASCoBOKtIshFeQd4XMUh",
        "rk_test_4eC39HqLyjWDarjtT1zdp7dc",
        "whsec_1234567890abcdef",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0"
        "IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
        "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
        "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
        "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
        "MWYyZDFlMmU2N2Rm",
        "YWRtaW4=",
        '_5#y2L"F4Q8z\\n\\xec]/',
        "AEHbMt6FAGEhpTeD5iYQqRDUSgfbYTXNmyBuwEB_kF6b7gNRr8KwNn6cX33HjtJB2jNtnbxHBu9P3eYvwMVYD7Dw"
        "AXBlNRfSEj5uTIBJzM9LgQFxBkh9UUWPzJbHtUFdkqXQzD0FixBUKJwrwpDPyqxkzVMVBPA7AkzOB1FYaI",
        "xoxb-not-a-real-token-this-will-not-work",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "gho_16C7e42F292c6912E7710c838347Ae178B4a",
        "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",  # Aladdin:open sesame, RFC 7617's Basic example
        "6LeIxAcTAAAAAJcZVRqyHh71UMIEGNQ_MXjiZKhI",  # reCAPTCHA test site key
        "6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe",  # reCAPTCHA test secret key
        "JBSWY3DPEHPK3PXP",  # Google Authenticator's Key Uri Format example
        "W269N-WFGWX-YVC9B-4J6C9-T83GX",  # a Windows KMS client key Microsoft publishes
        "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",  # wg(8)'s example private key
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0"
        "dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    }
)
_NOT_REAL = re.compile(
    r"(?i:example|not[-_]?a[-_]?real|dummy|fake[-_]?(?:key|token|secret)|[-_]your[-_]|[-_]my[-_]token)"
)


# An SSH public key and a key fingerprint: public whatever label stands before them.
_PUBLIC_LINE = re.compile(
    r"untrusted comment:[^\n]*\n[A-Za-z0-9+/=]{40,}"  # a minisign public key or signature
    r"|ENC\[[A-Z0-9_]+,data:[^\]\n]*\]"  # a SOPS-encrypted value
    r"|ENC\[PKCS7,[A-Za-z0-9+/=\s]+\]"  # a hiera-eyaml encrypted value
    r"|\$ANSIBLE_VAULT;[\d.]+;\w+(?:;[\w-]+)?[ \t]*\n(?:[ \t]*[0-9a-f]+[ \t]*(?:\n|$))+"  # ansible-vault
    r"|(?<![\w])bc1[02-9ac-hj-np-z]{25,62}(?![\w])"  # a Bitcoin address
    r"|(?<![\w])pk_(?:live|test)_[A-Za-z0-9]{20,}"  # a Stripe publishable key, meant for browsers
    r"|(?<![\w.])pk\.eyJ[\w.-]+"  # a Mapbox public token, meant for browsers
    r"|kind:[ \t]*SealedSecret[\s\S]*"  # a SealedSecret: encrypted to be committed
    r"|(?<![\w])0x[0-9a-fA-F]{40}(?![0-9a-fA-F])"  # an Ethereum address (a key is 64 digits)
    r"|\b(?:sha-?(?:256|384|512)|md5)=:[A-Za-z0-9+/]+=*:"  # an HTTP digest field
    r"|(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)"
    r"@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/]+=*"
    r"|\b(?:SHA256|SHA1|MD5):[A-Za-z0-9+/:]{16,}=*"
)


def public_spans(text: str) -> list[tuple[int, int]]:
    """Where nothing is a secret: public PEM blocks and SSH keys, fingerprints,
    documented example values."""
    spans = [m.span() for m in _PUBLIC_BLOCK.finditer(text)]
    spans += [m.span() for m in _PUBLIC_LINE.finditer(text)]
    for example in DOCUMENTED_EXAMPLES:
        at = text.find(example)
        while at >= 0:
            spans.append((at, at + len(example)))
            at = text.find(example, at + 1)
    return spans


def not_secret(text: str, start: int, end: int, kind: str) -> bool:
    """A finding that is public or a documented example after all."""
    value = text[start:end]
    if value in DOCUMENTED_EXAMPLES or _NOT_REAL.search(value):
        return True
    if kind not in ("high_entropy", "encoded_secret"):
        return False
    if _PUBLIC_TOKEN.match(value):
        return True
    if kind == "encoded_secret":
        return False  # what it encodes holds a secret, whatever its name says
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 80) : start]
    return bool(_NAMED_PUBLIC.search(before) or _PUBLIC_NEAR.search(before))


DETECTORS = (
    Detector(_pem_blocks, PEM_NEED),
    Detector(shaped, SHAPED_NEED),
    Detector(_url_credentials, URL_NEED),
    Detector(_auth_headers, AUTH_NEED),
)
NEEDS = (*(detector.need for detector in DETECTORS), HIGH_ENTROPY_NEED)


def token_spans(text: str, inner: Callable[[str], bool]) -> Iterator[Span]:
    """Every secret found by its shape, by the detectors whose needs the text meets."""
    yield from run(DETECTORS, text)
    if HIGH_ENTROPY_NEED.met(text):
        yield from _high_entropy(text, inner)


TOKEN_KINDS = (
    "private_key",
    *dict.fromkeys(shape.kind for shape in SHAPES),
    "connection_string",
    "auth_header",
    "encoded_secret",
    "high_entropy",
)
