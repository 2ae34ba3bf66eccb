"""Instruction-shaped text aimed at a model: the second half of the capture policy.

A memory is read back into a model's context, so a stored "ignore previous instructions"
is a prompt injection waiting to be recalled. A match tags the memory `injection-risk`
(passive reads never surface it) and names the families it matched:

- override: the model's instructions are to be ignored, or are void;
- role_hijack: the model is given another identity or a mode without rules;
- impersonation: a conversation turn or a header (`System:`, `<|im_start|>`, "Message
  from Anthropic") followed by orders to the model;
- fence_break: a closed delimiter (`</memlane-recall>`, "END OF CONTEXT") followed by
  orders to the model;
- addressed: a note to the model ("Note to AI agents:", "Assistant, ...") with orders;
- exfiltration: secrets, the conversation or the model's context sent somewhere;
- concealment: the user is not to know what the model does;
- memory_poisoning: the model's memory or standing rules are to be rewritten;
- tool_abuse: a harmful command, or a risky one pressed on the model;
- harmful_act: an act against the user ordered, not forbidden;
- likeness: no rule matched, but the learned model is sure.

Precision first: memories are full of imperatives aimed at engineers ("ignore the
flaky test", "delete the build folder", "act as the reviewer", "System: Ubuntu 22.04",
"send the report to finance@"). Each pattern needs the object of the act to be the
model's own instructions, identity, memory, user or secrets, or a header to be
followed by orders. Text is prepared first, so obfuscation does not hide it: zero-width
and Unicode tag characters, look-alike letters, letter-spaced words, HTML entities and
base64 blobs are undone. What is talked about is then blanked out: a sentence about
attacks (an incident review, a training note) and a quotation given as an example.
Phrasings are in write.injection_patterns and write.injection_lexicon, concepts in
write.injection_concepts, the learned model in write.injection_model.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import unicodedata

from memlane.write import injection_concepts as concepts
from memlane.write import injection_lexicon as lexicon
from memlane.write import injection_model
from memlane.write import injection_patterns as en
from memlane.write.literals import Pattern, checked

_FLAGS = re.IGNORECASE | re.MULTILINE
# Patterns written over several lines: the line breaks and their indentation go.
_CONTINUATION = re.compile(r"\n\s*")

# Families matched on their own, in English and in the lexicon's languages.
_SELF_EVIDENT: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("override", en.OVERRIDE + lexicon.OVERRIDE),
    ("role_hijack", en.ROLE_HIJACK + lexicon.ROLE_HIJACK),
    ("exfiltration", en.EXFILTRATION),
    ("concealment", en.CONCEALMENT + lexicon.CONCEALMENT),
    ("memory_poisoning", en.MEMORY_POISONING + lexicon.MEMORY_POISONING),
)
# Markers that are an attack only when orders to the model follow them.
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("impersonation", en.ROLE_MARKER),
    ("fence_break", en.FENCE_BREAK),
    ("addressed", (*en.ADDRESSED, lexicon.ADDRESSED)),
)
FAMILIES = (
    *(n for n, _ in _SELF_EVIDENT),
    *(n for n, _ in _MARKERS),
    "tool_abuse",
    "harmful_act",
    "likeness",
)


def _compile(patterns: tuple[str, ...]) -> Pattern:
    joined = "|".join(f"(?:{_CONTINUATION.sub('', p)})" for p in patterns)
    return _guarded(joined, _FLAGS)


# The rules' patterns search a text only where their literals occur (write.literals).
_guarded = concepts.guarded


_SELF = tuple((name, _compile(patterns)) for name, patterns in _SELF_EVIDENT)
_MARK = tuple((name, _compile(patterns)) for name, patterns in _MARKERS)
_SECRET_SHOWN = rf"{lexicon.PRINT}[^.\n]{{0,40}}?(?:{lexicon.SECRETS}|{en.SECRET_STUFF})"
_DIRECTIVE = _compile((*en.DIRECTIVE, *lexicon.DIRECTIVE, *en.HARM, *en.TOOL_ABUSE, _SECRET_SHOWN))
_HARM = _compile(en.HARM)
_HARM_ANY = _compile(lexicon.HARM)
_ADDRESSED = _compile((*en.ADDRESSED, lexicon.ADDRESSED))
# Where an act is said to the model: the start of a sentence or clause (an imperative),
# after a word that opens one ("please", "also", "then"), or after a name of the model.
_CLAUSE_START = re.compile(
    r"(?:(?:^|[.!?:;,>\n(\]]\s*)(?:(?:please|pls|plz|kindly|now|also|just|first|simply|immediately|quickly"
    r"|quietly|silently|p\.?s\.?)[,:]?\s+)?|\b(?:and|then|to)\s+)\W{0,2}$",
    re.IGNORECASE,
)
# An act forbidden, not ordered: "never disable branch protection".
_FORBIDDEN = _guarded(
    rf"(?:\b(?:never|not|no|don'?t|do\s+not|doesn'?t|mustn'?t|must\s+not|shouldn'?t|avoid|without"
    rf"|nobody|prohibited|forbidden|refuse[sd]?|won'?t|cannot|can'?t)\b|{lexicon.NEGATION})[^.;\n]{{0,40}}$",
    re.IGNORECASE,
)
# A prohibition said after the act ("git push --force to main is forbidden").
_FORBIDDEN_AFTER = _guarded(
    r"[^.;\n]{0,60}?\b(?:is|are|stays?|remains?)\s+(?:strictly\s+)?(?:forbidden|prohibited"
    r"|banned|not\s+allowed|never\s+allowed|disallowed|off[- ]limits)\b",
    re.IGNORECASE,
)
# Verbs an imperative sentence opens with: a sentence that begins with one orders.
_IMPERATIVE = _guarded(
    r"(?:^|[.!?;\n][ \t]*+)(?:(?:please|pls|plz|kindly|now|also|just|first|then|quickly|quietly|silently|urgent\w*"
    r"|important|p\.?s\.?)[:,!]?\s+)*(?:run|use|add|delete|remove|open|set|change|disable|merge|approve|push"
    r"|install|post|send|transfer|comment|mark|drop|grant|make|create|write|update|replace|put|copy|move|edit"
    r"|modify|execute|call|fetch|download|upload|include|append|enable|turn|skip|tell|say|report|answer"
    r"|respond|give|share|paste|store|save|remember|keep|hide|leave|squash|force|switch|configure|expose"
    r"|invite|pay|wire|reply|rewrite|overwrite|commit|chmod|curl|wget|rm)\b[^.!?;\n]*$",
    re.IGNORECASE,
)

_VENDOR_HEADER = _guarded(
    rf"{lexicon.VENDOR}[^\n]{{0,40}}(?:team|équipe|equipo|команд|团队|チーム|팀|فريق|टीम)|(?:team|équipe|equipo|команд\w*|团队|チーム|팀|فريق|टीम)[^\n]{{0,40}}{lexicon.VENDOR}",
    re.IGNORECASE,
)
_TOOL = _compile(en.TOOL_ABUSE)
# A harmful command needs no pressing: nobody stores it to run it in good faith.
_HARMFUL = _compile(
    (
        r"\brm\s+-(?:rf|fr)\s+(?:--no-preserve-root\s+)?(?:/|~/?|\$HOME)(?:\s|$)",
        r"--no-preserve-root",
        r"\bchmod\s+(?:-R\s+)?777\s+/(?:\s|$)",
        r"\b(?:@reboot|crontab)\b[^\n]{0,80}\b(?:curl|wget)\b",
        r"\bcore\.hooksPath\s+/tmp",
        r"(?:>>?|tee\s+-a)[ \t]*[~\w./$-]{0,80}authorized_keys|authorized_keys\b[^\n]{0,60}\bhttps?://",
        r"\bmkfs\.|\bdd\s+if=/dev/(?:zero|random)\s+of=/dev/",
    )
)
# What presses a risky command on the model: urgency, claimed consent, no questions.
_PRESSURE = _compile(
    (
        r"\bwithout\s+(?:asking|confirmation|confirming|prompting|review|telling|permission|waiting)",
        lexicon.ACTS,
        r"\burgent(?:ly)?\b|\basap\b",
        r"\b(?:ai\s+)?(?:agents?|assistants?|models?)\s+(?:should|must|need\s+to|are\s+to|is\s+to)\b",
        lexicon.NOW,
        r"\b(?:the\s+)?user\s+(?:has\s+)?(?:already\s+)?(?:approved|agreed|authori[sz]ed|consented|okayed)",
        r"\bpre-?approved\b|\bright\s+now\b|\bimmediately\b|\bquietly\b|\bsilently\b|\bno\s+questions\b",
        r"\bbefore\s+(?:you\s+)?(?:continu\w+|doing\s+anything|answering|making\s+any|editing\s+anything)",
        r"\bgo\s+ahead\b|\bdo\s+it\s+(?:now|as\s+part|before)|\bdon'?t\s+ask\b|\bit'?s\s+urgent\b",
        r"\b(?:agent|assistant|ai|model)\s*[:,]",
        r"\b(?:when(?:ever)?\s+you\s+(?:next\s+)?(?:see|open|read|edit|run|work|start)|next\s+time\s+you)\b",
        lexicon.CONSENT,
        r"\bas\s+part\s+of\s+your\s+next\b|\bin\s+your\s+next\s+edit\b",
        lexicon.ACTS,
    )
)
_WINDOW = 400  # characters after a marker in which orders to the model count
# Data sent out, in any language and word order: a verb of sending, something secret
# and a place outside, in one line (`.env ... https://... に送信`, "envía ... .env a https://").
_SEND = _compile((lexicon.SEND, r"\b(?:send|post|upload|e-?mail|transmit|forward|exfiltrate)\b"))
_SECRET = _compile((en.SECRET_STUFF, lexicon.SECRETS))
_OUTSIDE = _compile(
    (r"https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+|webhook|pastebin|gist", lexicon.NEXT_REPLY)
)
_LINE = 400  # the longest stretch of one line searched for the three together

# ---- preparing the text ----------------------------------------------------------------------

# Invisible characters that split words for a reader but not for a model.
_INVISIBLE = dict.fromkeys(
    [*range(0x200B, 0x2010), *range(0x2060, 0x2065), 0xFEFF, 0x00AD, 0x180E, 0x034F], None
)
# Letters of other scripts that look like Latin ones (in words that mix scripts).
_CONFUSABLE = str.maketrans(
    "аеорсухіјѕԁԛԝАВЕКМНОРСТХІЈЅαοτνρκιΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
    "aeopcyxijsdqwABEKMHOPCTXIJSaotvpkiABEHIKMNOPTXYZ",
)
_WORDS = re.compile(r"\w+")
_LATIN = re.compile(r"[A-Za-z]")
# Words written letter by letter: "I G N O R E   A L L".
_SPACED = re.compile(r"(?<!\w)(?:\w[ .]){3,}\w(?!\w)")
_EMPHASIS = str.maketrans({"\u2019": "'", "\u02bc": "'", "*": " ", "`": " ", "~": " ", "\\": " "})
# Runs of blanks other than line breaks: each run but a lone space (one already) becomes
# one space.
_BLANKS = re.compile(r"[^\S\n]{2,}|[^\S\n ]")
_ROT13 = checked(re.compile(r"\brot-?13\b", re.IGNORECASE))
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")


_TAGS = "\U000e0000"  # the first tag character: a text with none as high holds none


def _untag(text: str) -> str:
    """Unicode tag characters (U+E0000 block) spell ASCII a reader never sees."""
    return "".join(
        chr(ord(c) - 0xE0000) if 0xE0020 <= ord(c) <= 0xE007E else c
        for c in text
        if not 0xE0000 <= ord(c) <= 0xE001F
    )


def _unmix(match: re.Match[str]) -> str:
    """A word mixing Latin letters with look-alikes of other scripts, in Latin."""
    word = match[0]
    if word.isascii() or not _LATIN.search(word):
        return word
    return word.translate(_CONFUSABLE)


# A code fence line keeps a fence's shape when backticks and tildes go.
_FENCE = checked(re.compile(r"(?m)^([ \t]*)(?:`{3,}|~{3,})[^\n`]*$"))
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Fa-f])")


def _decoded_blobs(text: str) -> list[str]:
    """The text that base64 or hex blobs in `text` encode (a hidden instruction to decode)."""
    out = []
    for match in _HEX.finditer(text):
        raw = bytes.fromhex(match[0])
        if sum(32 <= b < 127 for b in raw) / len(raw) > 0.95:
            out.append(raw.decode("ascii", "replace"))
    for match in _BASE64.finditer(text):
        token = match[0].rstrip("=")
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_")
        except (binascii.Error, ValueError):
            continue
        if raw and sum(32 <= b < 127 or b in (9, 10) for b in raw) / len(raw) > 0.95:
            out.append(raw.decode("ascii", "replace"))
    return out


def prepare(text: str) -> str:
    """The text as the patterns read it: visible, one script per word, spaced words
    joined, one space between words, lines kept; base64 it holds decoded below it."""
    if not text.isascii() and max(text) >= _TAGS:
        text = _untag(text)
    text = unicodedata.normalize("NFKC", html.unescape(text))
    if not text.isascii():  # what goes and what is undone is beyond ASCII
        text = _WORDS.sub(_unmix, text.translate(_INVISIBLE))
    text = _SPACED.sub(lambda m: m[0].replace(" ", "").replace(".", ""), text)
    text = _BLANKS.sub(" ", _FENCE.sub(r'\1"""', text).translate(_EMPHASIS))
    blobs = _decoded_blobs(text) if len(text) >= 24 else []
    if _ROT13.search(text):
        blobs.append(codecs.decode(text, "rot13"))
    # "read it right to left" (said forwards, or itself written backwards): the text
    # reversed, line by line
    if _BACKWARDS.search(text) or _BACKWARDS.search(text[::-1]):
        blobs.append("\n".join(line[::-1] for line in text.split("\n")))
    if len(_LEET.findall(text)) >= LEET_WORDS:
        blobs.append(_LEET.sub(lambda m: m[0].translate(_UNLEET), text))
    return "\n".join([text, *blobs])


