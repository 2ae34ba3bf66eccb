"""A deterministic entity extractor: no model, the same answer on every machine.

It finds, in this order of precedence (a span claimed by an earlier rule is not
read again by a later one):

    urls, e-mails        claimed and skipped: they are not entities
    `backticked`         code, or path when it looks like one
    paths                a/b.py, ./x, ~/y, /etc/hosts, src/memlane/, README.md
    dotted identifiers   pkg.module.func
    @handles             @ada
    words                CamelCase and snake_case (code); runs of capitalised
                         words ("Ada Lovelace") minus a stoplist (person_or_name)
    entity:NAME tags     from a record's tags (tag)

Every mention carries an alias: the form entities are keyed and matched by, in
which case, accents, punctuation and separators are gone, so `MemoryStore`,
`memory_store`, `memory-store` and "Memory Store" are one entity.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator

import msgspec

from memlane.model import EntityKind, Mention, Record

# Bump when extraction changes: stores re-read their memories' mentions on open.
EXTRACTOR_VERSION = "1"

ENTITY_TAG_PREFIX = "entity:"
# Bounds the entity rows one memory can write: the entity lane needs a text's few
# distinctive names, not every capitalised word of a pasted log.
MAX_MENTIONS = 50
# A one-character alias ("A", "x") names nothing one could look up.
MIN_ALIAS_CHARS = 2
# Backticked spans longer than this are code excerpts, not identifiers.
MAX_BACKTICK_CHARS = 100

# File extensions that make a bare dotted word a file name. Left out on purpose:
# extensions that are also common attribute names (`self.db`, `obj.log`, `x.env`).
_EXTENSIONS = (
    "py|pyi|ipynb|md|rst|txt|toml|json|jsonl|yaml|yml|ini|cfg|lock|sql|sqlite|csv|tsv|"
    "html|css|js|mjs|ts|tsx|jsx|rs|go|rb|java|kt|cpp|hpp|swift|sh|ps1|xml"
)
_SEG = r"[\w.+-]+"
_NOT_AFTER_TOKEN = r"(?<![\w/~.+@-])"
# Each pattern starts only where a token starts (a lookbehind), so a long run of
# "a.a.a..." is read once, not once per character.
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s<>\"'`)\]]+")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_BACKTICK = re.compile(rf"`([^`\s]{{1,{MAX_BACKTICK_CHARS}}})`")
_PATH = re.compile(rf"{_NOT_AFTER_TOKEN}(?:(?:~|\.\.?)?/{_SEG}(?:/{_SEG})*/?|{_SEG}(?:/{_SEG})+/?)")
_FILE = re.compile(rf"{_NOT_AFTER_TOKEN}[\w+-][\w.+-]*\.(?:{_EXTENSIONS})(?![\w/]|\.\w)")
_EXTENSION = re.compile(rf"\.(?:{_EXTENSIONS})$")
_DOTTED = re.compile(r"(?<![\w.@/])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_HANDLE = re.compile(r"(?<![\w@.])@[A-Za-z0-9_][\w-]*")
_WORD = re.compile(r"\w+(?:['’]\w+)*")
_IDENTIFIER = re.compile(r"^\w+$")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_NUMERIC = re.compile(r"^[\d.+-]*$")
_NOT_ALNUM = re.compile(r"[\W_]+")
_LEAD_INS = " \t\"'“‘([{*-•>#"
_SENTENCE_ENDS = ".!?:\n\r"
_LOOK_BACK = 40  # characters read back from a name to find where its sentence starts
# A word of _WORD whose first part has an upper-case ASCII letter, a non-ASCII letter
# or an underscore (what _words reads), starting where _WORD would start one.
_CANDIDATE = re.compile(r"(?<!\w)(?<!\w['’])(?=\w*(?:[^\W\d_a-z]|_))\w+(?:['’]\w+)*")

# Capitalised words that are not names: sentence starters (articles, pronouns,
# conjunctions, auxiliaries, question words, common imperatives of notes),
# greetings, months and weekdays, and all-caps noise. Matched on the alias, so
# "The", "THE" and "Don't" are caught alike.
STOPWORDS = frozenset(
    """
    a an the this that these those some any each every all both either neither no none
    another such what which whose who whom why how when where whatever whenever
    i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs myself ourselves yourself yourselves himself herself itself themselves
    one ones someone something anyone anything everyone everything nobody nothing
    about above after against along among around at before behind below beside between
    beyond by despite down during except for from in inside into like near of off on onto
    out outside over past since through throughout to toward towards under until up upon
    via with within without per
    and but or nor so yet because although though while whereas if unless whether then
    than also however therefore thus hence otherwise meanwhile moreover furthermore
    instead anyway besides
    am is are was were be been being have has had having do does did done doing will
    would shall should can could may might must let lets
    dont doesnt didnt isnt arent wasnt werent cant cannot couldnt wont wouldnt shouldnt
    im ive id ill youre youve youll hes shes weve were theyre theyve thats theres whats
    not never always often sometimes usually just only very really now today tonight
    tomorrow yesterday here there again still even already maybe perhaps please yes ok
    okay first next last finally actually basically
    use run add fix make set check note remember see try keep avoid prefer ensure install
    update remove delete create call read write test build start stop open close get put
    edit go move rename merge push pull commit deploy change replace switch restart ask
    tell look find wait
    hi hello hey dear thanks thank sure well oh wow great good nice cool yeah yep nope
    mr mrs ms dr
    january february march april june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec
    monday tuesday wednesday thursday friday saturday sunday
    todo fixme xxx nb ps fyi asap wip tldr eg ie etc vs
    """.split()
)


@functools.lru_cache(maxsize=8192)  # the same names and sentence starters recur
def normalize_alias(text: str) -> str:
    """The key of an entity: accents dropped, casefolded, only letters and digits kept."""
    decomposed = text if text.isascii() else unicodedata.normalize("NFKD", text)
    return _NOT_ALNUM.sub("", decomposed.casefold())


def extract(text: str, tags: Iterable[str] = ()) -> tuple[Mention, ...]:
    """The entities named in `text` and in `entity:NAME` tags, one per alias.

    Order: tags first (an explicit declaration wins the kind), then the text in
    reading order; a repeated alias keeps its first mention; at most MAX_MENTIONS.
    """
    found = [*tag_mentions(tags), *_text_mentions(text)]
    seen: dict[str, Mention] = {}
    for mention in found:
        if len(seen) >= MAX_MENTIONS:
            break
        seen.setdefault(mention.alias, mention)
    return tuple(seen.values())


def mentions_of(record: Record) -> tuple[Mention, ...]:
    """The entities a memory names in its title, body and tags.

    A title derived from the body (its opening, perhaps cut short with "…") is not
    read again: a cut could split a name ("…the Stripe…" of "the Stripe CLI").
    """
    title = record.title.removesuffix("…")
    text = record.body if record.body.startswith(title) else f"{record.title}\n{record.body}"
    return extract(text, record.tags)


def tag_mentions(tags: Iterable[str]) -> list[Mention]:
    mentions = []
    for tag in tags:
        if tag[: len(ENTITY_TAG_PREFIX)].casefold() != ENTITY_TAG_PREFIX:
            continue
        name = tag[len(ENTITY_TAG_PREFIX) :].strip()
        # Trigger: an explicit entity tag. Why: its author asked for it by name.
        # Outcome: kept even when its alias is a single character.
        alias = normalize_alias(name)
        if alias:
            mentions.append(Mention(name, EntityKind.TAG, alias))
    return mentions


class QueryAliases(msgspec.Struct, frozen=True):
    """What a query may name, for the recall entity lane.

    `names`: the query's own entities, then each pair of adjacent plain words joined
    ("memory store" finds `MemoryStore`, "ada lovelace" Ada Lovelace). `words`: its
    single plain words, which match only entities that are not capitalised words: a
    lone capitalised word in a memory is as often a sentence's first word as a name
    (on LoCoMo, `memlane eval locomo`, letting words match those costs several points of MRR).
    """

    names: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.names, *self.words)))


def query_aliases(text: str) -> QueryAliases:
    """The aliases a query may name, in first-seen order (see QueryAliases)."""
    names = [m.alias for m in extract(text)]
    words = [normalize_alias(w) for w in _WORD.findall(text)]
    kept = [w if _plain_word(w) else None for w in words]
    names += [a + b for a, b in itertools.pairwise(kept) if a and b]
    unique = tuple(dict.fromkeys(names))
    return QueryAliases(unique, tuple(w for w in dict.fromkeys(kept) if w and w not in unique))


def _plain_word(alias: str) -> bool:
    return len(alias) >= MIN_ALIAS_CHARS and not alias.isdigit() and alias not in STOPWORDS


# ---- reading a text ---------------------------------------------------------------


class _Claims:
    """Which characters of the text an earlier rule has already read."""

    def __init__(self, size: int) -> None:
        self._mask = bytearray(size)

    def free(self, start: int, end: int) -> bool:
        return self._mask.find(1, start, end) == -1

    def take(self, start: int, end: int) -> None:
        self._mask[start:end] = b"\x01" * (end - start)


_Found = tuple[int, Mention]  # (offset in the text, mention)
_Rule = Callable[[str, "_Claims"], list[_Found]]


def _text_mentions(text: str) -> list[Mention]:
    claims = _Claims(len(text))
    found: list[_Found] = []
    for rule, needs in _RULES:
        # A rule whose pattern needs a character the text lacks cannot match: skipped.
        if needs is None or needs in text:
            found.extend(rule(text, claims))
    found.sort(key=lambda item: item[0])  # stable: a path's file name follows the path
    return [m for _, m in found if len(m.alias) >= MIN_ALIAS_CHARS]


def _free_matches(pattern: re.Pattern[str], text: str, claims: _Claims) -> Iterator[re.Match[str]]:
    """Matches over text no earlier rule has read, claimed as they are yielded."""
    for match in pattern.finditer(text):
        if claims.free(match.start(), match.end()):
            claims.take(match.start(), match.end())
            yield match


def _skip_urls(text: str, claims: _Claims) -> list[_Found]:
    # Trigger: a URL or e-mail address. Why: its pieces would read as paths, dotted
    # identifiers and handles ("example.com", "@example"). Outcome: claimed, no mention.
    for pattern, needs in ((_URL, "://"), (_EMAIL, "@")):
        if needs in text:
            for _ in _free_matches(pattern, text, claims):
                pass
    return []


def _backticked(text: str, claims: _Claims) -> list[_Found]:
    found: list[_Found] = []
    for match in _free_matches(_BACKTICK, text, claims):
        name = match.group(1).removesuffix("()")
        # Inside backticks the writer already said "this is a name": any slash or file
        # extension is enough to call it a path.
        is_path = "/" in name or name.startswith("~") or bool(_EXTENSION.search(name))
        kind = EntityKind.PATH if is_path else EntityKind.CODE
        found.append((match.start(1), _mention(name, kind)))
    return found


def _paths(text: str, claims: _Claims) -> list[_Found]:
    found: list[_Found] = []
    for match in _PATH.finditer(text):
        token = match.group().rstrip(".")
        start, end = match.start(), match.start() + len(token)
        if not _looks_like_path(token) or not claims.free(start, end):
            continue
        claims.take(start, end)
        found.append((start, _mention(token, EntityKind.PATH)))
        file_name = token.rsplit("/", 1)[-1]
        # Trigger: the path ends in a file name. Why: people and queries name a file
        # by its base name ("store.py") more often than by its full path. Outcome: the
        # base name is a second mention, right after the path.
        if _EXTENSION.search(file_name):
            found.append((start, _mention(file_name, EntityKind.PATH)))
    return found


def _looks_like_path(token: str) -> bool:
    """A slash-separated token is a path, not "and/or", "TCP/IP" or a date like 08/05/2023.

    It must start at a root (/, ~/, ./, ../), end with a slash, end in a file
    extension, or have at least three parts; and not every part may be a number.
    """
    parts = [p for p in token.split("/") if p not in ("", "~", ".", "..")]
    if not parts or all(_NUMERIC.match(p) for p in parts):
        return False
    rooted = token.startswith(("/", "~/", "./", "../"))
    return rooted or token.endswith("/") or bool(_EXTENSION.search(token)) or len(parts) >= 3


def _files(text: str, claims: _Claims) -> list[_Found]:
    return [
        (m.start(), _mention(m.group(), EntityKind.PATH))
        for m in _free_matches(_FILE, text, claims)
    ]


def _dotted(text: str, claims: _Claims) -> list[_Found]:
    found: list[_Found] = []
    for match in _DOTTED.finditer(text):
        # Trigger: every part is one letter. Why: that is an abbreviation ("e.g",
        # "i.e"), not a module path. Outcome: left for the word rules.
        if all(len(part) == 1 for part in match.group().split(".")):
            continue
        if claims.free(match.start(), match.end()):
            claims.take(match.start(), match.end())
            name = match.group().removesuffix("()")
            found.append((match.start(), _mention(name, EntityKind.CODE)))
    return found


def _handles(text: str, claims: _Claims) -> list[_Found]:
    return [
        (m.start(), _mention(m.group().rstrip("-"), EntityKind.HANDLE))
        for m in _free_matches(_HANDLE, text, claims)
    ]


def _words(text: str, claims: _Claims) -> list[_Found]:
    """Code-shaped words, and runs of capitalised words separated by one space."""
    found: list[_Found] = []
    run: list[re.Match[str]] = []
    # Only words with a capital or an underscore can be either; a word between two
    # of them shows as a longer gap, which ends a run just as reading it would.
    for match in _CANDIDATE.finditer(text):
        word = match.group()
        free = claims.free(match.start(), match.end())
        code = free and _is_code_word(word)
        name = free and not code and word[0].isupper()
        joins = bool(run) and text[run[-1].end() : match.start()] == " "
        if run and not (name and joins and not _POSSESSIVE.search(run[-1].group())):
            found.extend(_name_runs(text, run))
            run = []
        if code:
            found.append((match.start(), _mention(word, EntityKind.CODE)))
        elif name:
            run.append(match)
    found.extend(_name_runs(text, run))
    return found


@functools.lru_cache(maxsize=8192)
def _is_code_word(word: str) -> bool:
    """snake_case (any underscore) or CamelCase (an inner capital), made of word characters."""
    if not _IDENTIFIER.match(word) or not any(ch.isalpha() for ch in word):
        return False
    return "_" in word or bool(_CAMEL.search(word))


def _name_runs(text: str, run: list[re.Match[str]]) -> list[_Found]:
    """Split a run of capitalised words at stopwords; each piece is one name."""
    found: list[_Found] = []
    piece: list[re.Match[str]] = []
    for match in [*run, None]:
        stop = match is None or normalize_alias(_bare(match.group())) in STOPWORDS
        if stop and piece:
            # Trigger: one capitalised word opening a sentence. Why: that is as often an
            # ordinary word ("Painting is fun") as a name, and such words make up about
            # half the mentions of a realistic store. Outcome: not an entity; two or more
            # capitalised words ("Ada Lovelace fixed it") still are.
            if len(piece) > 1 or not _opens_sentence(text, piece[0].start()):
                name = " ".join(_bare(m.group()) for m in piece)
                found.append((piece[0].start(), _mention(name, EntityKind.PERSON_OR_NAME)))
            piece = []
        elif not stop and match is not None:
            piece.append(match)
    return found


def _opens_sentence(text: str, start: int) -> bool:
    """Whether a word at `start` begins the text, a line or a sentence (past any
    spaces, quotes, brackets and list bullets)."""
    before = text[max(0, start - _LOOK_BACK) : start].rstrip(_LEAD_INS)
    return not before or before[-1] in _SENTENCE_ENDS


def _bare(word: str) -> str:
    """The word without a possessive ending: "Ada's" -> "Ada"."""
    return _POSSESSIVE.sub("", word)


def _mention(name: str, kind: EntityKind) -> Mention:
    return Mention(name, kind, normalize_alias(name))


# The rules in order of precedence, each with a character every match contains.
_RULES: tuple[tuple[_Rule, str | None], ...] = (
    (_skip_urls, None),  # "://" or "@", checked inside
    (_backticked, "`"),
    (_paths, "/"),
    (_files, "."),
    (_dotted, "."),
    (_handles, "@"),
    (_words, None),
)
