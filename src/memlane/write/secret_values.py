"""Secrets that are named, then given: "the staging password is X", `DB_PASSWORD=X`,
`--token X`, `<password>X</password>`, a table's password column, "PIN 4417",
"la contraseña es X", "密码是X". Pure functions.

A label (a word that names a secret, in prose or as a key) is found first; the value
is read after it, and judged. What is never a value: a placeholder or a reference to
where the secret lives (`${DB_PASSWORD}`, `os.environ[...]`, a path or URL), a word
or an identifier made of words (`required`, `qa_reader`), an email address, a host
name, an IP address, a date, a time, a version, a number with a unit, a ticket id.

Labels are of four families, which name the redaction and say what a value may look
like: `password` (letters with digits or symbols; digits alone from six), `passphrase`
(also words joined or, after a colon, spaced), `pin` (digits, or recovery-code groups)
and `credential` (tokens, keys, secrets: random-looking values). A weak label (`key`,
`login`, `auth`) only takes a value that could be nothing else but a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from memlane.write.secret_labels import (
    CREDENTIAL,
    FAMILIES,
    KEY_NAME,
    LABEL,
    PASSPHRASE,
    PASSWORD,
    PIN,
    key_family,
    label_family,
    labels,
    names_secret,
    weak_key,
)
from memlane.write.secret_needs import AtWord, Detector, Need, Span, led, run
from memlane.write.secret_tokens import (
    PIECES,
    WORDY_FRACTION,
    decoded_text,
    has_letter_and_digit,
    is_path,
    is_placeholder,
    shannon_entropy,
    wordiness,
)

KINDS = FAMILIES


class Label(NamedTuple):
    family: str
    weak: bool
    end: int  # where the value may start
    direct: bool  # a key, flag or markup: the value follows at once


# ---- what a value may not be ----------------------------------------------------------------

_NOT_VALUE = re.compile(
    r"""[^@\s]+@[\w-]+(?:\.[\w-]+)+                            # email address
      | \d{1,3}(?:\.\d{1,3}){3}(?:[:/]\d+)?                    # IPv4, with a port or prefix
      | [0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?:/\d+)?    # IPv6
      | \d{4}-\d{2}-\d{2}(?:[T\s]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?
      | \d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]m)?                  # a time
      | \d{1,2}[./-]\d{1,2}[./-]\d{2,4}                         # a date
      | v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)?                     # a version
      | [\w.-]+@v?\d+(?:\.\d+)+                                 # package@version
      | [$€£¥]?\d+(?:[.,]\d+)*[\s-]?(?:ms|s|sec|secs|m|min|mins|h|hrs?|d|days?|w|mo|y
         |kb|mb|gb|tb|k|x|%|px|chars?|characters?|bits?|bytes?|digits?)  # a quantity
      | (?-i:[A-Z][A-Z0-9]+-\d+) | [#!]\d+                       # a ticket, an issue
      | [$€£¥]\d[\d.,]*                                           # money
      | [\w.-]+\.(?:txt|json|ya?ml|pem|key|crt|env|conf|cfg|ini|md|py|sh|toml|gpg|kdbx|p12
         |pfx|sql|gz|tgz|zip|tar|log|csv|db|dump|bak|png|jpe?g|pdf|html?|js|ts|go|rs|java|rb)
      | [\w.]*[(\[].*                                             # a code expression
      | .*["'][ \t]*[:,][ \t]*["'].*                               # a fragment of JSON
    """,
    re.VERBOSE | re.IGNORECASE,
)
# A host name: dot-separated labels ending in a common top-level domain.
_HOST = re.compile(
    r"(?:[A-Za-z0-9-]+\.)+(?:com|net|org|io|dev|app|ai|co|cloud|local|lan|internal|corp|example"
    r"|test|de|uk|fr|es|it|nl|jp|cn|ru|eu|us|ca|au|in|br|ch|se|pl|me|sh|gg|so|xyz|tech|site)"
    r"(?::\d+)?",
    re.IGNORECASE,
)
_UUID = re.compile(r"\{?[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\}?")
_HEXLIKE = re.compile(r"(?:0x)?[0-9a-fA-F]+")
_FUNCTION_WORDS = frozenset(
    "a an the and or but of to in on at for with from by is are was were be been it its this "
    "that these those as so if not no yes all any some each my your our their his her".split()
)
# Words (or marks) between a label and its value that leave the value linked to it.
_LINKS = frozenset(
    ": = - — – → => := | / is was are be now currently set to ist lautet war est était es era "
    "é è jest je är er zijn это 是 为 為 は が 는 은 이 가 です là just simply literally actually "
    "still changed updated είναι ist c'est c’est it's it’s هو هي הוא היא".split()
)
# Password managers: "see 1Password", "in KeePass" name where a secret lives.
_VAULTS = frozenset(
    "1password lastpass bitwarden vaultwarden keepass keepassxc dashlane keeper nordpass "
    "protonpass enpass keychain".split()
)
_QUOTES = {
    '"': '"',
    "'": "'",
    "`": "`",
    "«": "»",
    "“": "”",
    "‘": "’",
    "„": "“",
    "‚": "‘",
    "「": "」",
    "『": "』",
}
# Sentence punctuation after a value. A `!` or `?` glued to a value stays with it (a
# redaction one character too long loses nothing; one too short leaves a fragment).
_TRAILING = ".,;:)]}>\"'»“」』、。，；：）،"
_LEADING = "([{<\"'`«„‚「『（=:"
_WORD_MARKS = "'’-._"  # marks that join words, not the symbols a password mixes in
MIN_VALUE = 4  # shorter values are counts, flags and toy examples
MIN_PASSWORD = 5
STRONG_LENGTH = 12  # a value this long of 3+ character classes is unmistakable
RANDOM_LENGTH = 16  # a token this long of letters and digits, not words, is random
DIGIT_RUNS = 3  # digits scattered through letters in this many runs: random, not a name
MIN_LINKED_DIGITS = 6  # digits alone: a password right after its label from this long
MIN_WORD = 4  # letters of a piece that counts as a word there (`KBO` is not one)
UNLINKED_WORDINESS = 0.6  # a value away from its label this much made of words is a name
HEADING_WORDS = 4  # a line this short that ends with a label heads the value below it


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in _WORD_MARKS for c in value),
        )
    )


def _is_reference(value: str) -> bool:
    return (
        is_path(value)
        or "://" in value
        or value.startswith(("arn:", "vault:", "env:", "file:", "op://", "~/", "/", "${", "$("))
    )


def _identifier(value: str) -> bool:
    """Made of words: `qa_reader`, `svc-etl`, `release.bot`, `DB_PASSWORD`,
    `secretsmanager:PutSecretValue`."""
    parts = [p for p in re.split(r"[:/]", value) if p]
    return bool(parts) and all(
        re.fullmatch(r"[\w.-]+", p) is not None and wordiness(p) >= WORDY_FRACTION for p in parts
    )


def is_random(value: str) -> bool:
    """Long and random: hex, base32, base62 or base64 of 16+ characters, not words (or
    digits scattered through it, which names never have)."""
    if len(value) < RANDOM_LENGTH:
        return False
    if value.isalpha():  # letters alone: random when no words hide in mixed case
        return _classes(value) == 2 and wordiness(value) < WORDY_FRACTION / 2
    if not has_letter_and_digit(value):
        return False
    if len(re.findall(r"\d+", value)) >= DIGIT_RUNS and len(re.findall(r"[A-Za-z]+", value)) > 3:
        return True
    return wordiness(value) < WORDY_FRACTION and shannon_entropy(value) >= 3.0


def _unmistakable(value: str) -> bool:
    """A value no prose would hold but as a secret (what a weak label needs)."""
    if _HEXLIKE.fullmatch(value) or _UUID.fullmatch(value):
        return False  # digests, commit ids and request ids look the same
    return is_random(value) or (len(value) >= STRONG_LENGTH and _classes(value) >= 3)


def is_value(
    value: str, family: str, weak: bool = False, quoted: bool = False, linked: bool = True
) -> bool:
    """Whether `value`, read after a label of `family`, is the secret itself.

    Trigger: the value is not `linked` to its label (words stand between them). Why: a
    sentence that names a password may go on to other things. Outcome: it must prove
    more: no quoted words, no bare hex or UUIDs for tokens, no digits alone.
    """
    core = value.rstrip("!?") or value
    sentence = family == PASSPHRASE and quoted and linked and " " in value  # "the kettle is on 42"
    placeholder = is_placeholder(core) and not (
        sentence and core[:1].isalnum() and core.split()[0].lower() not in ("your", "my")
    )
    if len(value) < MIN_VALUE or placeholder or _is_reference(value):
        return False
    if re.fullmatch(
        r"--?[a-z][a-z0-9-]*(?:=[\w.:/-]*)?|[A-Z]+(?:[_-][A-Z]+)+|![A-Za-z][a-z]*(?:[A-Z_][a-z]+)*",
        core,
    ):
        return False  # a flag (`-method=oidc`), or a template's name for it (`TWOJE_HASLO`)
    assigned = re.fullmatch(r"[A-Za-z_][\w.-]*=(.+)", core)
    if assigned and is_placeholder(assigned[1]):
        return False  # `TOKEN=<from BotFather>`: how to set it, not its value
    if re.fullmatch(r"[a-z]+(?:_[a-z]+)+", core) and names_secret(core.rsplit("_", 1)[0]):
        return False  # `password_hash`, `api_key_id`: a name that holds a label
    if _NOT_VALUE.fullmatch(core) or _HOST.fullmatch(core) or core.lower() in _VAULTS:
        return False
    if re.search(r"[:/]", core) and _identifier(core) and not any(c.isdigit() for c in core):
        return False  # `secretsmanager:PutSecretValue`, `team/infra`
    if (weak or not linked) and _encoded_data(core):
        return False  # base64 of a record or a cursor: data (`user:password` is read apart)
    if weak:
        return linked and _unmistakable(core)
    if family == PIN:
        return _pin(value)
    if core.isdigit():
        return family in (PASSWORD, PASSPHRASE) and linked and len(core) >= MIN_LINKED_DIGITS
    if family == PASSPHRASE and _joined_words(core):
        return True
    if quoted and " " in value:
        words = value.lower().split()
        return family == PASSPHRASE and linked and len(set(words)) * 2 >= len(words)
    if family == CREDENTIAL:
        hexlike = _HEXLIKE.fullmatch(core) or _UUID.fullmatch(core)
        if hexlike:
            return len(core) >= (RANDOM_LENGTH if linked else 2 * RANDOM_LENGTH) and (
                linked or not _UUID.fullmatch(core)
            )
        return _unmistakable(core) or (linked and quoted and _classes(core) >= 3)
    if core.isalpha() or (_identifier(core) and not any(c.isdigit() for c in core)):
        return linked and (quoted or is_random(core))
    if not linked:  # words in it (`Season+Year!`, `2FA-code`) make it a name
        return _unmistakable(core) or (
            _classes(core) >= 3 and wordiness(core, MIN_WORD) < UNLINKED_WORDINESS
        )
    return len(value) >= MIN_PASSWORD and _classes(value) >= 2


_CODE = re.compile(
    r"\d{3,6}(?:[ -]\d{3,6}){1,7}|\d{4,12}[#*]?|[0-9a-z]{4,6}(?:-[0-9a-z]{4,6}){1,3}"
    r"|\d{2}(?:-\d{2}){2,3}"  # a safe's combination
    r"|\d(?:-\d){3,7}"  # keys pressed on a keypad
    r"|[A-Z]\d{4,8}"  # a door code with its letter
)


def _pin(value: str, listed: bool = False) -> bool:
    """Digits, or groups of a recovery code (`4e062-e3418`, `6471 6869`); in a list of
    codes any such group counts, alone it needs four digits."""
    if _CODE.fullmatch(value) is None:
        return False
    return listed or sum(c.isdigit() for c in value) >= MIN_VALUE


def _short_code(value: str) -> bool:
    """Four or five digits right after a password label ("şifresi 0064"): a PIN given
    as a password; not a year."""
    return (
        value.isdigit()
        and MIN_VALUE <= len(value) < MIN_LINKED_DIGITS
        and _YEAR.fullmatch(value) is None
    )


_YEAR = re.compile(r"(?:19|20)\d\d")


def _spaced_words(text: str, pos: int, stop: int, minimum: int = 3) -> tuple[int, int] | None:
    """Random words spaced apart at `pos`: three or more, none a word prose needs, and
    at most one shaped like a verb or an adverb."""
    spaced = _SPACED_WORDS.match(text, pos, stop)
    if spaced is None:
        return None
    words = spaced[1].split()
    alpha = [w.lower() for w in words if w.isalpha()]
    shaped = sum(w.endswith(_PROSE_SUFFIXES) and len(w) > 4 for w in alpha)
    if len(alpha) < minimum or _PROSE_WORDS.intersection(alpha) or shaped > 1:
        return None
    if len(set(alpha)) * 2 < len(alpha):
        return None  # "test test test ... junk": a documented default, not a random choice
    return spaced.span(1)


def _joined_words(value: str) -> bool:
    """Three or more words joined by `-`, `_`, `.` or `+` (diceware style), or CamelCase."""
    if any(c.isspace() for c in value):
        return False
    parts = [p for p in re.split(r"[-_.+]", value) if p]
    return (len(parts) >= 3 and all(p.isalnum() for p in parts)) or len(PIECES.findall(value)) >= 3


# ---- reading the value after a label ------------------------------------------------------

_TOKEN = re.compile(
    r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]"  # one CJK, kana, hangul, thai
    r"|[\u3000-\u303f\uff00-\uffef]"  # CJK and full-width punctuation
    r"|[^\s\u3000-\u303f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef\u0e00-\u0e7f]+"
)
_NEW_KEY = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)=\S")
_SENTENCE_END = frozenset("。！？；")
WINDOW = 12  # tokens after a label that may hold its value
# A passphrase of spaced words (digits may be among them), to the end of its clause.
_SPACED_WORDS = re.compile(
    r"[ \t]*[«\"'“]?((?:[A-Za-z][a-z]{2,9}|[^\W\d_]{3,10}|\d{1,4})(?:[ \t]+(?:[A-Za-z][a-z]{2,9}|[^\W\d_]{3,10}|\d{1,4})){2,23})"
    r"[»\"'”]?[ \t]*(?=$|[\n.,;(—–]|-[ \t]|[ \t]+(?:and|but|with|for|on|in|all)\b)"
)
MIN_PASSWORD_WORDS = 4  # spaced words a password (not a passphrase) label may take
# A TOTP seed written in groups of four: "dj72 ddy2 e6tq wqhf".
# A TOTP seed or an app password written in groups of four: "dj72 ddy2 e6tq wqhf".
_GROUPS_OF_FOUR = re.compile(r"[ \t]*((?:[A-Za-z0-9]{4}[ \t]){3,}[A-Za-z0-9]{4})(?![\w])")


def _four_groups(text: str, pos: int, stop: int | None = None) -> tuple[int, int] | None:
    """Groups of four at `pos` that are not words, nor hex digits alone (a key
    fingerprint, published to be checked)."""
    groups = _GROUPS_OF_FOUR.match(text, pos, len(text) if stop is None else stop)
    if groups is None or _HEXLIKE.fullmatch(groups[1].replace(" ", "").replace("\t", "")):
        return None
    if _FUNCTION_WORDS.intersection(groups[1].lower().split()):
        return None
    return groups.span(1)


# Where a passphrase starts after its label: after a colon or `is` later in the clause.
# The words between a label and its spaced value; a number among them is the value.
_PHRASE_START = re.compile(r"(?:(?!\d{4})[^\n.!?;:]){0,60}?(?::|\b(?:is|was)\b)")
# Words of a sentence about a passphrase, which a passphrase of random words lacks.
_PROSE_WORDS = _FUNCTION_WORDS | frozenset(
    "never always also only just still even very too quite really now then here there where "
    "when what which who how why will would should could must can may might shall do does did "
    "done have has had get got make made use used see read write send sent give given take "
    "taken keep kept store stored save saved share shared change changed rotate rotated reset "
    "set required needed long short secret known unknown same different easy hard weak strong "
    "good bad wrong correct right expired missing empty blank new old default words word "
    "letters characters phrase passphrase password als het van een der die das und ist mit von "
    "les est une des los las una che gli uma och att det som med för jak nie что это как".split()
)
_PROSE_SUFFIXES = ("ed", "ing", "ly")
_LIST_ITEM = re.compile(r"[ \t]*(?:->|=>|→|[-*•]|\d+[.)])?[ \t]*(?P<item>\S(?:.*\S)?)[ \t]*$")


_NEXT_PARAM = re.compile(r"&[a-z][a-z0-9]*(?:_[a-z0-9]+)*=")


# A clause after `;` that gives the value: "the password got reset; it's now X".
_FOLLOW_UP = re.compile(
    r"[ \t]*(?:it'?s|it\s+is|now\s+it'?s)(?:[ \t]+now)?(?=[ \t])", re.IGNORECASE
)


_NEXT_FIELD = re.compile(r";[A-Za-z][\w ]{1,30}=")
# Hangul or kana after a value of Latin letters and digits: the sentence's ending.
_PARTICLE = re.compile(r"(?<=[\x21-\x7e])[\uac00-\ud7a3\u3040-\u309f]+$")


def _strip(token: str) -> tuple[int, str]:
    """(offset, value) of a token without the punctuation around it."""
    lead = len(token) - len(token.lstrip(_LEADING))
    value = token[lead:]
    query = _NEXT_PARAM.search(value)
    if query is not None:  # `X&scope=repo`: the value ends where the next parameter begins
        value = value[: query.start()]
    field = _NEXT_FIELD.search(value)
    if field is not None:  # `X;Encrypt=True`: a connection string's next field begins
        value = value[: field.start()]
    particle = _PARTICLE.search(value)
    if particle is not None:  # `744165이에요`: a Korean or Japanese ending glued to the value
        value = value[: particle.start()]
    while value and value[-1] in _TRAILING + "!?":
        if value[-1] in "!?" and len(value) > 1 and value[-2] not in _TRAILING:
            break
        value = value[:-1]
    return lead, value


def _ends_sentence(token: str) -> bool:
    last = token[-1]
    if last in _SENTENCE_END:
        return True
    if last in "!?":
        return len(token) == 1 or token[-2] in _TRAILING
    if last == "." and token[:-1].isdigit() and len(token) <= 3:
        return False  # an ordinal: "2. Stock", "på 2. sal"
    return last in ".;" and not (len(token) > 1 and token[-2] in "./")


def _quoted(text: str, start: int) -> tuple[int, int] | None:
    """The span inside a quote opening at `start` (to its closing quote, one line)."""
    close = _QUOTES.get(text[start]) if start < len(text) else None
    if close is None:
        return None
    end = start + 1
    while end < len(text) and text[end] != "\n":
        if text[end] == "\\" and close == '"':
            end += 2
            continue
        if text[end] == close:
            inner = text[start + 1 : end]
            if not inner.strip():
                return start + 1, end
            lead = len(inner) - len(inner.lstrip(" \u00a0\u202f"))  # « French spacing »
            trail = len(inner) - len(inner.rstrip(" \u00a0\u202f"))
            return start + 1 + lead, end - trail
        end += 1
    return None


def values_after(text: str, label: Label) -> Iterator[tuple[int, int]]:
    """The spans of the values that `label` gives, read from label.end: the words of
    its line; the lines below when its line ends with a colon (a list of codes, or a
    token on its own line); the next line when its sentence asks for the secret."""
    family, weak = label.family, label.weak
    pos = label.end
    line_end = text.find("\n", pos)
    stop = line_end if line_end >= 0 else len(text)
    rest = text[pos:stop]
    if family == CREDENTIAL:
        start = _PHRASE_START.match(text, pos, stop)
        groups = _four_groups(text, start.end(), stop) if start else None
        if groups is not None:
            yield groups
            return
    if family in (PASSPHRASE, PASSWORD):
        start = _PHRASE_START.match(text, pos, stop)
        least = 3 if family == PASSPHRASE else MIN_PASSWORD_WORDS
        spaced = _spaced_words(text, start.end(), stop, least) if start else None
        if spaced is not None:
            yield spaced
            return
    if family == PIN and rest.rstrip().endswith((":", "：")) and line_end >= 0:
        yield from _listed(text, line_end + 1, family, weak)
        return
    found = list(_words_after(text, pos, stop, label))
    yield from found
    if found or line_end < 0:
        return
    heading = text[text.rfind("\n", 0, pos) + 1 : pos].strip(" \t-*#")
    alone = not rest.strip() and len(heading.split()) <= HEADING_WORDS  # "iPhone passcode"
    if rest.rstrip().endswith((":", "：")) or alone or family == PIN:
        listed = list(_listed(text, line_end + 1, family, weak))
        if listed or family != PIN:
            yield from listed
            return
    line_start = text.rfind("\n", 0, pos) + 1
    asks = (
        "?" in rest
        or "？" in rest
        or _ASKS.search(text, line_start, pos)
        or _REQUESTS.search(text, line_start, pos)
    )
    if asks or rest.rstrip().endswith((" is", " was", " are")):
        yield from _reply(text, line_end + 1, label)
    else:
        yield from _pointed(text, line_end + 1, label)


_POINTER = re.compile(r"[ \t]*(?:->|=>|→|⇒|:|=)[ \t]*(?P<value>\S+)[ \t]*(?:\n|$)")


def _pointed(text: str, pos: int, label: Label) -> Iterator[tuple[int, int]]:
    """A value alone on the next line behind an arrow: "Password for grafana\n -> X"."""
    pointed = _POINTER.match(text, pos)
    if pointed and is_value(pointed["value"], label.family, label.weak):
        yield pointed.span("value")


# A line that asks for the secret its label names: "ssh-add asks for a passphrase".
_ASKS = re.compile(
    r"(?i:\b(?:asks?|asking|asked|prompts?|prompting|prompted|needs?|wants?)[ \t]+(?:me[ \t]+)?"
    r"(?:for[ \t]+)?(?:(?:a|an|the|my|your|its)[ \t]+)?[^\n]{0,24})$"
)
# A line that requests it: "send me the wifi password", "скинь пароль".
_REQUESTS = re.compile(
    r"(?i:\b(?:send|give|share|text|dm|remind|скинь\w*|дай\w*|пришли\w*|напомни\w*|schick\w*|gib|envoie\w*"
    r"|donne\w*|manda\w*|dame|dime|passa\w*|mande\w*|podaj\w*|wyślij\w*|stuur|geef)\b[^\n]{0,40})$"
)
_SPEAKER = re.compile(
    r"[ \t]*(?:[—–-][ \t]+)?(?:\[[^\]\n]{1,20}\][ \t]*)?(?:[\w .@-]{1,24}:[ \t]+)?"
)


REPLY_LINES = 5  # lines after a question that may answer it (another turn may come first)
# A line that gives another field its value (`username = "deploy"`): what follows is
# that field's, not an answer. A field that names a secret is found as such.
_FIELD = re.compile(r"[ \t]*[\"']?[A-Za-z_][\w.-]*[\"']?[ \t]*=(?!=)")


def _reply(text: str, pos: int, label: Label) -> Iterator[tuple[int, int]]:
    """A question naming a secret ("what's the vpn pw again?") answered on one of the
    next lines, after the speaker's name: only a value that proves itself counts (or,
    for a PIN, digits alone on their line)."""
    for _, (line_start, stop) in zip(range(REPLY_LINES), _lines_from(text, pos), strict=False):
        if _FIELD.match(text, line_start, stop):
            continue
        speaker = _SPEAKER.match(text, line_start, stop)
        start = speaker.end() if speaker else line_start
        strict = Label(label.family, label.weak, start, direct=False)
        for span in _words_after(text, start, stop, strict, linked=False):
            yield span
            return
        answer = text[start:stop]
        if "[REDACTED" in answer:  # answered already, redacted: redact stays idempotent
            return
        value = answer.strip()
        if label.family == PIN and _pin(value):
            first = start + answer.index(value)
            yield first, first + len(value)
            return


def _words_after(
    text: str, pos: int, stop: int, label: Label, linked: bool = True
) -> Iterator[tuple[int, int]]:
    seen = 0
    while seen < WINDOW:
        match = _TOKEN.search(text, pos, stop)
        if match is None:
            return
        token, start = match[0], match.start()
        opens = start == 0 or text[start - 1].isspace() or text[start - 1] in "(:=[{,"
        inside = _quoted(text, start) if opens else None
        if inside is not None:
            value = text[inside[0] : inside[1]]
            if is_value(value, label.family, label.weak, quoted=True, linked=linked):
                yield inside
            elif linked and is_placeholder(value):
                return  # `"password": "********"`: the value is masked
            pos, seen, linked = inside[1] + 1, seen + 1, False
            continue
        new_key = _NEW_KEY.match(token)
        if new_key and (not linked or new_key["key"].isalpha() or _identifier(new_key["key"])):
            return  # another field begins: `trace_id=...`
        lead, value = _strip(token)
        digits = label.family == PIN or (label.family == PASSWORD and value.isdigit())
        grouped = _CODE.match(text, start + lead) if digits else None
        if (
            grouped is not None
            and grouped.end() > start + lead + len(value)
            and not text[grouped.end() : grouped.end() + 1].isalnum()  # whole groups only
            and _pin(grouped[0])
        ):
            yield grouped.span()  # "4829 1037": one code in two groups
            pos, seen = grouped.end(), seen + 1
            continue
        bare_token = token.lstrip("=:")
        if (
            len(bare_token) > 1
            and linked
            and is_placeholder(bare_token)
            and token not in _FUNCTION_WORDS
        ):
            return  # the label was given a template or a placeholder, not a secret
        if value and (
            is_value(value, label.family, label.weak, linked=linked)
            or (seen == 0 and label.family == PASSWORD and _short_code(value))
            or (
                seen == 0
                and label.weak
                and _HEXLIKE.fullmatch(value)
                and len(value) >= 2 * RANDOM_LENGTH
            )
        ):
            yield start + lead, start + lead + len(value)
            if label.family == PASSWORD and not _linked_next(text, match.end(), stop):
                return  # the label's value is given; a word after it is another's
        elif len(value) >= MIN_VALUE and (is_placeholder(value) or _is_reference(value)):
            return  # the label was given a reference, not a secret
        if _ends_sentence(token):
            follow = _FOLLOW_UP.match(text, match.end()) if token.endswith(";") else None
            if follow is None:
                return
            pos, seen, linked = follow.end(), seen + 1, True
            continue
        linked = not value or value.lower() in _LINKS or token.endswith((":", "："))
        pos, seen = match.end(), seen + bool(value)  # punctuation alone takes no room


def _linked_next(text: str, pos: int, stop: int) -> bool:
    """Whether the word after a password's value joins another to it ("or", "/", "->"),
    so that word may be a second value ("hunter2 / hunter3")."""
    following = _TOKEN.search(text, pos, stop)
    return following is not None and following[0].lower() in _LINKS | {
        "or",
        "and",
        "oder",
        "ou",
        "o",
        "или",
    }


def _listed(text: str, pos: int, family: str, weak: bool) -> Iterator[tuple[int, int]]:
    """The values on the lines below a label that ends its line: a list of recovery
    codes, or one token on the next line (a blank line between is skipped)."""
    if text.startswith("\n", pos):
        pos += 1
    if family == CREDENTIAL:
        groups = _four_groups(text, pos)
        if groups is not None:
            yield groups  # a TOTP seed in groups of four
            return
    for line in _lines_from(text, pos):
        item = _LIST_ITEM.match(text, line[0], line[1])
        if item is None:
            return
        value = item["item"]
        if family == PIN:
            ok = _pin(value, listed=True)
        elif family in (PASSPHRASE, PASSWORD) and " " in value:
            least = 3 if family == PASSPHRASE else MIN_PASSWORD_WORDS
            phrase = _spaced_words(text, line[0], line[1], least)
            if phrase is not None:
                yield phrase
            return
        else:
            ok = " " not in value and is_value(value, family, weak)
        if not ok:
            return
        yield item.span("item")
        if family != PIN:
            return


def _lines_from(text: str, pos: int) -> Iterator[tuple[int, int]]:
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        yield pos, end
        pos = end + 1


# ---- finding labels ---------------------------------------------------------------------------

# A key and its separator: `DB_PASSWORD=`, `"password": `, `password => `, `$env:TOKEN = `.
# Not after `:` or `/` (`arn:...:secret:prod/db` and `vault/secret/x` are names, not keys),
# nor after `-` or `.`: a key starts once per run of name characters, which keeps the
# scan linear on long `a-a-a-...` runs.
_KEY = re.compile(
    r"(?:\$env:|(?<=[\w]::)|(?<![\w.:/-]))(?P<key>[A-Za-z_][\w.-]*+)"
    r"""(?P<sep>["']?\]?[ \t]*(?::=|=>|[:=])[ \t]*)"""
)
# The value of a key: quoted (escapes kept inside double quotes), or bare to a space.
_BARE = re.compile(r"[^\s\"'`,;<>&]+(?:&(?![A-Za-z_]\w*=)[^\s\"'`,;<>&=]*)*")
_QUERY_VALUE = re.compile(r"[^\s&#\"'<>]+")
_FLAG = re.compile(r"(?<![\w-])--?(?P<key>[A-Za-z][\w-]*+)(?:=|[ \t]+)(?=\S)")
_XML_TAG = re.compile(r"<(?P<key>[A-Za-z_][\w:.-]*)>(?P<value>[^<\n]{1,300})</(?P=key)>")
_XML_ATTR = re.compile(
    r"""(?:key|name)=["'](?P<key>[^"'\n]{1,80})["'][ \t]+value=["'](?P<value>[^"'\n]*)["']"""
    r"""|<property[ \t]+name=["'](?P<pkey>[^"'\n]{1,80})["'][^>\n]*>(?P<pvalue>[^<\n]+)<"""
)
# Commands whose short flags take a password: flag pattern, then the value.
_COMMAND_FLAGS = re.compile(
    r"""\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;]*?[ \t]-p(?P<attached>[^\s-][^\s]*)"""
    r"""|\b(?:sshpass|mongo|mongosh|mongodump)\b[^\n|;]*?[ \t]-p[ \t]+(?P<p>\S+)"""
    r"""|\b(?:docker|podman|helm|buildah|skopeo|nerdctl)[ \t]+(?:registry[ \t]+)?login\b[^\n|;]*?[ \t]-p[ \t]+(?P<login>\S+)"""
    r"""|\bredis-cli\b[^\n|;]*?[ \t]-a[ \t]+(?P<redis>\S+)"""
    r"""|\bldap\w+\b[^\n|;]*?[ \t]-w[ \t]+(?P<ldap>\S+)"""
    r"""|-pass(?:in|out)?[ \t]+pass:(?P<openssl>\S+)"""
    r"""|\bhtpasswd\b(?:[ \t]+-\w+)*?[ \t]+-\w*b\w*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+(?P<htpasswd>\S+)"""
    r"""|\bsmbclient\b[^\n|;]*?-U[ \t]+\S+?%(?P<smb>\S+)"""
    r"""|\b(?:sqlcmd|bcp|osql|isql|ipmitool)\b[^\n|;]*?[ \t]-P[ \t]*(?P<sqlcmd>[^\s-]\S*)"""
    r"""|\becho[ \t]+(?P<sudo>'[^'\n]+'|"[^"\n]+"|\S+)[ \t]*\|[ \t]*sudo[ \t]+-S\b"""
    r"""|\b(?:7z|7za|7zz|7zr)\b[^\n|;]*?[ \t]-p(?P<sevenzip>[^\s-]\S*)"""
    r"""|\b(?:zip|unzip)\b[^\n|;]*?[ \t]-P[ \t]+(?P<zip>\S+)"""
    r"""|\bnet[ \t]+use\b[^\n|;]*?/user:\S+[ \t]+(?P<netuse>[^\s/]\S*)"""
    r"""|(?<![\w/])/(?:p|pass|password|pwd):(?P<winflag>\S+)"""
    r"""|(?<![\w-])(?:-u|--user)[ \t]+["']?[\w.@+-]+:(?P<curl>[^\s"']+)"""
)
# What every _COMMAND_FLAGS pattern holds: scanned first, as it is rarely there.
_COMMANDS = re.compile(
    r"mysql|mariadb|sshpass|mongo|login|redis-cli|ldap|pass:|htpasswd|smbclient|-u[ \t]|--user"
    r"|sqlcmd|bcp|osql|isql|ipmitool|sudo[ \t]+-S|7z|zip|net[ \t]+use|/p:|/pass|/pwd"
)
_TABLE_ROW = re.compile(r"^[ \t]*\|(.+)\|[ \t]*$", re.MULTILINE)


def _prose(text: str) -> Iterator[Span]:
    families = []
    for found in labels(text):
        families.append(found.family)
        label = Label(found.family, found.weak, found.end, direct=False)
        if found.weak and _WIFI.search(text, text.rfind("\n", 0, found.start) + 1, found.start):
            label = Label(PASSPHRASE, False, found.end, direct=False)
        for start, end in values_after(text, label):
            yield start, end, found.family
        before = _NAMED_AFTER.search(text, max(0, found.start - 80), found.start)
        if before is not None:
            group = next(g for g in ("quoted", "bare") if before[g] is not None)
            value = before[group]
            if "=" not in value and is_value(value, found.family, found.weak, group == "quoted"):
                yield before.start(group), before.end(group), found.family
    if families:  # "the secondary one is X", "the old one (X)": another of the same
        for match in _ANOTHER_ONE.finditer(text):
            value = match["value"]
            _, value = _strip(value)
            if is_value(value, families[0]) or (families[0] == PIN and _pin(value)):
                start = match.start("value") + match["value"].index(value)
                yield start, start + len(value), families[0]


# _prose reads values after a prose label, which it finds by `labels`.
_PROSE_NEED = Need(LABEL)


def _logins(text: str) -> Iterator[Span]:
    for match in _LOG_IN_AS.finditer(text):
        _, value = _strip(match["value"])
        if is_value(value, PASSWORD):
            start = match.start("value") + match["value"].index(value)
            yield start, start + len(value), PASSWORD
    for match in _USED_TO_LOG_IN.finditer(text):
        if is_value(match["value"], PASSWORD):
            yield match.start("value"), match.end("value"), PASSWORD


# _LOG_IN_AS's "(log in|sign in|login|connect) as", _USED_TO_LOG_IN's "to (log in|...)".
_LOGINS_NEED = Need(
    (
        AtWord(rf"(?:(?:{led('log', 'sign')})\s*(?i:in)|{led('connect')})\s+(?i:as)\s"),
        AtWord(rf"(?:{led('to')})\s+(?i:log|sign|unlock|connect|authenticate)"),
    )
)


# A value said to replace another: "X is the new one for the NAS".
_THE_NEW_ONE = re.compile(
    r"(?<!\S)(?P<value>[^\s`'\"]{6,64})[ \t]+is[ \t]+the[ \t]+(?:new|current|right|correct|actual)[ \t]+one\b",
    re.IGNORECASE,
)
# A password offered to try: "try X", "tenta X", "versuch mal X".
_TRY = re.compile(
    r"(?i:\b(?:try|tenta|tente|versuch\w*(?:[ \t]+(?:es[ \t]+)?mal)?|prueba|probá|essaie|essayez|prova|probeer|spróbuj"
    r"|попробуй\w*|dene)[ \t]+(?:with[ \t]+|com[ \t]+|mit[ \t]+|con[ \t]+|avec[ \t]+)?)[`'\"]?(?P<value>[^\s`'\"(){}<>/=]{6,64})"
)
_ALL_FOUR = 4  # classes of characters in a value offered with no label at all


_TRY_VERBS = "try tenta tente versuch prueba probá essaie essayez prova probeer spróbuj попробуй dene".split()
# _THE_NEW_ONE's "the new one"; _TRY's verb, then a value with a digit (of four classes).
_UNLABELLED_NEED = Need(
    (
        AtWord(rf"(?:{led('the')})[ \t]+(?i:new|current|right|correct|actual)[ \t]+(?i:one)"),
        AtWord(rf"(?:{led(*_TRY_VERBS)})[^\n]*\d"),
    )
)


def _unlabelled(text: str) -> Iterator[Span]:
    for match in _THE_NEW_ONE.finditer(text):
        _, value = _strip(match["value"])
        if is_value(value, PASSWORD, linked=False):
            yield match.start("value"), match.start("value") + len(value), PASSWORD
    for match in _TRY.finditer(text):
        _, value = _strip(match["value"])
        if _classes(value) >= _ALL_FOUR and is_value(value, PASSWORD, linked=False):
            yield match.start("value"), match.start("value") + len(value), PASSWORD


# "log in as X with Y": a password given with the account it opens.
_LOG_IN_AS = re.compile(
    r"\b(?:log\s*in|sign\s*in|login|connect)\s+as\s+[`'\"]?[\w.@+-]+[`'\"]?\s+(?:with|using|/)\s+"
    r"(?:(?:the\s+)?password\s+)?[`'\"]?(?P<value>[^\s`'\"]{4,80})",
    re.IGNORECASE,
)
# A weak `key` where a Wi-Fi network is named: the network's passphrase.
_WIFI = re.compile(r"(?i:\b(?:wi-?fi|wlan|ssid|wpa2?)\b)")
# "use X to log in": a value named by what it does.
_USED_TO_LOG_IN = re.compile(
    r"\buse\s+(?P<value>\S{5,64})\s+to\s+(?:log\s*in|sign\s*in|login|unlock|connect|authenticate)\b",
    re.IGNORECASE,
)
_ANOTHER_ONE = re.compile(
    r"\b(?:other|second|secondary|old|new|backup|previous|spare|current)\s+one\s+"
    r"(?:is\s+|was\s+|\()(?P<value>[^\s()]+)",
    re.IGNORECASE,
)


# A value named after it is given: "'X' (passphrase)", "use X as the password",
# "X is the wifi password".
_NAMED_AFTER = re.compile(
    r"""(?:["'`«](?P<quoted>[^"'`»\n]{4,80})["'`»]|(?<!\S)(?P<bare>\S{4,80}))"""
    r"""[ \t]+(?:\(|(?:<-+|←)[ \t]+[^\n]{0,60}?|(?:is|was)[ \t]+(?:the|my|our|your|their)[ \t]+(?:[\w-]+[ \t]+)?"""
    r"""|as[ \t]+(?:(?:the|my|our|your|a)[ \t]+)?(?:new[ \t]+)?)$"""
)
# A pair given as `user / password` or as `root:password`: the password must prove itself
# after a user name, and may be weaker after a well-known account name.
_PAIR = re.compile(
    r"(?<![\w./:@-])(?P<user>[A-Za-z][\w.@-]{1,40})(?:[ \t]+/[ \t]+|(?<=[a-z]):)(?=\S)"
)
_ACCOUNTS = frozenset(
    "root admin administrator postgres sa pi ubuntu guest oracle elastic sysadmin superuser".split()
)


# _PAIR's ` / `, or an account's name and its colon (another user's colon is skipped).
_PAIRS_NEED = Need((r" /[ \t]|\t/[ \t]", AtWord(f"(?:{led(*_ACCOUNTS)}):")))


def _pairs(text: str) -> Iterator[Span]:
    for match in _PAIR.finditer(text):
        account = match["user"].lower() in _ACCOUNTS
        if not account and match[0].endswith(":"):
            continue
        span = _direct_value(text, match.end())
        if span is None:
            continue
        value = text[span[0] : span[1]]
        if is_value(value, PASSWORD, linked=account) and not names_secret(value):
            yield span[0], span[1], PASSWORD


# A password typed at a prompt: "it'll prompt, type X", "at the login prompt enter X".
_TYPED = re.compile(r"\b(?i:type|enter|paste|input)[ \t]+(?P<value>[^\s`'\"]{8,64})(?=[\s.,;]|$)")
_LOGIN = re.compile(r"(?i:\b(?:prompt|prompts|ssh|sudo|login|log in|sign in|unlock|su)\b)")
_ALL_CLASSES = 4


# _TYPED's verb then a value with a digit (of four classes), and _LOGIN's word.
_TYPED_NEED = Need(
    AtWord(rf"(?:{led('type', 'enter', 'paste', 'input')})[ \t]+[^\s`'\"]*\d"), _LOGIN.pattern
)


def _typed(text: str) -> Iterator[Span]:
    for match in _TYPED.finditer(text):
        value = match["value"]
        start = text.rfind("\n", 0, match.start()) + 1
        if (
            _classes(value) == _ALL_CLASSES
            and is_value(value, PASSWORD, linked=False)
            and _LOGIN.search(text, start, match.start())
        ):
            yield match.start("value"), match.end("value"), PASSWORD


# A config directive, key and value spaced apart on their own line (`requirepass X`,
# `masterauth X`), and a quoted key then its quoted value (`define('DB_PASSWORD', 'X')`,
# `os.environ.setdefault("API_TOKEN", "X")`).
_DIRECTIVE = re.compile(r"^[ \t]*(?P<key>[a-z_][\w.-]*+)[ \t]+(?=[^\s=:])", re.MULTILINE)
# A typed declaration: `const ADMIN_PASSWORD: &str = "X"`, `val apiKey: String = "X"`.
_TYPED_KEY = re.compile(
    r"(?<![\w.])(?P<key>[A-Za-z_]\w*+)[ \t]*:[ \t]*&?(?:'static[ \t]+)?[A-Za-z_][\w.]*(?:<[^>\n]{0,40}>)?\??[ \t]*=[ \t]*"
)
_QUOTED_PAIR = re.compile(r"""(?P<q>["'])(?P<key>[A-Za-z_][\w.-]*+)(?P=q)[ \t]*,[ \t]*(?=["'])""")
# A snake_case or kebab-case key then its value after a space: `set -gx JIRA_API_TOKEN X`,
# "key_secret X".
_SPACED_KEY = re.compile(
    r"(?<![\w.$-])(?P<key>[A-Za-z][A-Za-z0-9]*+(?:[_-][A-Za-z0-9]+)+)[ \t]+(?=[^\s=:])"
)


# A key that names a secret (or `pass`, `key`), and what follows it in one of the keyed
# patterns: _KEY's, _TYPED_KEY's, _NAME_VALUE's and _SYSTEM_PROPERTY's `:` or `=`,
# _QUOTED_PAIR's comma, _SPACED_KEY's joined words then a blank, or _DIRECTIVE's key
# (one that names a secret) starting a line, then a blank.
_KEY_STARTS_LINE = rf"[ \t]*(?=[a-z_])[\w.-]*?(?:{KEY_NAME})[\w.-]*[ \t]"
_ASSIGNMENTS_NEED = Need(
    r""":|=|"[ \t]*,|'[ \t]*,|_[A-Za-z0-9]+[ \t]|-[A-Za-z0-9]+[ \t]"""
    rf"|\A{_KEY_STARTS_LINE}|\n{_KEY_STARTS_LINE}",
    KEY_NAME,
)


def _assignments(text: str) -> Iterator[Span]:
    keyed = (_KEY, _DIRECTIVE, _QUOTED_PAIR, _SPACED_KEY, _TYPED_KEY, _NAME_VALUE, _SYSTEM_PROPERTY)
    for match in (m for pattern in keyed for m in pattern.finditer(text)):
        key = match["key"]
        assigned = "sep" in match.re.groupindex and "=" in match["sep"]
        if names_secret(key) or (assigned and key.lower() == "pass"):  # `PASS = "X"`, not `PASS:`
            family, weak = key_family(key), weak_key(key)
        elif key.lower() == "key" and _BESIDE_A_USER.search(
            text, max(0, match.start() - _BESIDE), match.end() + _BESIDE
        ):
            family, weak = CREDENTIAL, False  # `{"username": "u", "key": "X"}`: the user's key
        else:
            continue
        in_query = match.start() > 0 and text[match.start() - 1] in "?&"
        span = _direct_value(text, match.end(), in_query)
        if span is not None and _direct_ok(text, span, family, weak) and not _is_key(text, span):
            yield span[0], span[1], family


# A user named beside a bare `key`: the two make a login.
_BESIDE_A_USER = re.compile(
    r"""(?im:["'](?:username|user|login|account|client_id)["'][ \t]*[:=]|^[ \t]*(?:username|user|login)[ \t]*[:=])"""
)
_BESIDE = 160  # characters either side of the key searched for the user


def _is_key(text: str, span: tuple[int, int]) -> bool:
    """Whether the quoted string at span is itself a key (`"key": "token", "value": ""`)."""
    after = _KEY_AFTER.match(text, span[1])
    return after is not None


_KEY_AFTER = re.compile(r"""["'][ \t]*:(?!:)""")


def _direct_value(text: str, pos: int, in_query: bool = False) -> tuple[int, int] | None:
    """A key's value at `pos`: inside quotes, or a bare run (sentence punctuation off;
    in a URL's query, to the next `&`)."""
    if pos >= len(text):
        return None
    inside = _quoted(text, pos)
    if inside is not None:
        return inside
    groups = _four_groups(text, pos)
    if groups is not None:
        return groups  # `password=qvzn ktcp wrsj hmle`: an app password
    bare = (_QUERY_VALUE if in_query else _BARE).match(text, pos)
    if bare is None:
        return None
    lead, value = _strip(bare[0])
    return (pos + lead, pos + lead + len(value)) if value else None


def _direct_ok(text: str, span: tuple[int, int], family: str, weak: bool) -> bool:
    value = text[span[0] : span[1]]
    if weak and _encoded_login(value):
        return True
    quoted = span[0] > 0 and text[span[0] - 1] in _QUOTES
    if quoted and family == CREDENTIAL and not weak:
        # `"password": "sunshine"` counts; `EXPIRED_TOKEN = "expired_token"` does not.
        return is_value(value, PASSWORD, quoted=True) and not names_secret(value)
    return is_value(value, family, weak, quoted) and not names_secret(value)


def _encoded_data(value: str) -> bool:
    """base64 of a JSON record or of words (`eyJzdGF0dXMiOiJzaGlwcGVkIn0=`,
    `b3JkZXItNDgyMTM=`), not of `user:password` or of random bytes."""
    decoded = decoded_text(value) if len(value) >= RANDOM_LENGTH else None
    if decoded is None or not all(" " <= c <= "~" for c in decoded):
        return False
    if decoded.lstrip().startswith(("{", "[")):
        return True
    return ":" not in decoded and wordiness(decoded) >= WORDY_FRACTION


def _encoded_login(value: str) -> bool:
    """base64 of `user:password`, as a docker config's `"auth"` holds."""
    decoded = decoded_text(value) if len(value) >= RANDOM_LENGTH else None
    if decoded is None or ":" not in decoded:
        return False
    user, password = decoded.split(":", 1)
    return re.fullmatch(r"[\w.@-]+", user) is not None and is_value(password, PASSWORD)


def _flags(text: str) -> Iterator[Span]:
    for match in _FLAG.finditer(text):
        if names_secret(match["key"]) and not match["key"].endswith(("-file", "-stdin", "-env")):
            span = _direct_value(text, match.end())
            family = key_family(match["key"])
            if span is not None and _direct_ok(text, span, family, weak_key(match["key"])):
                yield span[0], span[1], family


# _FLAG's dash (or two) at the start of a word, and a key that names a secret.
_FLAGS_NEED = Need(r"-(?<![\w-]-)-?[A-Za-z]", KEY_NAME)


def _command_flags(text: str) -> Iterator[Span]:
    for match in _COMMAND_FLAGS.finditer(text):
        group = match.lastgroup or ""
        inside = _quoted(text, match.start(group))
        start, end = inside if inside is not None else match.span(group)
        value = text[start:end]
        if not is_placeholder(value) and not value.startswith(("$", "`")):
            yield start, end, PASSWORD


# What _COMMAND_FLAGS needs.
_COMMAND_FLAGS_NEED = Need(_COMMANDS.pattern)


def _markup(text: str) -> Iterator[Span]:
    for match in _XML_TAG.finditer(text):
        if names_secret(match["key"]) and _direct_ok(text, match.span("value"), PASSWORD, False):
            yield match.start("value"), match.end("value"), key_family(match["key"])
    for match in _XML_ATTR.finditer(text):
        key, value = ("key", "value") if match["key"] is not None else ("pkey", "pvalue")
        if names_secret(match[key]) and _direct_ok(text, match.span(value), PASSWORD, False):
            yield match.start(value), match.end(value), key_family(match[key])


# _XML_TAG's closing tag, _XML_ATTR's `value=` or `<property`; a key that names a secret.
_MARKUP_NEED = Need(r"</|value=|<property", KEY_NAME)


def _tables(text: str) -> Iterator[Span]:
    """Markdown tables: the cells under a header that names a secret."""
    rows = list(_TABLE_ROW.finditer(text))
    columns: dict[int, str] = {}
    for row in rows:
        cells = row[1].split("|")
        if all(set(c.strip()) <= set("-: ") for c in cells):
            continue
        names = {i: _header_family(c) for i, c in enumerate(cells)}
        if not columns and any(names.values()):
            columns = {i: f for i, f in names.items() if f}
            continue
        offset = row.start(1)
        for i, cell in enumerate(cells):
            family = columns.get(i)
            value = cell.strip()
            if family and value and is_value(value, family, quoted=True):
                start = offset + cell.index(value)
                yield start, start + len(value), family
            offset += len(cell) + 1


# A _TABLE_ROW, and a header cell that is a label.
_TABLES_NEED = Need(r"\|.*\|", LABEL)


def _header_family(cell: str) -> str | None:
    return label_family(cell)


# Calls whose arguments are, by position, a password: `DriverManager.getConnection(url,
# "user", "X")`, `new mysqli("host", "user", "X", "db")`, `smtp.PlainAuth("", user, "X",
# host)`, `server.login("user", "X")`, `HTTPBasicAuth("user", "X")`, `pyotp.TOTP("X")`.
_ARG = r"""(?:"[^"\n]*"|'[^'\n]*'|[\w.$>:-]+(?:\([^()\n]*\))?)\s*,\s*"""
_PASSWORD_ARG = r"""(?P<q>["'])(?P<value>[^"'\n]{4,128})(?P=q)"""
_CREDENTIAL_CALLS = (
    re.compile(  # the third argument
        r"(?:\bgetConnection|\bnew[ \t]+mysqli|\bmysqli_connect|\bmysql_connect|\bnew[ \t]+PDO|\bPlainAuth"
        r"|\b(?:MySQLdb|pymysql|mysql\.connector|psycopg2|pg8000)\.connect)\(\s*"
        rf"{_ARG}{_ARG}{_PASSWORD_ARG}"
    ),
    re.compile(  # the second
        r"(?:\.login|\bHTTPBasicAuth|\bHTTPDigestAuth|\bNetworkCredential|\bUsernamePasswordCredentials"
        r"|\bPasswordAuthentication|\bSetBasicAuth|\bbasic_auth|\bBasicAuth|\bUsernamePasswordAuthenticationToken"
        rf"|\bauth[ \t]*=[ \t]*|\balgoliasearch)\(\s*{_ARG}{_PASSWORD_ARG}\s*[,)]"
    ),
)
# An API client built with its key alone: `new PostmarkClient("<uuid>")`, `StripeApi("<key>")`.
_CLIENT_KEY = re.compile(
    r"""\b(?:new[ \t]+)?[A-Z]\w*(?:Client|Api|API|Sdk|SDK)\(\s*["'](?P<value>[A-Za-z0-9_-]{24,})["']\s*[,)]"""
)
_OTP_SEED = re.compile(r"""\b(?:pyotp\.)?[TH]OTP\([ \t]*["'](?P<value>[A-Z2-7]{16,})=*["']""")


def _sql_passwords(text: str) -> Iterator[Span]:
    for match in _SQL_PASSWORD.finditer(text):
        value = match["value"]
        if not is_placeholder(value) and is_value(value, PASSWORD, quoted=True):
            yield match.start("value"), match.end("value"), PASSWORD


# _SQL_PASSWORD's `by` or `password`, a blank and a quote.
_SQL_PASSWORDS_NEED = Need(AtWord(rf"""(?:{led("by", "password")})[ \t]+['"]"""))
# The `(` of a call _CREDENTIAL_CALLS, _CLIENT_KEY or _OTP_SEED reads, and its name.
_CALLS_NEED = Need(
    r"\(",
    r"(?:getConnection|mysqli|PDO|connect|Auth|auth|Credentials?|Authentication|Token|login"
    r"|algoliasearch|Client|Api|API|Sdk|SDK|OTP)\(|auth[ \t]*=[ \t]*\(",
)


def _calls(text: str) -> Iterator[Span]:
    for match in (m for pattern in _CREDENTIAL_CALLS for m in pattern.finditer(text)):
        value = match["value"]
        app_password = _GROUPS_OF_FOUR.fullmatch(value) is not None
        if app_password or (is_value(value, PASSWORD, quoted=True) and not names_secret(value)):
            yield match.start("value"), match.end("value"), PASSWORD
    for match in _CLIENT_KEY.finditer(text):
        value = match["value"]
        if is_value(value, CREDENTIAL) and not names_secret(value):
            yield match.start("value"), match.end("value"), CREDENTIAL
    for match in _OTP_SEED.finditer(text):
        yield match.start("value"), match.end("value"), CREDENTIAL


# Recovery codes: a label, then a block of codes of one shape, several to a line or
# numbered (`1. 5251 0462   2. 7899 7789`, `k2m8-x7qp  t9vd-4hne`).
_CODES_LABEL = re.compile(
    r"(?i:(?:backup|recovery|secours|wiederherstellungs|reserve|respaldo|recuperação|recupero|zapasow\w*"
    r"|резервн\w*|恢复|復旧|복구)[\s_-]*(?:codes?|kody|коды|códigos|codici|コード|代码|코드)"
    r"|(?:codes?|códigos|codici|kody|коды)[ \t]+(?:de[ \t]+|di[ \t]+)?(?:secours|recuperação|recuperación|recupero"
    r"|respaldo|backup|sauvegarde|zapasowe|восстановления|reserva))"
)
_RECOVERY_CODE = re.compile(r"(?<![\w-])[A-Za-z0-9]{3,6}(?:[- ][A-Za-z0-9]{3,6})?(?![\w-])")
CODE_BLOCK_LINES = 12  # lines after the label the codes may fill
MIN_CODES = 3  # codes of one shape that make a block of them


# A line below _CODES_LABEL, and its word for codes before that line.
_CODE_BLOCKS_NEED = Need(r"\n", r"(?i:code|códigos|codici|kody|коды|コード|代码|코드)(?=.*\n)")


def _code_blocks(text: str) -> Iterator[Span]:
    for label in _CODES_LABEL.finditer(text):
        line_end = text.find("\n", label.end())
        if line_end < 0:
            return
        block_end = line_end
        for _, (_, stop) in zip(
            range(CODE_BLOCK_LINES), _lines_from(text, line_end + 1), strict=False
        ):
            block_end = stop
        codes = [
            m
            for m in _RECOVERY_CODE.finditer(text, line_end, block_end)
            if any(c.isdigit() for c in m[0])
        ]
        shapes: dict[str, list[re.Match[str]]] = {}
        for code in codes:
            shape = re.sub(r"[A-Za-z0-9]", "x", code[0])
            shapes.setdefault(shape, []).append(code)
        for same in shapes.values():
            if len(same) >= MIN_CODES and len(same[0][0]) >= 8:
                for code in same:
                    yield code.start(), code.end(), PIN


# SQL that sets a password: `IDENTIFIED BY 'X'`, `ALTER ROLE app PASSWORD 'X'`.
_SQL_PASSWORD = re.compile(
    r"""(?i:\bidentified[ \t]+by(?:[ \t]+password)?|\b(?:with[ \t]+)?(?:encrypted[ \t]+)?password)[ \t]+"""
    r"""(?P<q>['"])(?P<value>[^'"\n]{4,128})(?P=q)"""
)
# A Kubernetes env entry: `- name: DB_PASSWORD` with `value: X` on the next line.
_NAME_VALUE = re.compile(
    r"""\bname:[ \t]*["']?(?P<key>[A-Za-z_][\w.-]*)["']?[ \t]*\n[ \t]*value:[ \t]*"""
)
# A JVM system property: `-Dsonar.token=X`.
_SYSTEM_PROPERTY = re.compile(r"(?<![\w-])-D(?P<key>[A-Za-z][\w.-]*)=")


# A command that prints a secret, its output on the next line: `kubectl get secret ...
# {.data.admin-password} | base64 -d`, `vault kv get -field=password`, `op read`.
_PRINTS_SECRET = re.compile(
    r"(?im:^[ \t]*[$#>%][ \t]+(?=[^\n]*(?:password|passwd|secret|token|api[_-]?key))"
    r"[^\n]*(?:base64[ \t]+(?:-d|--decode)|\bget[ \t]+secret|kv[ \t]+get|get-secret-value|pass[ \t]+show"
    r"|\bop[ \t]+read|find-generic-password[^\n]*-w|secret[ \t]+show|-field=)[^\n]*\n)"
    r"[ \t]*(?P<value>[^\s$#>%][^\s]{3,127})[ \t]*(?:\n|$)"
)


# _PRINTS_SECRET's prompt at the start of a line that names a secret, then a line.
_PRINTED_NEED = Need(
    r"\n",
    r"(?im:^[ \t]*[$#>%][ \t]+(?=[^\n]*(?:password|passwd|secret|token|api[_-]?key))[^\n]*\n)",
)


def _printed(text: str) -> Iterator[Span]:
    for match in _PRINTS_SECRET.finditer(text):
        if is_value(match["value"], PASSWORD):
            yield match.start("value"), match.end("value"), PASSWORD


DETECTORS = (
    Detector(_markup, _MARKUP_NEED),
    Detector(_assignments, _ASSIGNMENTS_NEED),
    Detector(_flags, _FLAGS_NEED),
    Detector(_command_flags, _COMMAND_FLAGS_NEED),
    Detector(_tables, _TABLES_NEED),
    Detector(_prose, _PROSE_NEED),
    Detector(_logins, _LOGINS_NEED),
    Detector(_pairs, _PAIRS_NEED),
    Detector(_typed, _TYPED_NEED),
    Detector(_sql_passwords, _SQL_PASSWORDS_NEED),
    Detector(_calls, _CALLS_NEED),
    Detector(_code_blocks, _CODE_BLOCKS_NEED),
    Detector(_printed, _PRINTED_NEED),
    Detector(_unlabelled, _UNLABELLED_NEED),
)
NEEDS = tuple(detector.need for detector in DETECTORS)


def value_spans(text: str) -> Iterator[Span]:
    """Every labelled secret value in the text, by the detectors whose needs it meets."""
    return run(DETECTORS, text)