_BACKWARDS = checked(
    re.compile(r"\b(?:backwards?|right\s+to\s+left|reversed?|in\s+reverse)\b", re.IGNORECASE)
)
# Words that mix digits into letters as look-alikes: "1gn0r3 4ll pr3v10us".
_LEET = checked(re.compile(r"\b(?=\w*[a-z])(?=\w*[013457])[a-z013457@$]{3,}\b", re.IGNORECASE))
_UNLEET = str.maketrans("013457@$", "oieastas")
LEET_WORDS = 4  # words written so, in one text, before it is read back in letters


# ---- deciding ---------------------------------------------------------------------------------


# A quotation: opened after a space or bracket, closed before one; or in the brackets
# other scripts quote with, anywhere. It is at most QUOTE_CHARS long: an opening mark
# with no closing one costs no more than that to give up on.
QUOTE_CHARS = 600
_Q = f"{{1,{QUOTE_CHARS}}}"
_QUOTED = re.compile(
    rf"""(?:^|(?<=[\s(\[:]))['"“‘«„‚](?=\S)[^\n]{_Q}?(?<=\S)['"”’»“‘](?=$|[\s.,;:!?)\]])"""
    rf"|「[^」\n]{_Q}」|『[^』\n]{_Q}』|“[^”\n]{_Q}”|«[^»\n]{_Q}»"
    rf"|(?<=[\s(])\([^()\n]{{6,{QUOTE_CHARS}}}\)",
    re.M,
)
# Words that introduce a quotation as something talked about, not said to the model.
_MENTION = _guarded(
    r"\b(?:phrases?|sentences?|payloads?|strings?|text|words?|style|like|such\s+as|e\.g\.|says?|said"
    r"|contain(?:s|ed|ing)?|reads?|called|named|patterns?|examples?|jailbreaks?|injections?|attacks?"
    r"|prompts?|lines?|messages?|quotes?|snippets?|signals?|wording|tries|try|meaning|means|saying"
    r"|decía|dice|disait|dit|sagte|sagt|diceva|dizia|diz|zei|zegt|mówił\w*|говорил\w*|сказано|dedi|diyor"
    r"|asks?(?:\s+(?:you|us|them))?(?:\s+to)?|asking|requests?|pide|demande|bittet|chiede|pede|vraagt|prosi"
    r"|прос\w+|попрос\w+|ister|要求|依頼|요청"
    r"|说|写着|に)\W{0,4}$|['\"”’»]\s*$",
    re.IGNORECASE,
)


# ... or named right after it: "an 'ignore previous instructions' payload".
_NAMED = _guarded(
    r"\W{0,3}(?:(?:is|was|are|were)\s+(?:a|an|the)?\s*(?:[\w-]+\s+){0,2}?)?(?:payloads?|phrases?|attacks?|strings?"
    r"|jailbreaks?|injections?|prompts?|patterns?|examples?|trick|style|text|sentence)\b|と書かれ|という|と言う|라는|라고",
    re.IGNORECASE,
)


def _talked_of(prepared: str, quote: re.Match[str]) -> bool:
    """Whether a word before or after the quotation names it as a thing talked about."""
    line_start = prepared.rfind("\n", 0, quote.start()) + 1
    before = _MENTION.search(prepared, max(line_start, quote.start() - 60), quote.start())
    return before is not None or _NAMED.match(prepared, quote.end()) is not None


def _ordered_after(prepared: str, pattern: Pattern) -> bool:
    """Whether some match of `pattern` is followed, within the window, by orders.

    A window is searched once: a marker inside the last window searched adds only
    the text past it (a text of repeated markers stays linear)."""
    searched = 0
    for match in pattern.finditer(prepared):
        start, end = max(match.end(), searched), match.end() + _WINDOW
        if start >= end:
            continue
        if _DIRECTIVE.search(prepared, max(match.end(), searched - 80), end):
            return True
        searched = end
    return False


def _ordered(prepared: str) -> bool:
    """Whether an act against the user is said to the model: as an imperative, in a
    note addressed to it, or with pressure on it; and not forbidden."""
    addressed = _ADDRESSED.search(prepared) is not None
    for match in _HARM_ANY.finditer(prepared):  # said in another language: no grammar to read
        if not _forbidden(prepared, match):
            return True
    for match in _HARM.finditer(prepared):
        line_start = prepared.rfind("\n", 0, match.start()) + 1
        before = prepared[max(line_start, match.start() - 60) : match.start()]
        if _forbidden(prepared, match):
            continue
        sentence = prepared[max(line_start, match.start() - 200) : match.start()]
        if addressed or _CLAUSE_START.search(before) or _IMPERATIVE.search(sentence):
            return True
    return False


def _forbidden(prepared: str, match: re.Match[str]) -> bool:
    """Whether the act is forbidden where it is said: a negation before it on its line
    ("never", "no force-push"), or a prohibition after it ("... is forbidden")."""
    line_start = prepared.rfind("\n", 0, match.start()) + 1
    before = prepared[max(line_start, match.start() - 60) : match.start()]
    return bool(_FORBIDDEN.search(before) or _FORBIDDEN_AFTER.match(prepared, match.end()))


def _sent_out(prepared: str) -> bool:
    for line in prepared.split("\n"):
        for start in range(0, max(len(line), 1), _LINE // 2):
            part = line[start : start + _LINE]
            if _SEND.search(part) and _SECRET.search(part) and _OUTSIDE.search(part):
                return True
    return False


def injection_signals(text: str) -> list[str]:
    """The families of model-directed instructions found in the text; [] when benign
    (see `_signals`).

    Trigger: a text of at most REMEMBERED_CHARS. Why: the same titles, tags and
    texts are read by the capture policy and again at the store's door
    (write.screen). Outcome: the families found are remembered (the last
    REMEMBERED_TEXTS such texts)."""
    if len(text) <= REMEMBERED_CHARS:
        return list(_remembered(text))
    return _signals(text)


# Texts this short have their findings remembered; this many of them (at most a few
# megabytes held).
REMEMBERED_CHARS = 2_048
REMEMBERED_TEXTS = 2_048


def forget_remembered() -> None:
    """Forget the remembered families found (a benchmark times the screen afresh)."""
    _remembered.cache_clear()


@functools.lru_cache(maxsize=REMEMBERED_TEXTS)
def _remembered(text: str) -> tuple[str, ...]:
    return tuple(_signals(text))


def _signals(text: str) -> list[str]:
    """The families of model-directed instructions found in the text; [] when benign.

    The rules decide, with the learned model (write.injection_model) as a second
    opinion both ways: a text it scores as surely benign is benign whatever rules
    matched, and a text it scores as surely an injection is one (family `likeness`)
    though no rule matched."""
    prepared = prepare(text)
    model = injection_model.shipped()
    if model is None:
        return ruled(prepared)
    # Trigger: a score below the veto. Why: `decide` gives [] then, whatever the
    # rules find. Outcome: the rules are not read.
    if model.below_veto(prepared):
        return []
    return decide(ruled(prepared), model.score(prepared), model, len(prepared.split()))


# A text this short gives the learned model too few n-grams to judge it alone: a title
# such as "History" scores high on one word that attacks use ("conversation history").
MODEL_MIN_WORDS = 6


def decide(found: list[str], score: float, model: injection_model.Model, words: int) -> list[str]:
    """The rules' families, weighed against the model's score on a text of `words` words."""
    if found:
        return found if score >= model.veto else []
    return ["likeness"] if score >= model.threshold and words >= MODEL_MIN_WORDS else []


def ruled(prepared: str) -> list[str]:
    """The families the rules find in a prepared text."""
    with concepts.SIEVE.over(prepared):
        return _ruled(prepared)


def _ruled(prepared: str) -> list[str]:
    said = _unquoted(prepared)
    found = [n for n, pattern in _SELF if any(_meant(said, m, n) for m in pattern.finditer(said))]
    if "exfiltration" not in found and _sent_out(said):
        found.append("exfiltration")
    found += [name for name, pattern in _MARK if _ordered_after(said, pattern)]
    if _HARMFUL.search(said) or (_TOOL.search(said) and _PRESSURE.search(said)):
        found.append("tool_abuse")
    elif _ordered(said):
        found.append("harmful_act")
    if (
        "impersonation" not in found
        and _VENDOR_HEADER.search(said)
        and _ordered_after(said, _VENDOR_HEADER)
    ):
        found.append("impersonation")
    markers = tuple(m.end() for name, pattern in _MARK[:2] for m in pattern.finditer(said))
    for family, _start, _end in concepts.families(said, markers, prepared):
        if family not in found:
            found.append(family)
    return found


# What narrows a voiding verb's object to a topic: "ignore the previous instructions
# about the /v2 endpoint" corrects a request, it does not void the model's rules.
_TOPICAL = _guarded(
    r"\s+(?:about|regarding|concerning|on|for)\s+(?:the|this|that|my|our|how)\s+"
    r"(?!(?:rules?|safety|system|model|assistant|ai|policy|policies|guidelines)\b)",
    re.IGNORECASE,
)


def _meant(said: str, match: re.Match[str], family: str) -> bool:
    """Whether a phrasing is said as an order: not forbidden ("never paste secrets
    into ..."), and an override not narrowed to a topic."""
    line_start = said.rfind("\n", 0, match.start()) + 1
    if concepts.forbidden(
        said[max(line_start, match.start() - concepts.FORBID_REACH) : match.start()]
    ):
        return False
    return family != "override" or _TOPICAL.match(said, match.end()) is None


def _unquoted(prepared: str) -> str:
    """The text as said, not talked about, blanked out where it is talked about (same
    length): each sentence about attacks; every quotation of a text that writes about
    attacks or gives examples, else the quotations a word before or after names as a
    thing talked about; the comments and hidden text of a write-up about attacks."""
    blank: list[tuple[int, int]] = []
    quotes = list(_QUOTED.finditer(prepared))
    bare = _QUOTED.sub(" ", prepared) if quotes else prepared
    talks = concepts.TALK.search(bare) is not None
    if quotes:
        talk = talks or concepts.EXAMPLE.search(bare)
        blank += [q.span() for q in quotes if talk or _talked_of(prepared, q)]
    if talks:  # a write-up about attacks shows them in comments and hidden text too
        blank += [m.span() for m in concepts.UNSEEN.finditer(prepared)]
    chars = list(prepared)
    for start, end in blank:
        chars[start:end] = " " * (end - start)
    bare = _ADDRESSES.sub(lambda m: " " * len(m[0]), "".join(chars))
    for start, end in concepts.sentences(bare):
        if concepts.TALK.search(bare, start, end):
            chars[start:end] = " " * (end - start)
    return "".join(chars)


# URLs, host names and email addresses: "attacker.example" names no attack.
_ADDRESSES = re.compile(
    r"https?://\S*[^\s.,;:!?)\]'\"]|(?<![^\s@])[^\s@]++@[\w.-]*\w|(?<![\w.-])(?:[\w-]++\.)++[a-z]{2,}\b",
    re.IGNORECASE,
)


def is_injection(text: str) -> bool:
    """Whether the text carries any instruction aimed at a model (tag `injection-risk`)."""
    return bool(injection_signals(text))
